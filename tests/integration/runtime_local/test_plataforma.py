"""The local runtime's emulation of Lambda's own faults (``sam_emulator.deaths``).

The whole template runs in a loopback moto (``LocalRuntime``), with the real ``cobro`` handler,
the loopback gateway that deduplicates on ``Idempotency-Key`` and a private redis-server. Each
test plans one platform fault and reads its effect from the components: the gateway's charges,
the idempotency table, the execution history, the queue.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import load_event, wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

TERMINALES = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}


# Both ways the emulator runs functions: in this process, and one worker process per function.
@pytest.fixture(scope="module", params=[False, True], ids=["in-process", "workers"])
def mundo(request: pytest.FixtureRequest) -> Iterator[Any]:
    from mercadofresco_local import plazos
    from mercadofresco_local.proveedores import Proveedores
    from sam_emulator.private_redis import PrivateRedis
    from sam_emulator.runtime import LocalRuntime
    from sam_emulator.template import Template

    with PrivateRedis() as redis, Proveedores() as proveedores:
        parametros = {
            "PasarelaUrl": proveedores.pasarela.url,
            "ErpUrl": proveedores["erp"].url,
            "CorreoPrincipalUrl": proveedores["correo-principal"].url,
            "CorreoSecundarioUrl": proveedores["correo-secundario"].url,
        }
        entorno = {**proveedores.entorno(), "REDIS_URL": redis.url}
        # plazos_comprimidos: the workflow's waits past a lease last seconds, with the leases compressed alike
        rt_local = LocalRuntime(
            local_environment=entorno,
            compression=20,
            template=Template(parameters=parametros),
            compressed_deadlines=True,
            compress_function=plazos.comprimir_plazos,
            new_environments=plazos.entornos_nuevos,
            isolated_functions=request.param,
        )
        with rt_local as rt:
            rt.proveedores = proveedores
            yield rt


@pytest.fixture
def control(mundo: Any) -> Iterator[Any]:
    from sam_emulator import deaths

    deaths.CONTROL.set_plan(None)
    yield deaths.CONTROL
    deaths.CONTROL.set_plan(None)


def _cobro(pedido_id: str) -> dict[str, Any]:
    evento = copy.deepcopy(load_event("cobro-pedido.json"))
    evento["pedido"]["pedido_id"] = pedido_id
    return evento


def _registro(mundo: Any, clave: str) -> dict[str, Any]:
    from mercadofresco.aws import client

    tabla = mundo.template.ref("TablaIdempotencia")
    return client("dynamodb").get_item(TableName=tabla, Key={"clave": {"S": clave}}, ConsistentRead=True)["Item"]


def _solo_la_primera(corte: Any, operacion: str = "cobro") -> Any:
    """A plan that applies ``corte`` to the first invocation carrying ``operacion``, and to no other."""
    hechas: list[int] = []

    def plan(inv: Any) -> Any:
        if isinstance(inv.event, dict) and inv.event.get("operacion") == operacion and not hechas:
            hechas.append(1)
            return corte
        return None

    return plan


def test_schedule_template_settings_reserved_concurrency_and_timeout_are_read(mundo):
    # GIVEN the template's CobroFunction  WHEN provisioned locally  THEN its platform limits are the template's
    import math

    from mercadofresco_local import RAIZ
    from template_model import read
    from template_model.bounds import time_bounds

    declarados = time_bounds(read(RAIZ / "template.yaml"), RAIZ)
    cobro = mundo.functions.by_id["CobroFunction"]
    assert cobro.reserved_concurrency == 20
    assert cobro.timeout_s == declarados.timeouts_s["CobroFunction"]  # real seconds even when leases are compressed
    assert cobro.environment["IDEMPOTENCY_LEASE_S"] == str(math.ceil(declarados.leases_s["CobroFunction"] / 20))


def test_crash_after_gateway_charged_then_retry_leaves_exactly_one_charge(mundo, control):
    from sam_emulator.deaths import Cut
    from sam_emulator.platform_faults import LambdaCrashed

    # GIVEN the charge invocation dies once the gateway has answered (the answer is lost)
    cobro = mundo.functions.by_id["CobroFunction"]
    control.set_plan(_solo_la_primera(Cut(LambdaCrashed, where="after:http POST /cobros")))
    # WHEN it is invoked, then invoked again (the caller's retry)
    with pytest.raises(LambdaCrashed):
        cobro.invoke(_cobro("PED-CRASH-1"))
    segundo: Exception | None = None
    try:
        cobro.invoke(_cobro("PED-CRASH-1"))
    except Exception as exc:  # the retry meets the dead invocation's claim: an error, never a charge
        segundo = exc
    # THEN the gateway charged exactly once, and the death is recorded where it happened
    assert mundo.proveedores.pasarela.cobros_de("PED-CRASH-1") == 1
    assert segundo is None or type(segundo).__name__ == "OperacionEnCurso"
    assert ("mercadofresco-cobro", "Lambda.Unknown", "after:http POST /cobros") in [m[:3] for m in control.deaths]


def test_timeout_after_gateway_answered_surfaces_timeout_and_record_never_completed(mundo, control):
    from sam_emulator.deaths import Cut
    from sam_emulator.platform_faults import LambdaTimeout

    # GIVEN the charge invocation runs out of time right after the gateway answered
    cobro = mundo.functions.by_id["CobroFunction"]
    control.set_plan(_solo_la_primera(Cut(LambdaTimeout, where="after:http POST /cobros")))
    # WHEN it is invoked
    with pytest.raises(LambdaTimeout) as error:
        cobro.invoke(_cobro("PED-TIMEOUT-1"))
    # THEN the caller sees Lambda's timeout, and the completion write never reached DynamoDB
    assert error.value.error_type == "Sandbox.Timedout"
    assert _registro(mundo, "cobro:PED-TIMEOUT-1")["estado"]["S"] == "EN_CURSO"
    assert mundo.proveedores.pasarela.cobros_de("PED-TIMEOUT-1") == 1


def test_handler_catching_exception_cannot_swallow_the_death(mundo, control):
    from sam_emulator.deaths import Cut
    from sam_emulator.platform_faults import LambdaCrashed

    # GIVEN a crash planned at the very first boundary (the claim's PutItem)
    cobro = mundo.functions.by_id["CobroFunction"]
    control.set_plan(_solo_la_primera(Cut(LambdaCrashed, at=1)))
    # WHEN invoked
    with pytest.raises(LambdaCrashed):
        cobro.invoke(_cobro("PED-CRASH-0"))
    # THEN nothing reached the gateway nor the table
    from mercadofresco.aws import client

    tabla = mundo.template.ref("TablaIdempotencia")
    item = client("dynamodb").get_item(TableName=tabla, Key={"clave": {"S": "cobro:PED-CRASH-0"}}).get("Item")
    assert item is None
    assert mundo.proveedores.pasarela.cobros_de("PED-CRASH-0") == 0


def test_reserved_concurrency_exhausted_throttles_before_the_handler_runs(mundo, control):
    from sam_emulator.platform_faults import LambdaThrottled

    # GIVEN every reserved slot of the charge function is taken by invocations in flight
    cobro = mundo.functions.by_id["CobroFunction"]
    ocupadas = [control.invocation(cobro.name, {}, 60, None) for _ in range(cobro.reserved_concurrency)]
    for ocupada in ocupadas:
        ocupada.__enter__()
    try:
        # WHEN one more invocation arrives
        with pytest.raises(LambdaThrottled) as error:
            cobro.invoke(_cobro("PED-THROTTLE-1"))
    finally:
        for ocupada in reversed(ocupadas):  # each restores the invocation it found current
            ocupada.__exit__(None, None, None)
    # THEN it got Lambda's throttling error and the gateway never saw it
    assert error.value.error_type == "Lambda.TooManyRequestsException"
    assert mundo.proveedores.pasarela.cobros_de("PED-THROTTLE-1") == 0


def test_moto_lambda_reports_the_platform_error_name_to_step_functions(mundo, control):
    from sam_emulator.deaths import Cut
    from sam_emulator.platform_faults import LambdaTimeout

    # GIVEN a timed-out charge invocation reached through moto's Lambda (the workflow's lambda:invoke path)
    control.set_plan(_solo_la_primera(Cut(LambdaTimeout, where="after:http POST /cobros")))
    cobro = mundo.functions.by_id["CobroFunction"]
    # what Registro.invocar reads of moto's LambdaFunction
    funcion = SimpleNamespace(function_name=cobro.name, function_arn=f"arn:{cobro.name}", timeout=cobro.timeout_s)
    # WHEN invoked
    resultado, errored, _ = mundo.lambda_registry.invoke(funcion, _cobro("PED-TIMEOUT-2"))
    # THEN the errored result carries Step Functions' error name
    assert errored
    assert json.loads(resultado)["errorType"] == "Sandbox.Timedout"


def test_workflow_charge_timeout_is_seen_as_sandbox_timedout_in_the_history(mundo, control):
    from mercadofresco.aws import client
    from sam_emulator.deaths import Cut
    from sam_emulator.platform_faults import LambdaTimeout

    # GIVEN the workflow's first charge attempt times out after the gateway charged
    control.set_plan(_solo_la_primera(Cut(LambdaTimeout, where="after:http POST /cobros")))
    entrada = load_event("flujo/pedido-creado.json")
    pedido_id = json.loads(entrada[0]["body"])["detail"]["pedido_id"]
    sfn = client("stepfunctions")
    # WHEN an execution runs to its end
    arn = sfn.start_execution(
        stateMachineArn=mundo.provisioner.state_machines["ProcesarPedido"], name="timeout-1", input=json.dumps(entrada)
    )["executionArn"]
    wait_until(lambda: sfn.describe_execution(executionArn=arn)["status"] in TERMINALES, "the execution to end")
    # THEN its history shows Lambda's timeout for the charge task, and the gateway charged once
    eventos = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    errores = {d.get("error") for e in eventos for k, d in e.items() if k.endswith("EventDetails") and "error" in d}
    assert "Sandbox.Timedout" in errores, [(k, d) for e in eventos for k, d in e.items() if k.endswith("EventDetails")]
    assert mundo.proveedores.pasarela.cobros_de(pedido_id) == 1


def test_throttled_sqs_batch_is_not_deleted_and_returns_to_the_queue(mundo, control):
    from mercadofresco.aws import client
    from sam_emulator.deaths import Throttle

    # GIVEN the ERP consumer's mapping and a message in its queue, and the function throttled
    mapeo = next(
        m for m in mundo.mappings if m.function.logical_id == "Consumidores/ErpFunction" and "Stock" not in m.queue_url
    )
    sqs = client("sqs")
    sqs.purge_queue(QueueUrl=mapeo.queue_url)  # what earlier tests' confirmations fanned out
    cuerpo = json.dumps(json.loads(load_event("erp-pedido-confirmado.json")["Records"][0]["body"]))
    sqs.send_message(QueueUrl=mapeo.queue_url, MessageBody=cuerpo)
    mensajes = sqs.receive_message(QueueUrl=mapeo.queue_url, MaxNumberOfMessages=1, VisibilityTimeout=0)["Messages"]
    control.set_plan(lambda inv: Throttle())
    # WHEN the mapping processes the batch
    mapeo.process(sqs, mensajes)
    # THEN the message is still in the queue (to be received again) and the ERP saw nothing
    atributos = sqs.get_queue_attributes(QueueUrl=mapeo.queue_url, AttributeNames=["ApproximateNumberOfMessages"])
    assert int(atributos["Attributes"]["ApproximateNumberOfMessages"]) == 1
    assert control.throttled["mercadofresco-erp"] >= 1
    assert not [e for e in mundo.proveedores["erp"].efectos if e["cuerpo"].get("pedido_id") == "PED-2026-084417"]
