"""Shared breaker vs pybreaker 1.4.1 + CircuitRedisStorage, on the same local Redis, in one run.

Per state: Redis round trips per guarded call (a counting connection: one socket write of a
command or pipeline = one round trip) and guarded calls per second; then how many probes run
when 8 processes hit a half-open breaker at once. Goal (issue 4): 1 round trip per call in every
state, >= 2x pybreaker's calls/s, exactly 1 probe.

calls/s is measured twice: straight to the local Redis (loopback, ~0.05 ms round trip, where the
client's CPU dominates), and through a loopback proxy that adds ``--latencia-ms`` (0.5 ms) to each
round trip, as a same-region ElastiCache has; there the round-trip count decides.

    .venv/bin/python bench/bench_breaker.py [--redis-url redis://127.0.0.1:6379/0] [--llamadas 2000]

"Tripping" is the round trips of the call during which the state changes to open. Ours: the
call whose acquire publishes the threshold-th failure (piggybacked), opens and refuses; pybreaker:
the call whose failure trips it. "Half-open probe" is the single call that probes and closes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import Any
from urllib.parse import urlsplit

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
    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
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
        with contextlib.suppress(RuntimeError, CircuitoAbierto, pybreaker.CircuitBreakerError):
            fn()
    duracion = time.perf_counter() - inicio
    return (ConexionContadora.envios - antes) / n, n / duracion


def medir_rondas(fn: Any, n: int, rondas: int = 3) -> tuple[float, float]:
    """Round trips per call over all rounds; calls/s of the best round (the machine is shared with others)."""
    resultados = [medir(fn, max(1, n // rondas)) for _ in range(rondas)]
    return sum(rt for rt, _ in resultados) / rondas, max(cps for _, cps in resultados)


def un_viaje(fn: Any) -> int:
    return int(medir(fn, 1)[0])


def nuestro(r: redis.Redis, prefijo: str, **config: Any) -> CircuitBreaker:
    cfg = {"open_base_s": 1.0, "probe_reservation_s": 5.0, **config}
    return CircuitBreaker("pasarela", r, config=BreakerConfig(**cfg), prefix=prefijo, metrics=SinMetricas())


def suyo(r: redis.Redis, prefijo: str, fail_max: int = FALLOS_PARA_ABRIR) -> pybreaker.CircuitBreaker:
    almacen = pybreaker.CircuitRedisStorage(pybreaker.STATE_CLOSED, r, namespace=f"{prefijo}pybreaker")
    return pybreaker.CircuitBreaker(fail_max=fail_max, reset_timeout=1, state_storage=almacen)


def estados_nuestro(r: redis.Redis, n: int) -> dict[str, tuple[float, float | None]]:
    p = f"bench:{uuid.uuid4().hex[:8]}:"
    res: dict[str, tuple[float, float | None]] = {}
    b = nuestro(r, p + "a:")
    medir(lambda: b.call(ok), 10)  # warm-up: loads the script once (NOSCRIPT path)
    res["closed-success"] = medir_rondas(lambda: b.call(ok), n)
    b = nuestro(r, p + "b:", consecutive_failures=10**9, min_calls=10**9)
    res["closed-failure"] = medir_rondas(lambda: b.call(falla), n)
    b = nuestro(r, p + "c:", consecutive_failures=FALLOS_PARA_ABRIR)
    for _ in range(FALLOS_PARA_ABRIR):
        medir(lambda: b.call(falla), 1)
    res["tripping"] = (un_viaje(lambda: b.call(ok)), None)
    res["open-rejected"] = medir_rondas(lambda: b.call(ok), n)
    time.sleep(1.05)
    res["half-open probe"] = (un_viaje(lambda: b.call(ok)), None)
    return res


def estados_suyo(r: redis.Redis, n: int) -> dict[str, tuple[float, float | None]]:
    p = f"bench:{uuid.uuid4().hex[:8]}:"
    res: dict[str, tuple[float, float | None]] = {}
    b = suyo(r, p + "a:")
    res["closed-success"] = medir_rondas(lambda: b.call(ok), n)
    b = suyo(r, p + "b:", fail_max=10**9)
    res["closed-failure"] = medir_rondas(lambda: b.call(falla), n)
    b = suyo(r, p + "c:")
    for _ in range(FALLOS_PARA_ABRIR - 1):
        medir(lambda: b.call(falla), 1)
    res["tripping"] = (un_viaje(lambda: b.call(falla)), None)
    res["open-rejected"] = medir_rondas(lambda: b.call(ok), n)
    time.sleep(2.05)  # pybreaker stores opened_at in whole seconds
    res["half-open probe"] = (un_viaje(lambda: b.call(ok)), None)
    return res


def trabajador(url: str, cual: str, prefijo: str) -> None:
    """One of the 8 processes: wait at the gate, make one guarded call that takes 0.5 s."""
    # The gate opens when the slowest of the 8 has started: on a loaded machine well past redis-py's
    # default 5 s socket timeout, which would kill this process mid-BLPOP and undercount the probes.
    r = redis.Redis.from_url(url, socket_timeout=60)
    b = nuestro(r, prefijo) if cual == "nuestro" else suyo(r, prefijo)

    def llamada() -> str:
        r.incr(f"{prefijo}sondas")
        time.sleep(0.5)
        return "ok"

    r.incr(f"{prefijo}listos")
    r.blpop([f"{prefijo}puerta"], timeout=30)
    with contextlib.suppress(CircuitoAbierto, pybreaker.CircuitBreakerError):
        b.call(llamada)


def sondas_con_8_procesos(url: str, cual: str) -> int:
    r = redis.Redis.from_url(url)
    prefijo = f"bench:{uuid.uuid4().hex[:8]}:"
    b = nuestro(r, prefijo, consecutive_failures=FALLOS_PARA_ABRIR) if cual == "nuestro" else suyo(r, prefijo)
    for _ in range(FALLOS_PARA_ABRIR + 1):
        with contextlib.suppress(RuntimeError, CircuitoAbierto, pybreaker.CircuitBreakerError):
            b.call(falla)
    args = [sys.executable, __file__, "--trabajador", cual, "--prefijo", prefijo, "--redis-url", url]
    procesos = [subprocess.Popen(args) for _ in range(PROCESOS)]
    while int(r.get(f"{prefijo}listos") or 0) < PROCESOS:
        time.sleep(0.02)
    time.sleep(2.1)  # past both cool-downs (pybreaker counts whole seconds)
    r.rpush(f"{prefijo}puerta", *range(PROCESOS))
    for p in procesos:
        p.wait(30)
    if any(p.returncode for p in procesos):
        raise RuntimeError(f"a {cual} worker failed: its probe count would be wrong")
    sondas = int(r.get(f"{prefijo}sondas") or 0)
    for clave in r.scan_iter(match=f"{prefijo}*"):
        r.delete(clave)
    return sondas


class ProxyConLatencia:
    """A loopback TCP proxy to Redis that delays every forwarded chunk by half the added round trip."""

    def __init__(self, url: str, latencia_ms: float) -> None:
        partes = urlsplit(url)
        self.destino = (partes.hostname or "127.0.0.1", partes.port or 6379)
        self.medio_s = latencia_ms / 2000
        self.escucha = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.escucha.getsockname()[1]}{partes.path or '/0'}"
        threading.Thread(target=self._aceptar, daemon=True).start()

    def _aceptar(self) -> None:
        while True:
            cliente, _ = self.escucha.accept()
            servidor = socket.create_connection(self.destino)
            for s in (cliente, servidor):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._bombear, args=(cliente, servidor), daemon=True).start()
            threading.Thread(target=self._bombear, args=(servidor, cliente), daemon=True).start()

    def _bombear(self, origen: socket.socket, destino: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while datos := origen.recv(65536):
                time.sleep(self.medio_s)
                destino.sendall(datos)
        with contextlib.suppress(OSError):
            destino.shutdown(socket.SHUT_WR)


def mejor(fn: Any, n: int, rondas: int = 3) -> float:
    """Best calls/s of a few rounds: the machine is shared, and noise only ever slows a round down."""
    return max(medir(fn, max(1, n // rondas))[1] for _ in range(rondas))


def velocidad_con_latencia(url: str, latencia_ms: float, n: int) -> dict[str, tuple[float, float]]:
    """calls/s through the latency proxy for the three states measured in bulk."""
    r = cliente(ProxyConLatencia(url, latencia_ms).url)
    p = f"bench:{uuid.uuid4().hex[:8]}:"
    res: dict[str, tuple[float, float]] = {}
    nb, sb = nuestro(r, p + "a:"), suyo(r, p + "b:")
    medir(lambda: nb.call(ok), 5)
    res["closed-success"] = (mejor(lambda: nb.call(ok), n), mejor(lambda: sb.call(ok), n))
    nb = nuestro(r, p + "c:", consecutive_failures=10**9, min_calls=10**9)
    sb = suyo(r, p + "d:", fail_max=10**9)
    res["closed-failure"] = (mejor(lambda: nb.call(falla), n), mejor(lambda: sb.call(falla), n))
    nb, sb = nuestro(r, p + "e:", consecutive_failures=1), suyo(r, p + "f:", fail_max=1)
    medir(lambda: nb.call(falla), 2)
    medir(lambda: sb.call(falla), 2)
    res["open-rejected"] = (mejor(lambda: nb.call(ok), n), mejor(lambda: sb.call(ok), n))
    return res


def limpiar(url: str) -> None:
    r = redis.Redis.from_url(url)
    for clave in r.scan_iter(match="bench:*", count=1000):
        r.delete(clave)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--llamadas", type=int, default=2000)
    ap.add_argument("--latencia-ms", type=float, default=0.5, help="round trip added by the proxy")
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
        con_latencia = velocidad_con_latencia(a.redis_url, a.latencia_ms, max(100, a.llamadas // 4))
        sondas = {cual: sondas_con_8_procesos(a.redis_url, cual) for cual in ("nuestro", "suyo")}
    finally:
        limpiar(a.redis_url)
    print(f"{'state':<17}{'RT/call ours':>13}{'RT/call pyb':>12}{'calls/s ours':>14}{'calls/s pyb':>13}{'ratio':>8}")
    for estado, (rt, cps) in nuestros.items():
        rt_s, cps_s = suyos[estado]
        velocidad = f"{cps:>14.0f}{cps_s:>13.0f}{cps / cps_s:>7.2f}x" if cps and cps_s else f"{'':>14}{'':>13}{'':>8}"
        print(f"{estado:<17}{rt:>13.2f}{rt_s:>12.2f}{velocidad}")
    print(f"\nwith +{a.latencia_ms} ms per round trip (proxy):")
    print(f"{'state':<17}{'calls/s ours':>14}{'calls/s pyb':>13}{'ratio':>8}")
    for estado, (ours, pyb) in con_latencia.items():
        print(f"{estado:<17}{ours:>14.0f}{pyb:>13.0f}{ours / pyb:>7.2f}x")
    print(f"\nprobes with {PROCESOS} processes at half-open: ours {sondas['nuestro']}, pybreaker {sondas['suyo']}")
    resumen = {"nuestro": nuestros, "pybreaker": suyos, "con_latencia": con_latencia, "sondas": sondas}
    print(json.dumps(resumen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
