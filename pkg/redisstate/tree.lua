-- Decides URLs on one DSBF leaf, atomically (Redis runs a script alone,
-- and the leaf is one key, so Redis Cluster routes it to one node).
-- KEYS[1]: the leaf: bytes 0-7 nonzero once split, bytes 8-15 the URLs
-- stored (big-endian), then the filter bits, least significant first
-- within each byte, as in a state directory's shard.
-- ARGV: dry (0/1), k, limit, can-split (0/1), then the k positions of each
-- URL in the filter (0 ≤ p < its bits; computed by the client, as 64-bit
-- hashes are beyond Lua's numbers). Answers, one per URL: 0 new (or, dry, absent), 1 present,
-- 2 the leaf has split and the URL is not in it: go on to the child.
local dry = ARGV[1] == '1'
local k = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local canSplit = ARGV[4] == '1'
local n = (#ARGV - 4) / k

local head = redis.call('GETRANGE', KEYS[1], 0, 15)
local split, count = false, 0
for i = 1, math.min(#head, 8) do
  if string.byte(head, i) ~= 0 then split = true end
end
for i = 9, math.min(#head, 16) do
  count = count * 256 + string.byte(head, i)
end

-- off is Redis's offset (most significant bit first) of filter bit p.
local function off(p)
  local b = 512 + p
  local r = b % 8
  return b - r + 7 - r
end

-- add appends the BITFIELD arguments of URL j's positions.
local function add(args, op, j)
  local first = 4 + (j - 1) * k
  for t = 1, k do
    local a = #args
    args[a + 1], args[a + 2], args[a + 3] = op, 'u1', off(tonumber(ARGV[first + t]))
    if op == 'SET' then args[a + 4] = 1 end
  end
end

-- per: the URLs of one BITFIELD call, under Lua's limit on unpack.
local per = math.max(1, math.floor(6000 / (4 * k)))
local out = {}
local j = 1
local wasSplit, count0 = split, count

-- A live leaf: test and set, a chunk at a time, no chunk taking the count
-- past the limit (each URL adds at most one).
while not dry and not split and j <= n do
  local c = math.min(n - j + 1, per)
  if canSplit then c = math.min(c, limit - count) end
  if c < 1 then c = 1 end
  local args = {}
  for u = j, j + c - 1 do add(args, 'SET', u) end
  local r = redis.call('BITFIELD', KEYS[1], unpack(args))
  for u = 0, c - 1 do
    local seen = 1
    for t = 1, k do
      if r[u * k + t] == 0 then seen = 0 end
    end
    out[j + u] = seen
    if seen == 0 then count = count + 1 end
  end
  j = j + c
  if canSplit and count >= limit then split = true end
end
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

-- The rest: queries, on a split leaf (go on down when absent) or a dry run.
while j <= n do
  local c = math.min(n - j + 1, per)
  local args = {}
  for u = j, j + c - 1 do add(args, 'GET', u) end
  local r = redis.call('BITFIELD_RO', KEYS[1], unpack(args))
  for u = 0, c - 1 do
    local seen = 1
    for t = 1, k do
      if r[u * k + t] == 0 then seen = 0 end
    end
    if seen == 0 and split then seen = 2 end
    out[j + u] = seen
  end
  j = j + c
end
return out
