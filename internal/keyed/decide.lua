-- urldedupd keyed layout: decide one URL on one shard key, atomically.
-- KEYS[1] the shard; ARGV[1], ARGV[2] byte offsets of buckets b1, b2;
-- ARGV[3] the fingerprint, 4 bytes little-endian (never zero); ARGV[4] "1"
-- for a dry run. Returns 0 new (stored unless dry), 1 dup, 2 new but not
-- stored (both buckets full). Bytes past the end of the string are zero.
local key, fp, dry = KEYS[1], ARGV[3], ARGV[4] == "1"
local zero = "\0\0\0\0"
for b = 1, 2 do
  local off = tonumber(ARGV[b])
  local s = redis.call("GETRANGE", key, off, off + 63)
  for i = 0, 15 do
    local v = string.sub(s, i * 4 + 1, i * 4 + 4)
    if #v < 4 then v = v .. string.rep("\0", 4 - #v) end
    if v == fp then return 1 end
    if v == zero then
      if not dry then redis.call("SETRANGE", key, off + i * 4, fp) end
      return 0
    end
  end
end
return 2
