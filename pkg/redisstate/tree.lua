-- Decides URLs on one DSBF leaf, atomically (Redis runs a script alone,
-- and the leaf is one key, so Redis Cluster routes it to one node).
-- KEYS[1]: the leaf: bytes 0-7 nonzero once split, bytes 8-15 the URLs
-- stored (big-endian), then the filter bits, least significant first
-- within each byte, as in a state directory's shard.
-- ARGV: k, limit, can-split (0/1), then for each URL the Redis bit
-- offsets (most significant bit first) of its k bits, as the client
-- computes them: 64-bit hashes are beyond Lua's numbers.
-- Answers, one per URL: 0 new, 1 present, 2 not decided: the leaf has
-- split (before this URL), so the client queries it and goes on down.
local k = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local canSplit = ARGV[3] == '1'
local n = (#ARGV - 3) / k

local head = redis.call('GETRANGE', KEYS[1], 0, 15)
local split, count = false, 0
for i = 1, math.min(#head, 8) do
  if string.byte(head, i) ~= 0 then split = true end
end
for i = 9, math.min(#head, 16) do
  count = count * 256 + string.byte(head, i)
end
local wasSplit, count0 = split, count

-- per: the URLs of one BITFIELD call, under Lua's limit on unpack.
local per = math.max(1, math.floor(7000 / (4 * k)))
local out = {}
local j = 1
-- A chunk at a time, no chunk taking the count past the limit (each URL
-- adds at most one).
while not split and j <= n do
  local c = math.min(n - j + 1, per)
  if canSplit then c = math.min(c, limit - count) end
  if c < 1 then c = 1 end
  local args = {}
  local a = 0
  for i = 4 + (j - 1) * k, 3 + (j + c - 1) * k do
    args[a + 1], args[a + 2], args[a + 3], args[a + 4] = 'SET', 'u1', ARGV[i], '1'
    a = a + 4
  end
  local r = redis.call('BITFIELD', KEYS[1], unpack(args))
  for u = 0, c - 1 do
    local seen = 1
    for t = u * k + 1, u * k + k do
      if r[t] == 0 then
        seen = 0
        break
      end
    end
    out[j + u] = seen
    count = count + 1 - seen
  end
  j = j + c
  if canSplit and count >= limit then split = true end
end
for u = j, n do out[u] = 2 end

if count ~= count0 then
  local b = {}
  local v = count
  for i = 8, 1, -1 do
    b[i] = string.char(v % 256)
    v = math.floor(v / 256)
  end
  redis.call('SETRANGE', KEYS[1], 8, table.concat(b))
end
if split and not wasSplit then
  redis.call('SETRANGE', KEYS[1], 7, '\1')
end
return out
