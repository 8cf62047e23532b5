"""Half-open across real processes: exactly one probe, and a dead probe does not wedge the breaker."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker, Estado
from mercadofresco.errors import CircuitoAbierto

if TYPE_CHECKING:
    import redis

pytestmark = pytest.mark.integration

TRABAJADOR = Path(__file__).with_name("trabajador_sonda.py")
PROCESOS = 8
# Server TIME drives these tests (no injected clock), so durations are real but short.
CONFIG = {"fallos_seguidos": 3, "apertura_base_s": 0.5, "apertura_max_s": 4.0, "reserva_sonda_s": 3.0}


class _Metricas:
    def __init__(self) -> None:
        self.cuenta: dict[str, int] = {}

    def contar(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.cuenta[nombre] = self.cuenta.get(nombre, 0) + 1


def _breaker(cliente: redis.Redis, prefijo: str) -> CircuitBreaker:
    return CircuitBreaker("pasarela", cliente, config=BreakerConfig(**CONFIG), prefijo=prefijo, metrics=_Metricas())


def _abrir(breaker: CircuitBreaker) -> None:
    for _ in range(CONFIG["fallos_seguidos"]):
        with pytest.raises(RuntimeError):
            breaker.call(_falla)
    with pytest.raises(CircuitoAbierto):
        breaker.call(_falla)  # this acquire publishes the 3rd failure, opens it, and is itself rejected


def _falla() -> None:
    raise RuntimeError("503")


def _lanzar(redis_url: str, prefijo: str, modo: str, puerta: str, n: int) -> list[subprocess.Popen[str]]:
    args = [sys.executable, str(TRABAJADOR), redis_url, prefijo, json.dumps(CONFIG), modo, puerta]
    return [subprocess.Popen(args, stdout=subprocess.PIPE, text=True) for _ in range(n)]


def _soltar(cliente: redis.Redis, prefijo: str, puerta: str, n: int) -> None:
    """Wait until ``n`` workers stand at the gate, then release them together."""
    limite = time.monotonic() + 30
    while int(cliente.get(f"{prefijo}{puerta}:listos") or 0) < n:
        assert time.monotonic() < limite, "workers did not reach the start gate"
        time.sleep(0.02)
    cliente.rpush(f"{prefijo}{puerta}", *range(n))


def _resultados(procesos: list[subprocess.Popen[str]]) -> list[str]:
    salidas = [p.communicate(timeout=30)[0] for p in procesos]
    return [linea.split()[1] for s in salidas for linea in s.splitlines() if linea.startswith("RESULTADO")]


def test_half_open_with_8_processes_admits_exactly_one_probe(cliente: redis.Redis, redis_url: str, redis_prefix: str):
    # GIVEN a breaker opened by failures, whose cool-down has passed
    breaker = _breaker(cliente, redis_prefix)
    _abrir(breaker)
    procesos = _lanzar(redis_url, redis_prefix, "exito", "puerta", PROCESOS)
    time.sleep(CONFIG["apertura_base_s"])
    # WHEN 8 processes ask leave at the same instant
    _soltar(cliente, redis_prefix, "puerta", PROCESOS)
    resultados = _resultados(procesos)
    # THEN exactly one of them probed and reached the dependency; the other 7 were refused
    assert sorted(resultados) == ["rechazado"] * (PROCESOS - 1) + ["sonda"]
    assert int(cliente.get(f"{redis_prefix}llamadas")) == 1
    # AND the probe's success closed the breaker for everyone
    assert breaker.estado().estado is Estado.CERRADO
    assert breaker.call(lambda: "ok") == "ok"


def test_probe_killed_releases_reservation_after_it_expires(cliente: redis.Redis, redis_url: str, redis_prefix: str):
    # GIVEN an open breaker whose probe is taken by a process that is then SIGKILLed
    breaker = _breaker(cliente, redis_prefix)
    _abrir(breaker)
    [colgado] = _lanzar(redis_url, redis_prefix, "colgar", "puerta-colgado", 1)
    otros = _lanzar(redis_url, redis_prefix, "fallo", "puerta-otros", PROCESOS)
    time.sleep(CONFIG["apertura_base_s"])
    _soltar(cliente, redis_prefix, "puerta-colgado", 1)
    assert colgado.stdout.readline().strip() == "RESULTADO sonda"
    reservado_en = time.monotonic()
    colgado.kill()
    colgado.wait(5)
    # WHEN others ask while the dead probe's reservation is still live
    with pytest.raises(CircuitoAbierto, match="semiabierto"):
        breaker.adquirir()
    # AND again after the reservation has expired, 8 processes at once
    time.sleep(max(0.0, CONFIG["reserva_sonda_s"] - (time.monotonic() - reservado_en)) + 0.1)
    _soltar(cliente, redis_prefix, "puerta-otros", PROCESOS)
    resultados = _resultados(otros)
    # THEN exactly one new probe ran (2 calls in all), and its failure re-opened the breaker (second trip;
    # the doubled duration itself is asserted with an injected clock in test_breaker_compartido.py)
    assert sorted(resultados) == ["rechazado"] * (PROCESOS - 1) + ["sonda"]
    assert int(cliente.get(f"{redis_prefix}llamadas")) == 2
    estado = breaker.estado()
    assert estado.aperturas == 2
    assert estado.estado in (Estado.ABIERTO, Estado.SEMIABIERTO)
