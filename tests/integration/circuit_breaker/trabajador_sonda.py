"""One process hitting a (half-)open breaker: waits at a start gate, asks leave, reports.

Run by the probe tests as ``python trabajador_sonda.py URL PREFIJO CONFIG_JSON MODO PUERTA``; MODO is
``exito``/``fallo`` (the outcome, reported after holding the call for 1 s so every other worker asks
while the probe is still out) or ``colgar`` (hold it until SIGKILLed); PUERTA names the start gate.
Prints one line ``RESULTADO sonda|admitido|rechazado``; a real call is counted in Redis.
"""

from __future__ import annotations

import json
import sys
import time

import redis
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto


class _SinMetricas:
    def contar(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        print(f"METRICA {nombre} {dependencia}", flush=True)


def main() -> None:
    url, prefijo, config, modo, puerta = sys.argv[1:6]
    cliente = redis.Redis.from_url(url, socket_timeout=5)
    breaker = CircuitBreaker(
        "pasarela", cliente, config=BreakerConfig(**json.loads(config)), prefijo=prefijo, metrics=_SinMetricas()
    )
    cliente.incr(f"{prefijo}{puerta}:listos")
    cliente.blpop([f"{prefijo}{puerta}"], timeout=30)  # every worker is released at (nearly) the same instant
    try:
        permiso = breaker.adquirir()
    except CircuitoAbierto:
        print("RESULTADO rechazado", flush=True)
        return
    cliente.incr(f"{prefijo}llamadas")  # the call to the dependency, counted where the test can read it
    print("RESULTADO " + ("sonda" if permiso.es_sonda else "admitido"), flush=True)
    time.sleep(120 if modo == "colgar" else 1)
    permiso.exito() if modo == "exito" else permiso.fallo()


if __name__ == "__main__":
    main()
