"""Shared breaker vs pybreaker 1.4.1 + CircuitRedisStorage, on the same local Redis, in one run.

Per state: Redis round trips per guarded call (a counting connection: one socket write of a
command or pipeline = one round trip) and guarded calls per second; then how many probes run
when 8 processes hit a half-open breaker at once. Goal (issue 4): 1 round trip per call in every
state, >= 2x pybreaker's calls/s, exactly 1 probe.

    .venv/bin/python bench/bench_breaker.py [--redis-url redis://127.0.0.1:6379/0] [--llamadas 2000]

"Tripping" is the round trips of the call during which the state changes to open. Ours: the
call whose acquire publishes the threshold-th failure (piggybacked), opens and refuses; pybreaker:
the call whose failure trips it. "Half-open probe" is the single call that probes and closes.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
import uuid
from typing import Any

import pybreaker
import redis
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto

PROCESOS = 8
FALLOS_PARA_ABRIR = 5


class ConexionContadora(redis.Connection):
    """A redis-py connection that counts its writes (each is followed by waiting for the replies)."""

    envios = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        ConexionContadora.envios += 1
        super().send_packed_command(command, check_health)


class SinMetricas:
    def contar(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        pass


def cliente(url: str) -> redis.Redis:
    pool = redis.ConnectionPool.from_url(url, connection_class=ConexionContadora)
    return redis.Redis(connection_pool=pool)


def ok() -> str:
    return "ok"


def falla() -> None:
    raise RuntimeError("503")


def medir(fn: Any, n: int) -> tuple[float, float]:
    """(round trips per call, calls per second) of ``n`` calls of ``fn``."""
    antes, inicio = ConexionContadora.envios, time.perf_counter()
    for _ in range(n):
        try:
            fn()
        except (RuntimeError, CircuitoAbierto, pybreaker.CircuitBreakerError):
            pass
    duracion = time.perf_counter() - inicio
    return (ConexionContadora.envios - antes) / n, n / duracion


def un_viaje(fn: Any) -> int:
    return int(medir(fn, 1)[0])


def nuestro(r: redis.Redis, prefijo: str, **config: Any) -> CircuitBreaker:
    cfg = {"apertura_base_s": 1.0, "reserva_sonda_s": 5.0, **config}
    return CircuitBreaker("pasarela", r, config=BreakerConfig(**cfg), prefijo=prefijo, metrics=SinMetricas())


def suyo(r: redis.Redis, prefijo: str, fail_max: int = FALLOS_PARA_ABRIR) -> pybreaker.CircuitBreaker:
    almacen = pybreaker.CircuitRedisStorage(pybreaker.STATE_CLOSED, r, namespace=f"{prefijo}pybreaker")
    return pybreaker.CircuitBreaker(fail_max=fail_max, reset_timeout=1, state_storage=almacen)


def estados_nuestro(r: redis.Redis, n: int) -> dict[str, tuple[float, float | None]]:
    p = f"bench:{uuid.uuid4().hex[:8]}:"
    res: dict[str, tuple[float, float | None]] = {}
    b = nuestro(r, p + "a:")
    medir(lambda: b.call(ok), 10)  # warm-up: loads the script once (NOSCRIPT path)
    res["closed-success"] = medir(lambda: b.call(ok), n)
    b = nuestro(r, p + "b:", fallos_seguidos=10**9, minimo_llamadas=10**9)
    res["closed-failure"] = medir(lambda: b.call(falla), n)
    b = nuestro(r, p + "c:", fallos_seguidos=FALLOS_PARA_ABRIR)
    for _ in range(FALLOS_PARA_ABRIR):
        medir(lambda: b.call(falla), 1)
    res["tripping"] = (un_viaje(lambda: b.call(ok)), None)
    res["open-rejected"] = medir(lambda: b.call(ok), n)
    time.sleep(1.05)
    res["half-open probe"] = (un_viaje(lambda: b.call(ok)), None)
    return res


def estados_suyo(r: redis.Redis, n: int) -> dict[str, tuple[float, float | None]]:
    p = f"bench:{uuid.uuid4().hex[:8]}:"
    res: dict[str, tuple[float, float | None]] = {}
    b = suyo(r, p + "a:")
    res["closed-success"] = medir(lambda: b.call(ok), n)
    b = suyo(r, p + "b:", fail_max=10**9)
    res["closed-failure"] = medir(lambda: b.call(falla), n)
    b = suyo(r, p + "c:")
    for _ in range(FALLOS_PARA_ABRIR - 1):
        medir(lambda: b.call(falla), 1)
    res["tripping"] = (un_viaje(lambda: b.call(falla)), None)
    res["open-rejected"] = medir(lambda: b.call(ok), n)
    time.sleep(2.05)  # pybreaker stores opened_at in whole seconds
    res["half-open probe"] = (un_viaje(lambda: b.call(ok)), None)
    return res


def trabajador(url: str, cual: str, prefijo: str) -> None:
    """One of the 8 processes: wait at the gate, make one guarded call that takes 0.5 s."""
    r = redis.Redis.from_url(url)
    b = nuestro(r, prefijo) if cual == "nuestro" else suyo(r, prefijo)

    def llamada() -> str:
        r.incr(f"{prefijo}sondas")
        time.sleep(0.5)
        return "ok"

    r.incr(f"{prefijo}listos")
    r.blpop([f"{prefijo}puerta"], timeout=30)
    try:
        b.call(llamada)
    except (CircuitoAbierto, pybreaker.CircuitBreakerError):
        pass


def sondas_con_8_procesos(url: str, cual: str) -> int:
    r = redis.Redis.from_url(url)
    prefijo = f"bench:{uuid.uuid4().hex[:8]}:"
    b = nuestro(r, prefijo, fallos_seguidos=FALLOS_PARA_ABRIR) if cual == "nuestro" else suyo(r, prefijo)
    for _ in range(FALLOS_PARA_ABRIR + 1):
        try:
            b.call(falla)
        except (RuntimeError, CircuitoAbierto, pybreaker.CircuitBreakerError):
            pass
    args = [sys.executable, __file__, "--trabajador", cual, "--prefijo", prefijo, "--redis-url", url]
    procesos = [subprocess.Popen(args) for _ in range(PROCESOS)]
    while int(r.get(f"{prefijo}listos") or 0) < PROCESOS:
        time.sleep(0.02)
    time.sleep(2.1)  # past both cool-downs (pybreaker counts whole seconds)
    r.rpush(f"{prefijo}puerta", *range(PROCESOS))
    for p in procesos:
        p.wait(30)
    sondas = int(r.get(f"{prefijo}sondas") or 0)
    for clave in r.scan_iter(match=f"{prefijo}*"):
        r.delete(clave)
    return sondas


def limpiar(url: str) -> None:
    r = redis.Redis.from_url(url)
    for clave in r.scan_iter(match="bench:*", count=1000):
        r.delete(clave)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--llamadas", type=int, default=2000)
    ap.add_argument("--trabajador", choices=["nuestro", "suyo"])
    ap.add_argument("--prefijo")
    a = ap.parse_args()
    if a.trabajador:
        trabajador(a.redis_url, a.trabajador, a.prefijo)
        return 0
    logging.getLogger("mercadofresco").setLevel(logging.ERROR)  # the "circuit opened" lines are expected here
    r = cliente(a.redis_url)
    try:
        nuestros, suyos = estados_nuestro(r, a.llamadas), estados_suyo(r, a.llamadas)
        sondas = {cual: sondas_con_8_procesos(a.redis_url, cual) for cual in ("nuestro", "suyo")}
    finally:
        limpiar(a.redis_url)
    print(f"{'state':<17}{'RT/call ours':>13}{'RT/call pyb':>12}{'calls/s ours':>14}{'calls/s pyb':>13}{'ratio':>8}")
    for estado, (rt, cps) in nuestros.items():
        rt_s, cps_s = suyos[estado]
        velocidad = f"{cps:>14.0f}{cps_s:>13.0f}{cps / cps_s:>7.2f}x" if cps and cps_s else f"{'':>14}{'':>13}{'':>8}"
        print(f"{estado:<17}{rt:>13.2f}{rt_s:>12.2f}{velocidad}")
    print(f"probes with {PROCESOS} processes at half-open: ours {sondas['nuestro']}, pybreaker {sondas['suyo']}")
    print(json.dumps({"nuestro": nuestros, "pybreaker": suyos, "sondas": sondas}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
