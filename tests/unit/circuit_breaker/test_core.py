"""``core.py`` without Valkey: the decorator and its open-circuit plan, and the package's import cost."""

from __future__ import annotations

import subprocess
import sys

import pytest
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto


class _Clock:
    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


class _Metrics:
    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        pass


def _open_breaker(clock: _Clock) -> CircuitBreaker:
    """A process-local breaker (no Valkey) opened by failures."""
    breaker = CircuitBreaker("correo-principal", None, metrics=_Metrics(), clock=clock)
    for _ in range(BreakerConfig().local_consecutive_failures):
        with pytest.raises(ConnectionResetError):
            breaker.call(_reset)
    return breaker


def _reset() -> None:
    raise ConnectionResetError


def test_protect_open_circuit_runs_the_plan_with_the_call_arguments_and_skips_the_function() -> None:
    # GIVEN the primary e-mail provider's breaker open, and its plan: send through the secondary
    breaker, sent = _open_breaker(_Clock()), []

    def by_secondary(correo: str, *, plantilla: str, circuit: CircuitoAbierto) -> str:
        sent.append(("secundario", correo, plantilla, circuit.dependency))
        return "secundario"

    @breaker.protect(on_circuit_open=by_secondary)
    def send(correo: str, *, plantilla: str) -> str:
        sent.append(("principal", correo, plantilla, ""))
        return "principal"

    # WHEN an e-mail is sent
    result = send("lucia@example.com", plantilla="confirmacion-pedido")
    # THEN the primary was not called: the plan got the call's own arguments and the refusal (with its wait)
    assert result == "secundario"
    assert sent == [("secundario", "lucia@example.com", "confirmacion-pedido", "correo-principal")]


def test_protect_without_plan_raises_circuito_abierto_and_records_outcomes_when_closed() -> None:
    # GIVEN a closed breaker and a protected function that fails, without a plan
    clock = _Clock()
    breaker = CircuitBreaker("erp", None, metrics=_Metrics(), clock=clock)
    calls = []

    @breaker.protect
    def notify(pedido_id: str) -> None:
        calls.append(pedido_id)
        raise ConnectionResetError

    # WHEN it fails as often as the local threshold, then is called once more
    for _ in range(BreakerConfig().local_consecutive_failures):
        with pytest.raises(ConnectionResetError):
            notify("PED-1")
    with pytest.raises(CircuitoAbierto) as refused:
        notify("PED-1")
    # THEN its failures opened the breaker, and the last call was refused without running it
    assert len(calls) == BreakerConfig().local_consecutive_failures
    assert refused.value.retry_in_s == BreakerConfig().open_base_s


def test_protect_keeps_the_function_name_and_a_circuito_abierto_it_raises_itself_is_a_failure() -> None:
    # GIVEN a protected function that itself meets another open circuit (a nested dependency)
    breaker = CircuitBreaker("pasarela", None, metrics=_Metrics(), clock=_Clock())
    plans = []

    @breaker.protect(on_circuit_open=lambda **kw: plans.append(kw))
    def charge() -> None:
        raise CircuitoAbierto("inner circuit open", dependency="otra")

    # WHEN it is called
    with pytest.raises(CircuitoAbierto, match="inner"):
        charge()
    # THEN the inner refusal propagates as it is (it is not this breaker's: the plan does not run)
    assert plans == []
    assert charge.__name__ == "charge"


def test_importing_the_packages_does_not_import_redis() -> None:
    # GIVEN a fresh interpreter
    code = (
        "import sys, mercadofresco.retry, mercadofresco.circuit_breaker, mercadofresco.http;"
        "print('redis' in sys.modules)"
    )
    # WHEN it imports the retry, breaker and HTTP packages
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # THEN the driver is not loaded (only a breaker/budget given a client loads it)
    assert out.stdout.strip() == "False"
