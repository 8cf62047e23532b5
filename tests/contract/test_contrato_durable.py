"""What only the durable engine has: its invocation's payload, and a process dying in any step.

On the state machine only the Lambda tasks (claim, charge, refund) run code that can die; its service
integrations (SQS, SNS, EventBridge, DynamoDB) are Step Functions' own. In the durable function every
step is code in the function's process: a death after a step's effect and before its checkpoint runs
the step again on the next invocation (``AT_LEAST_ONCE_PER_RETRY``), and what makes that harmless is the
effect's own key, as it is for every at-least-once delivery in this system.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sam_emulator.platform_faults import LambdaCrashed, ProcessKilled

from tests.conftest import load_event
from tests.contract.motores import SIN_METRICAS, violaciones

pytestmark = [pytest.mark.integration, SIN_METRICAS]

PEDIDO = "PED-2026-084417"


def test_sample_first_invocation_is_read_by_the_sdk_and_its_input_confirms_the_pedido(motor_durable):
    from aws_durable_execution_sdk_python.execution import DurableExecutionInvocationInput

    # GIVEN the payload Lambda gives the durable function's first invocation (events/, for sam local invoke)
    muestra = load_event("durable/pedido-durable-inicio.json")
    # WHEN the SDK reads it as its wrapper does
    invocacion = DurableExecutionInvocationInput.from_json_dict(muestra)
    (inicio,) = invocacion.initial_execution_state.operations
    entrada = json.loads(inicio.execution_details.input_payload)
    # THEN its execution's input is the pipe's batch the state machine is started with, and it confirms
    assert entrada == load_event("flujo/pedido-creado.json")
    assert ":pedido-PED-2026-084417:" in invocacion.durable_execution_arn  # claves.ejecucion_pedido's name
    resultado = motor_durable.ejecutar(entrada, nombre="pedido-PED-2026-084417")
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado")
    assert violaciones(motor_durable, PEDIDO) == []


@pytest.mark.parametrize(
    ("paso", "confirmaciones"),
    [("reclamar", 1), ("reservar_stock", 1), ("confirmar", 2), ("cerrar_reclamo", 1)],
)
def test_a_death_after_a_steps_effect_runs_it_again_and_its_key_absorbs_it(motor_durable, paso, confirmaciones):
    # GIVEN the process dying once right after the step's effect, before its checkpoint
    _morir_una_vez_tras(motor_durable, paso)
    # WHEN the workflow runs
    resultado = motor_durable.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the next invocation runs the step again and the order is confirmed, charged once; the claim
    # (its owner), the FIFO dedup ids and the conditional close absorb the second run. A confirmation
    # published twice reaches the topic twice: the ERP and e-mail consumers' keys absorb it downstream.
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado"), resultado.causa
    assert resultado.invocaciones == 2
    assert motor_durable.pasarela.cobros_de(PEDIDO) == 1
    reservas = motor_durable.flujo.mensajes("ColaStock")
    assert len(reservas) == 2  # one per line: the FIFO's dedup ids dropped the second run's copies
    assert len(motor_durable.confirmaciones()) == confirmaciones
    assert violaciones(motor_durable, PEDIDO) == []


def _morir_una_vez_tras(motor: Any, paso: str) -> None:
    pasos = motor.app.pasos
    real = getattr(pasos, paso)
    quedan = [1]

    def y_morir(*args: Any, **kwargs: Any) -> Any:
        resultado = real(*args, **kwargs)
        if quedan[0]:
            quedan[0] -= 1
            raise ProcessKilled(LambdaCrashed, f"died after {paso}")
        return resultado

    setattr(pasos, paso, y_morir)
