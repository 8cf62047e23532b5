"""The durable function's entry point fed hostile execution inputs: a named end, nothing claimed, nothing charged.

The state machine's entry (the reclamo function reading the pipe's batch) is fuzzed in
``tests/integration/fuzz/test_fuzz_reclamo.py``; the durable function reads it with the same module
(``lectura``) inside its first step, so this checks what the saga makes of the refusal: the execution
ends ``EventoInvalido`` (the body in the order DLQ with its reason) or ``LoteNoAdmitido``, never a
claim, a charge or an unnamed error.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.contract.motores import SIN_METRICAS
from tests.unit.fuzz.estrategias import texto_sqs, valor_json

pytestmark = [pytest.mark.integration, SIN_METRICAS]

# A body a bus rule could never write, or an order no store makes: what reaches the pipe by hand or by a bug
# (a body SQS accepted: it came through the queue).
cuerpo = st.one_of(
    texto_sqs,
    valor_json.map(json.dumps),
    st.fixed_dictionaries({"detail": valor_json}).map(json.dumps),
    st.fixed_dictionaries(
        {"detail": st.fixed_dictionaries({"version": st.just(1)}, optional={"pedido_id": valor_json})}
    ).map(json.dumps),
)
registro = st.one_of(st.fixed_dictionaries({"body": cuerpo}), valor_json)
entrada = st.one_of(st.lists(registro, max_size=3), valor_json)


@settings(max_examples=15)  # each example is a whole durable execution on moto
@given(entrada=entrada)
def test_fuzz_execution_input_ends_named_without_claiming_or_charging(motor_durable: Any, entrada: Any) -> None:
    # GIVEN any execution input that is not one SQS record carrying a readable PedidoCreado
    # WHEN the durable function runs it
    resultado = motor_durable.ejecutar(entrada)
    # THEN it fails with a name the on-call knows, having claimed and charged nothing
    assert (resultado.estado, resultado.error) in {("FAILED", "EventoInvalido"), ("FAILED", "LoteNoAdmitido")}
    assert motor_durable.pasarela.llamadas["/cobros"] == 0
    assert not any(i["clave"]["S"].startswith("pedido:") for i in _registros(motor_durable))


def _registros(motor: Any) -> list[dict[str, Any]]:
    import boto3

    tabla = motor.flujo.fisicos["TablaIdempotencia"]["Ref"]
    return boto3.client("dynamodb").scan(TableName=tabla)["Items"]
