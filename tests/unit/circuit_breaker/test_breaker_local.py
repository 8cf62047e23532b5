"""The process-local breaker (degraded mode, or no Valkey client) and the import-cost rule."""

from __future__ import annotations

import subprocess
import sys

import pytest
from mercadofresco.circuit_breaker import BreakerConfig, BreakerState, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto


class Reloj:
    def __init__(self) -> None:
        self.ahora = 1000.0

    def __call__(self) -> float:
        return self.ahora


class MetricsSink:
    def __init__(self) -> None:
        self.eventos: list[tuple[str, str]] = []

    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.eventos.append((nombre, dependencia))


def _falla() -> None:
    raise ConnectionResetError


def _abrir(breaker: CircuitBreaker, n: int = 5) -> None:
    for _ in range(n):
        with pytest.raises(ConnectionResetError):
            breaker.call(_falla)


def test_local_breaker_opens_after_local_threshold_and_emits_metric() -> None:
    # GIVEN a breaker without Valkey (threshold local_consecutive_failures = 5)
    metricas, reloj = MetricsSink(), Reloj()
    breaker = CircuitBreaker("erp", None, metrics=metricas, clock=reloj)
    # WHEN 5 calls fail
    _abrir(breaker)
    # THEN the 6th is refused without running, and one opening metric was counted
    llamadas = []
    with pytest.raises(CircuitoAbierto):
        breaker.call(lambda: llamadas.append(1))
    assert llamadas == []
    assert metricas.eventos == [("CircuitoAbierto", "erp")]
    assert breaker.state().state is BreakerState.ABIERTO


def test_local_breaker_half_open_single_probe_then_closes() -> None:
    reloj = Reloj()
    breaker = CircuitBreaker("erp", None, metrics=MetricsSink(), clock=reloj)
    _abrir(breaker)
    # WHEN the cool-down passes: one probe is admitted, a second caller is refused meanwhile
    reloj.ahora += 30
    sonda = breaker.acquire()
    with pytest.raises(CircuitoAbierto):
        breaker.acquire()
    # THEN its success closes the breaker
    assert sonda.is_probe
    sonda.success()
    assert breaker.state().state is BreakerState.CERRADO
    assert breaker.call(lambda: "ok") == "ok"


def test_local_breaker_failed_probe_doubles_open_time() -> None:
    reloj = Reloj()
    breaker = CircuitBreaker("erp", None, config=BreakerConfig(open_base_s=10), metrics=MetricsSink(), clock=reloj)
    _abrir(breaker)
    reloj.ahora += 10
    with pytest.raises(ConnectionResetError):
        breaker.call(_falla)  # the probe fails
    # THEN open for 20 s: refused at +19, a probe again at +20
    reloj.ahora += 19
    with pytest.raises(CircuitoAbierto):
        breaker.call(lambda: "x")
    reloj.ahora += 1
    assert breaker.acquire().is_probe


def test_force_without_valkey_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="Valkey"):
        CircuitBreaker("erp", None).force("abierto")


def test_config_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="failure_rate"):
        BreakerConfig(failure_rate=1.5)
    with pytest.raises(ValueError, match="open_base_s"):
        BreakerConfig(open_base_s=600, open_max_s=300)


def test_importing_the_packages_does_not_import_redis() -> None:
    # GIVEN a fresh interpreter
    codigo = (
        "import sys, mercadofresco.retry, mercadofresco.circuit_breaker, mercadofresco.http;"
        "print('redis' in sys.modules)"
    )
    # WHEN it imports the retry, breaker and HTTP packages
    salida = subprocess.run([sys.executable, "-c", codigo], capture_output=True, text=True, check=True)
    # THEN the driver is not loaded (only a breaker/budget given a client loads it)
    assert salida.stdout.strip() == "False"
