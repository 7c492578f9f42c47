-- urldedupd keyed layout: decide one URL on one shard key, atomically.
-- KEYS[1] the shard; ARGV[1], ARGV[2] byte offsets of buckets b1, b2;
-- ARGV[3] the fingerprint, 4 bytes little-endian (never zero or all ones);
-- ARGV[4] "1" for a dry run, "f" to forget. Returns 0 new (stored unless
-- dry), 1 dup, 2 new but not stored (both buckets full); to forget, 1 when
-- the fingerprint was there (its slot now all ones, Forgotten) and 0 when
-- not. Bytes past the end of the string are zero.
local key, fp, dry, forget = KEYS[1], ARGV[3], ARGV[4] == "1", ARGV[4] == "f"
local zero = "\0\0\0\0"
for b = 1, 2 do
  local off = tonumber(ARGV[b])
  local s = redis.call("GETRANGE", key, off, off + 63)
  for i = 0, 15 do
    local v = string.sub(s, i * 4 + 1, i * 4 + 4)
    if #v < 4 then v = v .. string.rep("\0", 4 - #v) end
    if v == fp then
      if forget then redis.call("SETRANGE", key, off + i * 4, "\255\255\255\255") end
      return 1
    end
    if v == zero and forget then return 0 end
    if v == zero then
      if not dry then redis.call("SETRANGE", key, off + i * 4, fp) end
      return 0
    end
  end
end
if forget then return 0 end
return 2
