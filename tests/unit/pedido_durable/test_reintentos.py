"""functions/pedido_durable/reintentos.py: the saga retries what the state machine retries, as often, as long."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mercadofresco.dominio.errores import CobroRechazado, PasarelaNoDisponible
from mercadofresco.errors import CircuitoAbierto

from tests.conftest import RAIZ

ASL = json.loads((RAIZ / "statemachines" / "procesar_pedido.asl.json").read_text())["States"]
# What Step Functions itself raises (the function never ran, or the service): the durable service re-invokes.
DE_LA_PLATAFORMA = ("Lambda.", "Sandbox.", "States.")


def _entradas(estado: str) -> set[tuple[frozenset[str], int, int, int]]:
    """The state's Retry entries for the errors the function raises: (names, MaxAttempts, Interval, MaxDelay)."""
    entradas = set()
    for r in ASL[estado].get("Retry", []):
        assert (r["BackoffRate"], r["JitterStrategy"]) == (2, "FULL"), "the rules assume both (FullJitterBackoff)"
        if propios := frozenset(e for e in r["ErrorEquals"] if not e.startswith(DE_LA_PLATAFORMA)):
            entradas.add((propios, r["MaxAttempts"], r["IntervalSeconds"], r["MaxDelaySeconds"]))
    return entradas


@pytest.mark.parametrize("paso", ["reclamo", "cobro", "reintentar-cobro", "reconsulta", "reembolso"])
def test_step_retries_exactly_the_errors_its_state_retries_as_often_and_as_long(durable, paso) -> None:
    import reintentos

    # GIVEN the saga's rules for a kind of step and the state machine's state it comes from
    estado, reglas = reintentos.REINTENTOS[paso]
    # THEN each rule is one of the state's Retry entries for the function's own errors, and no entry is missing
    assert {(frozenset(r.errores), r.reintentos, r.intervalo_s, r.max_s) for r in reglas} == _entradas(estado)


def test_close_retries_as_often_and_as_long_as_the_state_machines_close() -> None:
    import reintentos

    # GIVEN CerrarReclamo's DynamoDB Retry (throttling codes) THEN the close's rule has its numbers
    (entrada,) = ASL["CerrarReclamo"]["Retry"]
    ((_, reglas),) = [v for k, v in reintentos.REINTENTOS.items() if k == "cierre"]
    ((regla),) = reglas
    assert (regla.reintentos, regla.intervalo_s, regla.max_s) == (
        entrada["MaxAttempts"], entrada["IntervalSeconds"], entrada["MaxDelaySeconds"],
    )  # fmt: skip


def _decision(paso: str, error: Exception, intentos: int) -> Any:
    import reintentos

    return reintentos.REGLAS[paso].retry_strategy(error, intentos)


def test_rule_retries_an_error_it_names_up_to_its_count_with_a_full_jitter_wait(durable) -> None:
    # GIVEN a gateway that stayed unavailable WHEN ReintentarCobro's attempts fail (2 retries, 3 s, cap 30 s)
    decisiones = [_decision("reintentar-cobro", PasarelaNoDisponible("503"), n) for n in (1, 2, 3)]
    # THEN it retries twice, each wait within full jitter's range (at least the SDK's 1 s), then stops
    assert [d.should_retry for d in decisiones] == [True, True, False]
    assert 1 <= decisiones[0].delay_seconds <= 3 and 1 <= decisiones[1].delay_seconds <= 6


@pytest.mark.parametrize(
    ("paso", "error"),
    [
        ("reintentar-cobro", CobroRechazado("402")),  # a business answer: never retried
        ("cobro", PasarelaNoDisponible("503")),  # the first attempt: the saga decides, not a retry
        ("reconsulta", PasarelaNoDisponible("503")),  # the loop asks again itself, past the lease
        ("reembolso", ValueError("a bug")),
    ],
)
def test_rule_does_not_retry_an_error_its_state_does_not_retry(durable, paso, error) -> None:
    assert not _decision(paso, error, 1).should_retry


def test_gateway_steps_run_at_most_once_per_attempt_the_others_at_least_once(durable) -> None:
    import reintentos
    from aws_durable_execution_sdk_python.config import StepSemantics

    # GIVEN every kind of step THEN only those that call the gateway are at most once: an attempt cut short
    # there is an unknown outcome the saga resolves, not an attempt to run again blindly
    una_vez = {n for n, c in reintentos.REGLAS.items() if c.step_semantics is StepSemantics.AT_MOST_ONCE_PER_RETRY}
    assert una_vez == {"cobro", "reintentar-cobro", "reconsulta", "reembolso"}


def test_circuit_open_while_asking_again_is_waited_for_not_counted(durable) -> None:
    # GIVEN the circuit open while Reconsultar asks (its Retry: 3 times, 60 s, cap 300 s)
    decisiones = [_decision("reconsulta", CircuitoAbierto("open"), n) for n in (1, 2, 3, 4)]
    # THEN it waits for the circuit three times, then the round counts as unanswered
    assert [d.should_retry for d in decisiones] == [True, True, True, False]
