-- Shared circuit breaker of one dependency: every decision and every record in ONE script call.
--
-- KEYS[1]  the dependency's state hash. Fields (stored: their names never change):
--            abierto_hasta  end of the open period, Unix ms (0 = closed); past it = half-open
--            aperturas      trips since the last close (drives the exponential open time)
--            epoca          the state's epoch: +1 on every open, close and operator override. A call
--                           is admitted in one epoch; its outcome counts only in that epoch, so an
--                           outcome that arrives after a transition (a slow call, a late report) changes nothing
--            fallos         the failure streak: µs timestamps of the failures no reported success came after
--            seguidos       its length (what mf-circuito shows)
--            ultimo_exito   µs timestamp of the latest success reported in this epoch
--            forzado        '' | 'abierto' | 'cerrado'  (operator override)
--            sonda, sonda_hasta   the half-open probe's token and its reservation's expiry (ms)
--            c0..cN-1       rate buckets, "stamp:ok:ko" (stamp = ms // bucket_ms, slot = stamp % N; an old stamp is empty)
-- ARGV[1]  op: 'acquire' (record successes, then admit/reject), 'failure' (record one failed call),
--          'probe' (record the probe's outcome), 'read', 'force'
-- ARGV[2]  now in seconds (an injected clock's, for tests), or '' to use the server's TIME (one clock for every Lambda)
-- ARGV[3]  successes the process recorded since its previous round trip: '' or "epoch count age_us",
--          age_us = how long before this round trip the latest of them ended (a duration: no clock skew)
-- ARGV[4]  acquire: a fresh token for a probe | failure: the epoch the failed call was admitted in |
--          probe: "token E|F" | force: '', 'abierto', 'cerrado'
-- ARGV[5]  the config, one string: "bucket_ms buckets min_calls failure_rate consecutive_failures base_ms max_ms
--          reservation_ms"
--
-- Returns "admitido|estado|abierto_hasta|aperturas|es_sonda|motivo|now_ms|ok|ko|seguidos|epoca|transicion":
--          admitido/es_sonda 0/1; motivo and transicion are '' unless THIS call changed the state (the caller
--          that gets them announces the transition, so it is announced once); ok/ko only for 'read'/'force'.
--
-- Why successes carry a time: a process reports its successes late (with its next round trip), while
-- failures are written at once. A success that ended before the failures of an outage must not reset
-- their streak when it arrives after them; only a success that ended after a failure erases it. A tie
-- keeps the failure (the conservative side: it opens sooner, never later).
--
-- Timeline of one trip:
--   closed --(consecutive_failures failures, fleet-wide | rate >= failure_rate with >= min_calls)--> open
--   open [now, now + base*2^(aperturas-1), capped) --(now >= abierto_hasta)--> half-open: the first 'acquire'
--   reserves the probe until now+reservation_ms, every other call is rejected; a reservation past
--   sonda_hasta is free again (its process died).
--   probe 'E' --> closed (counters reset);  probe 'F' --> open again, twice as long (capped).
local key, op = KEYS[1], ARGV[1]
local now_us
if ARGV[2] == '' then
  local t = redis.call('TIME')
  now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now_us = math.floor(tonumber(ARGV[2]) * 1000000 + 0.5)
end
local now = math.floor(now_us / 1000)
local cfg = {}
for v in string.gmatch(ARGV[5], '%S+') do cfg[#cfg + 1] = tonumber(v) end
local bucket_ms, nbuckets, min_calls, rate = cfg[1], cfg[2], cfg[3], cfg[4]
local streak_max, base_ms, max_ms, reservation_ms = cfg[5], cfg[6], cfg[7], cfg[8]

-- One HMGET reads the state and every bucket: no path makes another read.
local fields = {'abierto_hasta', 'aperturas', 'forzado', 'sonda', 'sonda_hasta', 'epoca', 'fallos', 'ultimo_exito'}
local first_bucket = #fields + 1
for i = 0, nbuckets - 1 do fields[#fields + 1] = 'c' .. i end
local h = redis.call('HMGET', key, unpack(fields))
local open_until, openings = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local forced, probe, probe_until = h[3] or '', h[4] or '', tonumber(h[5]) or 0
local epoch, last_success = tonumber(h[6]) or 0, tonumber(h[8]) or 0
local streak = {}
for v in string.gmatch(h[7] or '', '%d+') do streak[#streak + 1] = tonumber(v) end
local stamp_now = math.floor(now / bucket_ms)
local reason, transition = '', ''

-- Lua turns a number into text with 14 significant digits: µs timestamps have 16, so they are formatted here.
local function int(n) return string.format('%d', n) end

local function read_bucket(i)
  local v = h[first_bucket + i]
  if not v then return -1, 0, 0 end
  local stamp, ok, ko = string.match(v, '^(%-?%d+):(%d+):(%d+)$')
  return tonumber(stamp), tonumber(ok), tonumber(ko)
end

local function in_window(stamp) return stamp > stamp_now - nbuckets and stamp <= stamp_now end

local function window()
  local oks, kos = 0, 0
  for i = 0, nbuckets - 1 do
    local stamp, ok, ko = read_bucket(i)
    if in_window(stamp) then oks, kos = oks + ok, kos + ko end
  end
  return oks, kos
end

local function add_to_bucket(stamp, ok, ko)
  local slot = stamp % nbuckets
  local held, o, k = read_bucket(slot)
  if held ~= stamp then o, k = 0, 0 end
  h[first_bucket + slot] = stamp .. ':' .. (o + ok) .. ':' .. (k + ko)
  redis.call('HSET', key, 'c' .. slot, h[first_bucket + slot])
end

local function save_streak()
  local parts = {}
  for i = 1, #streak do parts[i] = int(streak[i]) end
  redis.call('HSET', key, 'fallos', table.concat(parts, ' '), 'seguidos', #streak)
end

-- A transition starts a new epoch with empty counts.
local function new_epoch()
  epoch, streak, probe, probe_until = epoch + 1, {}, '', 0
  redis.call('HDEL', key, unpack(fields, first_bucket))
  for i = first_bucket, #fields do h[i] = false end
  redis.call('HSET', key, 'epoca', epoch, 'fallos', '', 'seguidos', 0, 'sonda', '', 'sonda_hasta', 0)
end

local function open(why)
  open_until = now + math.floor(math.min(max_ms, base_ms * 2 ^ openings))
  openings, reason, transition = openings + 1, why, 'abierto'
  new_epoch()
  redis.call('HSET', key, 'abierto_hasta', int(open_until), 'aperturas', openings)
end

local function close()
  open_until, openings, last_success, transition = 0, 0, now_us, 'cerrado'
  new_epoch()
  redis.call('HSET', key, 'abierto_hasta', 0, 'aperturas', 0, 'ultimo_exito', int(now_us))
end

local function record_successes()
  local of_epoch, count, age_us = string.match(ARGV[3], '^(%d+) (%d+) (%d+)$')
  if not of_epoch or tonumber(of_epoch) ~= epoch then return end
  local ended = now_us - tonumber(age_us)
  if ended > last_success then
    last_success = ended
    local kept = {}
    for i = 1, #streak do if streak[i] >= ended then kept[#kept + 1] = streak[i] end end
    streak = kept
    redis.call('HSET', key, 'ultimo_exito', int(ended))
    save_streak()
  end
  local stamp = math.floor(ended / 1000 / bucket_ms)
  if in_window(stamp) then add_to_bucket(stamp, tonumber(count), 0) end
end

local function record_failure()
  if tonumber(ARGV[4]) ~= epoch then return end  -- admitted before a transition: not this epoch's
  if now_us >= last_success then
    streak[#streak + 1] = now_us
    if #streak > streak_max then table.remove(streak, 1) end  -- only a forced-closed breaker gets here
    save_streak()
  end
  add_to_bucket(stamp_now, 0, 1)
  if open_until ~= 0 or forced ~= '' then return end
  if #streak >= streak_max then open('fallos_seguidos'); return end
  local oks, kos = window()
  if oks + kos >= min_calls and kos / (oks + kos) >= rate then open('tasa_fallos') end
end

local function state()
  if forced == 'abierto' then return 'forzado_abierto' end
  if forced == 'cerrado' then return 'forzado_cerrado' end
  if open_until == 0 then return 'cerrado' end
  if now < open_until then return 'abierto' end
  return 'semiabierto'
end

local function reply(admitted, is_probe)
  local oks, kos = 0, 0
  if op == 'read' or op == 'force' then oks, kos = window() end  -- the hot paths do not need the sums
  return table.concat({admitted, state(), int(open_until), openings, is_probe, reason, int(now), oks, kos,
    #streak, epoch, transition}, '|')
end

record_successes()

if op == 'acquire' then
  local s = state()
  if s == 'cerrado' or s == 'forzado_cerrado' then return reply(1, 0) end
  if s ~= 'semiabierto' or (probe ~= '' and now < probe_until) then return reply(0, 0) end
  probe, probe_until, transition = ARGV[4], now + reservation_ms, 'semiabierto'
  redis.call('HSET', key, 'sonda', probe, 'sonda_hasta', int(probe_until))
  return reply(1, 1)
elseif op == 'failure' then
  record_failure()
elseif op == 'probe' then
  -- Only the holder of the live reservation decides; a late report from an expired probe is ignored.
  local token, outcome = string.match(ARGV[4], '^(%S+) ([EF])$')
  if token and token == probe and open_until ~= 0 and forced == '' then
    if outcome == 'E' then close() else open('sonda_fallida') end
  end
elseif op == 'force' then
  if ARGV[4] == '' then
    redis.call('HDEL', key, 'forzado'); forced = ''; close()
  else
    redis.call('HSET', key, 'forzado', ARGV[4]); forced = ARGV[4]
    new_epoch()
  end
  transition = ''  -- an operator's override is announced by the operator's command, not as a trip
end
return reply(0, 0)
