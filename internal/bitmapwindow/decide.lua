-- urldedupd windowed bitmap layout: decide or check one signature on one
-- shard key, atomically (Redis runs a script alone: it is the lock). The
-- key holds the shard's bytes: a 4 KiB header (W, then the generation + 1
-- that each bitmap of the ring holds: little-endian int64s at 0, 8, 16…),
-- then G + 1 bitmaps of 2 MiB. Same rules as Table.
-- KEYS[1] the shard. ARGV: [1] the signature's bit in the shard; [2] the
-- client's clock generation; [3] G; [4] 1 first-seen, 2 last-seen;
-- [5] "d" decide, "c" check.
-- Returns generation*4 + answer: 1 duplicate (held), 0 new (not held).
local key = KEYS[1]
local b, gen, G, policy, mode = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local HEADER, BITMAP, R = 4096, 2097152, G + 1

local function int(s, at)
  local v = 0
  for i = 7, 0, -1 do
    local c = string.byte(s, at + i) or 0
    if i == 7 and c >= 128 then return -1 end
    v = v * 256 + c
  end
  return v
end
-- zeros returns n zero bytes. string.rep and luaL_Buffer copy a byte at
-- a time: string.rep("\0", 2 MiB) kept the server busy 18 ms (and every
-- client waiting) at each rotation of a shard; 32 pieces of 64 KiB, made
-- by doubling and joined by table.concat, take 5 ms.
local function zeros(n)
  local piece = "\0"
  while #piece < 65536 do piece = piece .. piece end
  local t = {}
  for i = 1, math.floor(n / 65536) do t[i] = piece end
  t[#t + 1] = string.sub(piece, 1, n % 65536)
  return table.concat(t)
end
local function bytes8(v)
  local t = {}
  for i = 1, 8 do t[i] = string.char(v % 256); v = math.floor(v / 256) end
  return table.concat(t)
end

local head = redis.call("GETRANGE", key, 0, 8 + 8 * R - 1)
local W = math.max(int(head, 1), 0)
local marks = {}
for r = 0, R - 1 do marks[r] = int(head, 9 + 8 * r) end
local cur = math.max(W, gen)
local function offset(h) return (HEADER + (h % R) * BITMAP) * 8 + b end
local function live(h) return h >= 0 and marks[h % R] == h + 1 end

if mode == "c" then
  for h = cur, cur - G + 1, -1 do
    if live(h) and redis.call("GETBIT", key, offset(h)) == 1 then return cur * 4 + 1 end
  end
  return cur * 4 + 0
end

local r = cur % R
if marks[r] ~= cur + 1 then
  -- bytes past the end of the string read as zeros: zero only what exists
  local have = redis.call("STRLEN", key) - (HEADER + r * BITMAP)
  if have > 0 then
    redis.call("SETRANGE", key, HEADER + r * BITMAP, zeros(math.min(have, BITMAP)))
  end
  marks[r] = cur + 1
  redis.call("SETRANGE", key, 8 + 8 * r, bytes8(cur + 1))
end
if cur ~= W then redis.call("SETRANGE", key, 0, bytes8(cur)) end

for h = cur - 1, cur - G + 1, -1 do
  if live(h) and redis.call("GETBIT", key, offset(h)) == 1 then
    if policy == 2 then redis.call("SETBIT", key, offset(cur), 1) end
    return cur * 4 + 1
  end
end
return cur * 4 + redis.call("SETBIT", key, offset(cur), 1)
