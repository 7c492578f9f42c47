-- urldedupd windowed keyed layout: decide, check or forget one URL on one
-- shard key, atomically (Redis runs a script alone: it is the lock).
-- The key holds the shard's bytes: a 64-byte header (W, the sweep's pass
-- start and cursor: little-endian int64s at 0, 8, 16), then buckets of
-- sixteen 32-bit little-endian slots, each fingerprint*64 + tag. Bytes past
-- the end of the string are zero. Same rules as package window.
-- KEYS[1] the shard. ARGV: [1] [2] byte offsets of buckets b1, b2;
-- [3] the 26-bit fingerprint; [4] the client's clock generation; [5] G;
-- [6] 1 first-seen, 2 last-seen; [7] "d" decide, "c" check, "f" forget;
-- [8] buckets in the shard; [9] the sweep's horizon; [10] the longest
-- pause that needs no whole sweep.
-- Returns generation*4 + answer, the generation the shard was decided at
-- and the answer: 0 new, 1 dup, 2 new but not stored (decide); 1 held, 0
-- not (check); 1 was held, 0 not (forget).
local key = KEYS[1]
local b1, b2, fp = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local gen, G, policy, mode = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local total, horizon, jump = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local HEADER, TAGS = 64, 64

local function int(s, at) -- little-endian, 53 bits are plenty for generations
  local v = 0
  for i = 7, 0, -1 do
    local b = string.byte(s, at + i) or 0
    if i == 7 and b >= 128 then return -1 end
    v = v * 256 + b
  end
  return v
end
local function bytes8(v)
  local t = {}
  for i = 1, 8 do t[i] = string.char(v % 256); v = math.floor(v / 256) end
  return table.concat(t)
end
local function slot(s, i) -- slot i (0-based) of string s
  local a, b, c, d = string.byte(s, i * 4 + 1, i * 4 + 4)
  return (a or 0) + (b or 0) * 256 + (c or 0) * 65536 + (d or 0) * 16777216
end
local function bytes4(v)
  return string.char(v % 256, math.floor(v / 256) % 256, math.floor(v / 65536) % 256, math.floor(v / 16777216) % 256)
end
local function tag(g) return g % TAGS end
-- age of slot v at cur, counted at w (window.Spec.SlotLiveFrom)
local DEAD = 1 -- a swept or forgotten slot: not empty, no fingerprint
local function live(v, w, cur)
  if v < TAGS then return false end -- empty or dead
  return (tag(w) - v % TAGS) % TAGS + (cur - w) < G
end

local head = redis.call("GETRANGE", key, 0, 23)
local W, passStart, cursor = int(head, 1), int(head, 9), int(head, 17)
if W < 0 then W = 0 end
local cur = math.max(W, gen)

-- A bucket's entries are a prefix (a slot never goes back to 0): a scan
-- stops at the first empty slot, and an empty slot in b1 means nothing of
-- b1 went to b2 (window.Spec.Decide).
if mode == "c" then
  for _, off in ipairs({b1, b2}) do
    local s = redis.call("GETRANGE", key, off, off + 63)
    for i = 0, 15 do
      local v = slot(s, i)
      if v == 0 then return cur * 4 + 0 end
      if live(v, W, cur) and math.floor(v / TAGS) == fp then return cur * 4 + 1 end
    end
  end
  return cur * 4 + 0
end

-- sweep buckets [from, to), marking dead the slots not live at cur (ages
-- at w), up to each bucket's first empty slot. A read is CHUNK buckets; a
-- bucket whose first slot is empty (most of a sparse state) costs one
-- slot's look, and a chunk where nothing expired is not written back.
local function sweep(from, to, w)
  local CHUNK = 1024 -- buckets a read (64 KiB)
  local b = from
  while b < to do
    local n = math.min(CHUNK, to - b)
    local off = HEADER + b * 64
    local s = redis.call("GETRANGE", key, off, off + n * 64 - 1)
    local slots = math.floor(#s / 4)
    local dead = {} -- 0-based slots of s to mark dead
    for base = 0, slots - 1, 16 do
      for i = base, math.min(base + 15, slots - 1) do
        local v = slot(s, i)
        if v == 0 then break end
        if v ~= DEAD and not live(v, w, cur) then dead[#dead + 1] = i end
      end
    end
    if #dead > 0 then
      local parts, at = {}, 0 -- at: the next byte of s (0-based) not yet copied
      for _, i in ipairs(dead) do
        parts[#parts + 1] = string.sub(s, at + 1, i * 4)
        parts[#parts + 1] = bytes4(DEAD)
        at = i * 4 + 4
      end
      parts[#parts + 1] = string.sub(s, at + 1)
      redis.call("SETRANGE", key, off, table.concat(parts))
    end
    b = b + n
  end
end

-- advance the shard to cur (Table.advance)
if cursor < 0 or cursor > total or passStart < 0 or passStart > cur then passStart, cursor = -TAGS, 0 end
if cur > W and cur - W > jump then
  sweep(0, total, W)
  passStart, cursor = cur, 0
end
if cur - passStart >= horizon then
  sweep(0, total, cur)
  passStart, cursor = cur, 0
else
  local span = math.max(math.floor(horizon / 2), 1)
  local done = cur - passStart + 1
  local due = total
  if done < span then due = math.floor(total * done / span) end
  if due > cursor then sweep(cursor, due, cur); cursor = due end
  if cursor >= total then passStart, cursor = cur, 0 end
end
redis.call("SETRANGE", key, 0, bytes8(cur) .. bytes8(passStart) .. bytes8(cursor))

local value = fp * TAGS + tag(cur)
if mode == "f" then
  local was = 0
  for _, off in ipairs({b1, b2}) do
    local s = redis.call("GETRANGE", key, off, off + 63)
    for i = 0, 15 do
      local v = slot(s, i)
      if v == 0 then return cur * 4 + was end
      if math.floor(v / TAGS) == fp then
        if live(v, cur, cur) then was = 1 end
        redis.call("SETRANGE", key, off + i * 4, bytes4(DEAD))
      end
    end
  end
  return cur * 4 + was
end

local free = nil
for _, off in ipairs({b1, b2}) do
  local s = redis.call("GETRANGE", key, off, off + 63)
  local ended = false
  for i = 0, 15 do
    local v = slot(s, i)
    if v == 0 then
      if free == nil then free = off + i * 4 end
      ended = true
      break
    end
    local l = live(v, cur, cur)
    if l and math.floor(v / TAGS) == fp then
      if policy == 2 and v % TAGS ~= tag(cur) then
        redis.call("SETRANGE", key, off + i * 4, bytes4(value))
      end
      return cur * 4 + 1
    end
    if not l and free == nil then free = off + i * 4 end
  end
  if ended then break end
end
if free == nil then return cur * 4 + 2 end
redis.call("SETRANGE", key, free, bytes4(value))
return cur * 4 + 0
