"""Half-open across real processes: exactly one probe, and a dead probe does not wedge the breaker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mercadofresco.circuit_breaker import BreakerConfig, BreakerState, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto

from tests.conftest import HANG_GUARD_S, wait_until

if TYPE_CHECKING:
    import redis

pytestmark = pytest.mark.integration

TRABAJADOR = Path(__file__).with_name("trabajador_sonda.py")
PROCESOS = 8
CONFIG = {"consecutive_failures": 3, "open_base_s": 30.0, "open_max_s": 300.0, "probe_reservation_s": 15.0}
INICIO_S = 1_800_000_000.0


class _Metricas:
    def __init__(self) -> None:
        self.cuenta: dict[str, int] = {}

    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.cuenta[nombre] = self.cuenta.get(nombre, 0) + 1


class _RelojCompartido:
    """Epoch seconds in the Redis key ``{prefijo}reloj``: the clock of this test's breaker and every worker's."""

    def __init__(self, cliente: redis.Redis, prefijo: str) -> None:
        self._cliente, self._clave = cliente, f"{prefijo}reloj"
        cliente.set(self._clave, INICIO_S)

    def __call__(self) -> float:
        return float(self._cliente.get(self._clave))

    def avanzar(self, segundos: float) -> None:
        self._cliente.incrbyfloat(self._clave, segundos)


def _breaker(cliente: redis.Redis, prefijo: str, reloj: _RelojCompartido) -> CircuitBreaker:
    config = BreakerConfig(**CONFIG)
    return CircuitBreaker("pasarela", cliente, config=config, prefix=prefijo, metrics=_Metricas(), clock=reloj)


def _abrir(breaker: CircuitBreaker) -> None:
    for _ in range(CONFIG["consecutive_failures"]):
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
    """Wait until ``n`` workers stand at the gate (however slowly they start), then release them together."""
    wait_until(lambda: int(cliente.get(f"{prefijo}{puerta}:listos") or 0) >= n, "the workers at the start gate")
    cliente.rpush(f"{prefijo}{puerta}", *range(n))


def _resultados(cliente: redis.Redis, prefijo: str, puerta: str, procesos: list[subprocess.Popen[str]]) -> list[str]:
    """Every worker's answer; only once all have answered may the probe report its outcome."""
    lineas = [p.stdout.readline() for p in procesos]  # type: ignore[union-attr]
    cliente.rpush(f"{prefijo}{puerta}:fin", *range(len(procesos)))
    for p in procesos:
        p.communicate(timeout=HANG_GUARD_S)
    return [linea.split()[1] for linea in lineas if linea.startswith("RESULTADO")]


def test_half_open_with_8_processes_admits_exactly_one_probe(cliente: redis.Redis, redis_url: str, redis_prefix: str):
    # GIVEN a breaker opened by failures, whose cool-down has passed (on the clock every process reads)
    reloj = _RelojCompartido(cliente, redis_prefix)
    breaker = _breaker(cliente, redis_prefix, reloj)
    _abrir(breaker)
    procesos = _lanzar(redis_url, redis_prefix, "exito", "puerta", PROCESOS)
    reloj.avanzar(CONFIG["open_base_s"])
    # WHEN 8 processes ask leave at the same instant
    _soltar(cliente, redis_prefix, "puerta", PROCESOS)
    resultados = _resultados(cliente, redis_prefix, "puerta", procesos)
    # THEN exactly one of them probed and reached the dependency; the other 7 were refused
    assert sorted(resultados) == ["rechazado"] * (PROCESOS - 1) + ["sonda"]
    assert int(cliente.get(f"{redis_prefix}llamadas")) == 1
    # AND the probe's success closed the breaker for everyone
    assert breaker.state().state is BreakerState.CERRADO
    assert breaker.call(lambda: "ok") == "ok"


def test_probe_killed_releases_reservation_after_it_expires(cliente: redis.Redis, redis_url: str, redis_prefix: str):
    # GIVEN an open breaker whose probe is taken by a process that is then SIGKILLed
    reloj = _RelojCompartido(cliente, redis_prefix)
    breaker = _breaker(cliente, redis_prefix, reloj)
    _abrir(breaker)
    [colgado] = _lanzar(redis_url, redis_prefix, "colgar", "puerta-colgado", 1)
    otros = _lanzar(redis_url, redis_prefix, "fallo", "puerta-otros", PROCESOS)
    reloj.avanzar(CONFIG["open_base_s"])
    _soltar(cliente, redis_prefix, "puerta-colgado", 1)
    assert colgado.stdout.readline().strip() == "RESULTADO sonda"
    colgado.kill()
    colgado.wait(HANG_GUARD_S)
    # WHEN others ask while the dead probe's reservation is still live
    with pytest.raises(CircuitoAbierto, match="semiabierto"):
        breaker.acquire()
    # AND again after the reservation has expired, 8 processes at once
    reloj.avanzar(CONFIG["probe_reservation_s"] + 0.1)
    _soltar(cliente, redis_prefix, "puerta-otros", PROCESOS)
    resultados = _resultados(cliente, redis_prefix, "puerta-otros", otros)
    # THEN exactly one new probe ran (2 calls in all), and its failure re-opened the breaker (second trip;
    # the doubled duration itself is asserted with an injected clock in test_breaker_compartido.py)
    assert sorted(resultados) == ["rechazado"] * (PROCESOS - 1) + ["sonda"]
    assert int(cliente.get(f"{redis_prefix}llamadas")) == 2
    estado = breaker.state()
    assert estado.openings == 2
    assert estado.state is BreakerState.ABIERTO
