-- urldedupd dsbf layout: decide URLs at one live leaf, atomically, as a
-- state directory's leaf does under its batch lock.
-- KEYS[1] the leaf. ARGV[1] the URLs at which it splits (0: it cannot
-- split, and its flag is ignored); ARGV[2] k; ARGV[3…] each URL's k bit
-- offsets (Redis's numbering), URL after URL.
-- Returns {count, split, a1, …, an}: the leaf's count and split flag after
-- the call, and per URL 0 = held (a duplicate), 1 = stored (new), 2 = not
-- held by a split leaf (to be decided in its child).
-- The count and the flag are read and written here, with the bits, so the
-- leaf's bound holds whatever the number of writers.
local key = KEYS[1]
local limit, k = tonumber(ARGV[1]), tonumber(ARGV[2])
local h = redis.call("BITFIELD", key, "GET", "u8", 56, "GET", "u63", 65)
local split, count = limit > 0 and h[1] ~= 0, h[2]
-- bits per BITFIELD: its arguments (3 a GET, 4 a SET) stay under the
-- 8000 values Lua unpacks
local chunk = 1500
local bits = {}
local i = 3
while i <= #ARGV do
  local last = math.min(i + chunk - 1, #ARGV)
  local args = {}
  for j = i, last do
    args[#args + 1] = "GET"
    args[#args + 1] = "u1"
    args[#args + 1] = ARGV[j]
  end
  local got = redis.call("BITFIELD_RO", key, unpack(args))
  for j = i, last do bits[j] = got[j - i + 1] end
  i = last + 1
end
local set, sets = {}, {}
local out = {0, 0}
local stored, flagged = 0, false
for base = 3, #ARGV, k do
  local held = true
  for j = base, base + k - 1 do
    if bits[j] == 0 and not set[ARGV[j]] then held = false break end
  end
  if held then
    out[#out + 1] = 0
  elseif split then
    out[#out + 1] = 2
  else
    for j = base, base + k - 1 do
      if bits[j] == 0 and not set[ARGV[j]] then
        set[ARGV[j]] = true
        sets[#sets + 1] = ARGV[j]
      end
    end
    count = count + 1
    stored = stored + 1
    out[#out + 1] = 1
    if limit > 0 and count >= limit then
      split, flagged = true, true -- after its last URL: the rest go on down
    end
  end
end
i = 1
while i <= #sets do
  local last = math.min(i + chunk - 1, #sets)
  local args = {}
  for j = i, last do
    args[#args + 1] = "SET"
    args[#args + 1] = "u1"
    args[#args + 1] = sets[j]
    args[#args + 1] = 1
  end
  redis.call("BITFIELD", key, unpack(args))
  i = last + 1
end
if stored > 0 then
  if flagged then
    redis.call("BITFIELD", key, "SET", "u63", 65, string.format("%d", count), "SET", "u8", 56, 1)
  else
    redis.call("BITFIELD", key, "SET", "u63", 65, string.format("%d", count))
  end
end
out[1] = count
out[2] = split and 1 or 0
return out
