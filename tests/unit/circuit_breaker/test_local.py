"""The process-local breaker (degraded mode, or no Valkey client): ``local.py`` through ``CircuitBreaker``."""

from __future__ import annotations

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


def test_local_breaker_transitions_reach_the_hook_marked_local() -> None:
    # GIVEN a breaker without Valkey and a transition hook
    heard = []
    reloj = Reloj()
    breaker = CircuitBreaker("erp", None, metrics=MetricsSink(), clock=reloj, on_transition=heard.append)
    # WHEN it opens, half-opens for a probe and closes
    _abrir(breaker)
    reloj.ahora += 30
    breaker.call(lambda: "ok")
    # THEN the hook heard the three changes, each marked as the process-local breaker's
    assert [(t.from_state, t.to_state, t.reason, t.shared) for t in heard] == [
        (BreakerState.CERRADO, BreakerState.ABIERTO, "fallos_seguidos", False),
        (BreakerState.ABIERTO, BreakerState.SEMIABIERTO, "", False),
        (BreakerState.SEMIABIERTO, BreakerState.CERRADO, "", False),
    ]
