/**
 * The one Lua script behind every policy state step. It runs atomically on the Redis server,
 * with the server's clock (`TIME`), so that replicas with skewed clocks agree.
 *
 * KEYS: 1 the session hash, 2 the agent hash, 3 the global hash.
 * ARGV: ttl_ms, read_session (0/1), n_takes, then per take: scope (s/a/g), bucket key, rate,
 *       interval_ms, burst; then two counter deltas (the one applied whatever the takes gave,
 *       and the one applied only when every take succeeded), each as DELTA_ARGS values.
 * Reply: failed index (-1 when all taken), wait ms, server time ms, then the session fields of
 *        SNAPSHOT_FIELDS before the step ('' for absent) when read_session is 1.
 *
 * Bucket arithmetic is the engine's own (`TokenBucket` in @ahp/policy): integer credit units,
 * one token = interval_ms units, capacity burst * interval_ms, refill `rate` units per ms.
 */

import { MAX_SESSION_DOWNLOADS } from "@ahp/policy";

/**
 * Session hash fields returned by a read, in this order. `dl`: the files the session downloaded
 * (base names joined by NUL, which no file name contains), oldest first.
 */
export const SNAPSHOT_FIELDS = [
  "fs",
  "ev",
  "pr",
  "ac",
  "er",
  "tk",
  "hbt",
  "bgr",
  "bgms",
  "bgs",
  "rf",
  "ra",
  "rt",
  "rd",
  "re",
  "dl",
] as const;

/**
 * Values per counter delta: has, events, prompts, actions, errors, tokens, heartbeat tokens (-1:
 * none), reported flag + 4 values, close background, start background, files rewritten and files
 * downloaded (each NUL-joined, '' for none).
 */
export const DELTA_ARGS = 16;

/** The separator of file names in `dl` and in the delta's lists. */
export const NAME_SEPARATOR = "\0";

export const STEP_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local skey = KEYS[1]
redis.call('HSETNX', skey, 'fs', now)
local snap = nil
if ARGV[2] == '1' then
  snap = redis.call('HMGET', skey, ${SNAPSHOT_FIELDS.map((f) => `'${f}'`).join(", ")})
end
local n = tonumber(ARGV[3])
local i = 4
local failed = -1
local wait = 0
local fills = {}
for k = 1, n do
  local scope = ARGV[i]
  local field = 'b:' .. ARGV[i + 1]
  local rate = tonumber(ARGV[i + 2])
  local interval = tonumber(ARGV[i + 3])
  local burst = tonumber(ARGV[i + 4])
  i = i + 5
  if failed < 0 then
    local h = skey
    if scope == 'a' then h = KEYS[2] elseif scope == 'g' then h = KEYS[3] end
    local cap = burst * interval
    local st = redis.call('HMGET', h, field .. ':u', field .. ':t')
    local u = cap
    local upd = now
    if st[1] then u = tonumber(st[1]) end
    if st[2] then upd = tonumber(st[2]) end
    u = math.min(cap, u + math.max(0, now - upd) * rate)
    upd = math.max(upd, now)
    if u >= interval then
      u = u - interval
    else
      failed = k - 1
      wait = math.max(1, math.ceil((interval - u) / rate))
    end
    redis.call('HSET', h, field .. ':u', string.format('%.17g', u), field .. ':t', string.format('%.17g', upd))
    local fill = math.ceil(cap / rate)
    if fills[h] == nil or fills[h] < fill then fills[h] = fill end
  end
end
local NUL = string.char(0)
local function split(text)
  local out = {}
  if (not text) or text == '' then return out end
  for name in string.gmatch(text, '[^%z]+') do out[#out + 1] = name end
  return out
end
local function has(list, x)
  for _, v in ipairs(list) do if v == x then return true end end
  return false
end
-- The engine's rememberDownloads: drop what the action rewrote, then move what it downloaded to
-- the newest end, keeping the newest ${MAX_SESSION_DOWNLOADS}.
local function downloads(rewritten, added)
  local rw = split(rewritten)
  local add = split(added)
  local out = {}
  for _, f in ipairs(split(redis.call('HGET', skey, 'dl'))) do
    if (not has(rw, f)) and (not has(add, f)) then out[#out + 1] = f end
  end
  for _, f in ipairs(add) do if not has(out, f) then out[#out + 1] = f end end
  while #out > ${MAX_SESSION_DOWNLOADS} do table.remove(out, 1) end
  if #out == 0 then redis.call('HDEL', skey, 'dl') else redis.call('HSET', skey, 'dl', table.concat(out, NUL)) end
end
local function apply(b)
  if ARGV[b] ~= '1' then return end
  if ARGV[b + 12] == '1' then
    local since = redis.call('HGET', skey, 'bgs')
    if since then
      redis.call('HINCRBY', skey, 'bgms', math.max(0, now - tonumber(since)))
      redis.call('HDEL', skey, 'bgs')
    end
  end
  if ARGV[b + 1] ~= '0' then redis.call('HINCRBY', skey, 'ev', ARGV[b + 1]) end
  if ARGV[b + 7] == '1' then
    redis.call('HSET', skey, 'rf', '1', 'ra', ARGV[b + 8], 'rt', ARGV[b + 9], 'rd', ARGV[b + 10], 're', ARGV[b + 11])
  end
  if ARGV[b + 2] ~= '0' then redis.call('HINCRBY', skey, 'pr', ARGV[b + 2]) end
  if ARGV[b + 3] ~= '0' then redis.call('HINCRBY', skey, 'ac', ARGV[b + 3]) end
  if ARGV[b + 4] ~= '0' then redis.call('HINCRBY', skey, 'er', ARGV[b + 4]) end
  if ARGV[b + 5] ~= '0' then redis.call('HINCRBYFLOAT', skey, 'tk', ARGV[b + 5]) end
  if ARGV[b + 6] ~= '-1' then
    local cur = redis.call('HGET', skey, 'hbt')
    if (not cur) or tonumber(ARGV[b + 6]) > tonumber(cur) then redis.call('HSET', skey, 'hbt', ARGV[b + 6]) end
  end
  if ARGV[b + 13] == '1' then
    redis.call('HINCRBY', skey, 'bgr', 1)
    redis.call('HSET', skey, 'bgs', now)
  end
  if ARGV[b + 14] ~= '' or ARGV[b + 15] ~= '' then downloads(ARGV[b + 14], ARGV[b + 15]) end
end
apply(i)
if failed < 0 then apply(i + ${DELTA_ARGS}) end
redis.call('PEXPIRE', skey, ttl)
if KEYS[2] ~= skey and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ttl) end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ttl) end
for h, fill in pairs(fills) do
  if fill > ttl then redis.call('PEXPIRE', h, fill, 'GT') end
end
local reply = { failed, wait, now }
if snap then
  for k = 1, #snap do
    if snap[k] then reply[#reply + 1] = snap[k] else reply[#reply + 1] = '' end
  end
end
return reply
`;
