"""events/pedido-durable-*.json: the payloads Lambda gives the durable function, as its SDK reads them."""

from __future__ import annotations

import json

from aws_durable_execution_sdk_python.execution import DurableExecutionInvocationInput

from tests.conftest import load_event


def test_sample_first_invocation_is_what_the_sdk_reads_with_the_pipes_batch_as_input() -> None:
    # GIVEN the payload Lambda gives the first invocation (events/, what `sam local invoke -e` takes)
    # WHEN the SDK reads it as the handler's wrapper does
    invocacion = DurableExecutionInvocationInput.from_json_dict(load_event("durable/pedido-durable-inicio.json"))
    # THEN it is the execution's start, whose input is the pipe's batch the state machine is started with
    (inicio,) = invocacion.initial_execution_state.operations
    assert inicio.operation_type.value == "EXECUTION"
    assert json.loads(inicio.execution_details.input_payload) == load_event("flujo/pedido-creado.json")
