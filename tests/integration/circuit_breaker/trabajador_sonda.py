"""One process hitting a (half-)open breaker: waits at a start gate, asks leave, reports.

Run by the probe tests as ``python trabajador_sonda.py URL PREFIJO CONFIG_JSON MODO PUERTA``; MODO is
``exito``/``fallo`` (the outcome, reported once the test opens the ``{PUERTA}:fin`` gate, i.e. after
every other worker has asked while the probe was still out) or ``colgar`` (hold it until SIGKILLed);
PUERTA names the start gate. Prints one line ``RESULTADO sonda|admitido|rechazado``; a real call is
counted in Redis. The breaker's clock is the key ``{PREFIJO}reloj`` (epoch seconds) the test moves, so
no outcome depends on how fast this machine starts or schedules the processes.
"""

from __future__ import annotations

import json
import sys

import redis
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto

HANG_GUARD_S = 300  # a worker the test forgot ends on its own


class _SinMetricas:
    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        print(f"METRICA {nombre} {dependencia}", flush=True)


def main() -> None:
    url, prefijo, config, modo, puerta = sys.argv[1:6]
    cliente = redis.Redis.from_url(url, socket_timeout=HANG_GUARD_S + 5)
    breaker = CircuitBreaker(
        "pasarela",
        cliente,
        config=BreakerConfig(**json.loads(config)),
        prefix=prefijo,
        metrics=_SinMetricas(),
        clock=lambda: float(cliente.get(f"{prefijo}reloj")),
    )
    cliente.incr(f"{prefijo}{puerta}:listos")
    cliente.blpop([f"{prefijo}{puerta}"], timeout=HANG_GUARD_S)  # every worker is released together
    try:
        permiso = breaker.acquire()
    except CircuitoAbierto:
        print("RESULTADO rechazado", flush=True)
        return
    cliente.incr(f"{prefijo}llamadas")  # the call to the dependency, counted where the test can read it
    print("RESULTADO " + ("sonda" if permiso.is_probe else "admitido"), flush=True)
    cliente.blpop([f"{prefijo}{puerta}:fin"], timeout=HANG_GUARD_S)  # "colgar": nobody opens it, SIGKILL comes
    permiso.success() if modo == "exito" else permiso.failure()


if __name__ == "__main__":
    main()
