-- Retry budget of one dependency: a token bucket fed by calls, drained by retries.
-- KEYS[1]  the dependency's budget hash
-- ARGV[1]  calls (first attempts) this process made since its last visit: each deposits ARGV[2]
-- ARGV[2]  ratio: tokens per call (0.1 = retries may be at most ~10 % of calls)
-- ARGV[3]  capacity: the bucket's ceiling, also its level when the key is new or expired
-- ARGV[4]  1 = a retry asks for a token now, 0 = deposit only
-- ARGV[5]  key lifetime in ms (an idle dependency's budget starts over full)
-- Returns {granted 0/1, tokens left as a string}: Lua numbers are truncated when returned as integers.
local clave = KEYS[1]
local llamadas = tonumber(ARGV[1])
local ratio = tonumber(ARGV[2])
local capacidad = tonumber(ARGV[3])
local pide = tonumber(ARGV[4])

local guardado = redis.call('HGET', clave, 'fichas')
local fichas = capacidad
if guardado then fichas = tonumber(guardado) end
fichas = math.min(capacidad, fichas + llamadas * ratio)

local concedido = 0
if pide == 1 then
  if fichas >= 1 then
    fichas = fichas - 1
    concedido = 1
    redis.call('HINCRBY', clave, 'concedidos', 1)
  else
    redis.call('HINCRBY', clave, 'denegados', 1)
  end
end
if llamadas > 0 then redis.call('HINCRBY', clave, 'llamadas', llamadas) end
redis.call('HSET', clave, 'fichas', tostring(fichas))
redis.call('PEXPIRE', clave, tonumber(ARGV[5]))
return {concedido, tostring(fichas)}
