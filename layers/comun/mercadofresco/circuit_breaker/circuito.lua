-- Shared circuit breaker of one dependency: every decision and every record in ONE script call.
--
-- KEYS[1]  the dependency's state hash. Fields:
--            abierto_hasta  ms epoch the open period ends (0 = closed); past it = half-open
--            aperturas      trips since the last close (drives the exponential open time)
--            seguidos       consecutive failures
--            forzado        '' | 'abierto' | 'cerrado'  (operator override)
--            sonda, sonda_hasta   the half-open probe's token and its reservation's expiry (ms)
--            c0..cN-1       rate buckets, "epoch:ok:ko" (slot = epoch % N; a stale epoch is empty)
-- ARGV[1]  op: 'acquire' (record pending, then admit/reject), 'sonda' (record the probe's outcome),
--          'estado' (record pending, read), 'forzar'
-- ARGV[2]  now in ms, or '' to use the server's TIME (one clock for every Lambda)
-- ARGV[3]  pending outcomes of this process, oldest first: 'E' success, 'F' failure
-- ARGV[4]  acquire: a fresh token for a probe | sonda: the probe's token | forzar: '', 'abierto', 'cerrado'
-- ARGV[5]  sonda: 'E' or 'F'
-- ARGV[6]  the config, one string: "bucket_ms buckets min_calls failure_rate consecutive_failures base_ms max_ms
--          reserva_ms" (one argument and one reply string keep the client's encode/parse cost per call low)
--
-- Returns one string "admitido|estado|abierto_hasta|aperturas|es_sonda|motivo_apertura|now|ok|ko|seguidos":
--          admitido/es_sonda 0/1; motivo_apertura is '' unless THIS call opened it (the caller that gets it
--          emits the metric, so it is emitted once); ok/ko are the window sums (0 for 'acquire').
--
-- Timeline of one trip:
--   closed --(20 in a row | rate >= tasa with >= minimo calls)--> open [now, now + base*2^(aperturas-1))
--   open --(now >= abierto_hasta)--> half-open: the first 'acquire' reserves the probe until now+reserva_ms,
--   every other call is rejected; a reservation past sonda_hasta is free again (its process died).
--   probe 'E' --> closed (counters reset);  probe 'F' --> open again, twice as long (capped).
local clave = KEYS[1]
local op = ARGV[1]
local ahora
if ARGV[2] == '' then
  local t = redis.call('TIME')
  ahora = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  ahora = tonumber(ARGV[2])
end
local cfg = {}
for v in string.gmatch(ARGV[6], '%S+') do cfg[#cfg + 1] = tonumber(v) end
local bucket_ms, ncub, minimo, tasa = cfg[1], cfg[2], cfg[3], cfg[4]
local seguidos_max, base_ms, max_ms, reserva_ms = cfg[5], cfg[6], cfg[7], cfg[8]

-- One HMGET reads the state and every bucket: the hot path makes no other read.
local campos = {'abierto_hasta', 'aperturas', 'seguidos', 'forzado', 'sonda', 'sonda_hasta'}
for i = 0, ncub - 1 do campos[#campos + 1] = 'c' .. i end
local h = redis.call('HMGET', clave, unpack(campos))
local abierto_hasta, aperturas = tonumber(h[1]) or 0, tonumber(h[2]) or 0
local seguidos, forzado = tonumber(h[3]) or 0, h[4] or ''
local sonda, sonda_hasta = h[5] or '', tonumber(h[6]) or 0
local epoca = math.floor(ahora / bucket_ms)
local motivo = ''

local function leer_cubeta(i)
  local v = h[7 + i]
  if not v then return -1, 0, 0 end
  local e, ok, ko = string.match(v, '^(%-?%d+):(%d+):(%d+)$')
  return tonumber(e), tonumber(ok), tonumber(ko)
end

local function ventana()
  local ok_total, ko_total = 0, 0
  for i = 0, ncub - 1 do
    local e, ok, ko = leer_cubeta(i)
    if e > epoca - ncub and e <= epoca then ok_total, ko_total = ok_total + ok, ko_total + ko end
  end
  return ok_total, ko_total
end

local function vaciar_cubetas()
  redis.call('HDEL', clave, unpack(campos, 7))
  for i = 7, #campos do h[i] = false end
end

local function abrir(por)
  abierto_hasta = ahora + math.floor(math.min(max_ms, base_ms * 2 ^ aperturas))
  aperturas = aperturas + 1
  seguidos, sonda, sonda_hasta, motivo = 0, '', 0, por
  redis.call('HSET', clave, 'abierto_hasta', abierto_hasta, 'aperturas', aperturas, 'seguidos', 0,
    'sonda', '', 'sonda_hasta', 0)
  vaciar_cubetas()
end

local function cerrar()
  abierto_hasta, aperturas, seguidos, sonda, sonda_hasta = 0, 0, 0, '', 0
  redis.call('HSET', clave, 'abierto_hasta', 0, 'aperturas', 0, 'seguidos', 0, 'sonda', '', 'sonda_hasta', 0)
  vaciar_cubetas()
end

local function registrar(resultados)
  if #resultados == 0 then return end
  local slot = epoca % ncub
  local e, ok, ko = leer_cubeta(slot)
  if e ~= epoca then ok, ko = 0, 0 end
  for i = 1, #resultados do
    if string.sub(resultados, i, i) == 'E' then ok, seguidos = ok + 1, 0 else ko, seguidos = ko + 1, seguidos + 1 end
  end
  h[7 + slot] = epoca .. ':' .. ok .. ':' .. ko
  redis.call('HSET', clave, 'c' .. slot, h[7 + slot], 'seguidos', seguidos)
  -- Only a failure can push a closed breaker over a threshold: a batch of successes skips the window sum.
  if abierto_hasta ~= 0 or forzado ~= '' or not string.find(resultados, 'F', 1, true) then return end
  if seguidos >= seguidos_max then abrir('fallos_seguidos'); return end
  local ok_total, ko_total = ventana()
  if ok_total + ko_total >= minimo and ko_total / (ok_total + ko_total) >= tasa then abrir('tasa_fallos') end
end

local function estado()
  if forzado == 'abierto' then return 'forzado_abierto' end
  if forzado == 'cerrado' then return 'forzado_cerrado' end
  if abierto_hasta == 0 then return 'cerrado' end
  if ahora < abierto_hasta then return 'abierto' end
  return 'semiabierto'
end

local function respuesta(admitido, es_sonda)
  local ok_total, ko_total = 0, 0
  if op ~= 'acquire' then ok_total, ko_total = ventana() end  -- the hot path does not need the sums
  return table.concat({admitido, estado(), string.format('%d', abierto_hasta), aperturas, es_sonda, motivo,
    string.format('%d', ahora), ok_total, ko_total, seguidos}, '|')
end

registrar(ARGV[3])

if op == 'acquire' then
  local e = estado()
  if e == 'cerrado' or e == 'forzado_cerrado' then return respuesta(1, 0) end
  if e ~= 'semiabierto' or (sonda ~= '' and ahora < sonda_hasta) then return respuesta(0, 0) end
  sonda, sonda_hasta = ARGV[4], ahora + reserva_ms
  redis.call('HSET', clave, 'sonda', sonda, 'sonda_hasta', sonda_hasta)
  return respuesta(1, 1)
elseif op == 'sonda' then
  -- Only the holder of the live reservation decides; a late report from an expired probe is ignored.
  if sonda == ARGV[4] and abierto_hasta ~= 0 and forzado == '' then
    if ARGV[5] == 'E' then cerrar() else abrir('sonda_fallida') end
  end
  return respuesta(0, 0)
elseif op == 'forzar' then
  if ARGV[4] == '' then
    redis.call('HDEL', clave, 'forzado'); forzado = ''; cerrar()
  else
    redis.call('HSET', clave, 'forzado', ARGV[4]); forzado = ARGV[4]
  end
  return respuesta(0, 0)
end
return respuesta(0, 0)
