"""The order workflow under the platform's own faults (issue 15): no charge without a confirmed or refunded order.

Each test is a regression test of one defect of the previous workflow (run them against it with
``MF_ASL_FLUJO``, see conftest.py): the real ASL on moto's interpreter, the real ``cobro`` and
``reclamo`` handlers, the loopback gateway that deduplicates on ``Idempotency-Key``. A platform fault
is a wrapper around the real handler that raises the exception Lambda's caller would see
(``sam_emulator.platform_faults``: ``Sandbox.Timedout``, ``Lambda.Unknown``,
``Lambda.TooManyRequestsException``). Waits are recorded, not slept, and move the handlers' clock:
a Wait that outlasts a lease really lets it lapse.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from mercadofresco.idempotency import IdempotencyPersistenceError
from sam_emulator.moto_lambda import LambdaContext
from sam_emulator.platform_faults import LambdaCrashed, LambdaThrottled, LambdaTimeout

from tests.conftest import load_event
from tests.fixtures.flujo import tiempos_plantilla

pytestmark = pytest.mark.integration

PEDIDO = "PED-2026-084417"
TIEMPOS = tiempos_plantilla()
BLOQUEO_COBRO_S = TIEMPOS.leases_s["CobroFunction"]  # above CobroFunction's Timeout (rule E9114)
ESPERA_BLOQUEO_S = TIEMPOS.workflows["ProcesarPedido"].waits_s["EsperarFinBloqueo"]
ESPERA_CAPACIDAD_S = TIEMPOS.workflows["ProcesarPedido"].waits_s["EsperarCapacidad"]
EMAIL = "lucia.ferrer@example.com"


def _es_cobro(evento: Any) -> bool:
    return isinstance(evento, dict) and evento.get("operacion") == "cobro"


def _fallar_cobros(flujo: Any, fallo: type[Exception], *, tras_el_real: bool, veces: int | None = None) -> None:
    """Charges end in ``fallo`` (``veces`` times, or always); refunds and the claim run untouched."""
    quedan = [veces]

    def envoltura(real: Any, evento: Any, contexto: Any) -> Any:
        if not _es_cobro(evento) or quedan[0] == 0:
            return real(evento, contexto)
        if quedan[0] is not None:
            quedan[0] -= 1
        if tras_el_real:
            real(evento, contexto)  # the gateway charged (or the record answered): the answer is lost
        raise fallo(f"platform fault injected by the test: {fallo.__name__}")

    flujo.envolver("CobroFunction", envoltura)


def _no_confirmado(flujo: Any) -> dict[str, Any]:
    (evento,) = [e for e in flujo.eventos_bus() if e["detail-type"] == "PedidoNoConfirmado"]
    return evento["detail"]


def _poner(flujo: Any, item: dict[str, Any]) -> None:
    boto3.client("dynamodb").put_item(TableName=flujo.fisicos["TablaIdempotencia"]["Ref"], Item=item)


@pytest.mark.parametrize("fallo", [LambdaTimeout, LambdaCrashed], ids=["sandbox-timedout", "lambda-unknown"])
def test_workflow_cobro_answer_lost_after_charging_is_resolved_and_confirmed(flujo, pausas, fallo):
    # GIVEN a charge function that charges at the gateway and then times out / dies (the answer is lost)
    _fallar_cobros(flujo, fallo, tras_el_real=True, veces=1)
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the unknown outcome is resolved: asked again with the same key past the charge's lease, and confirmed
    assert ejecucion["status"] == "SUCCEEDED", ejecucion.get("cause")
    estados = flujo.estados(ejecucion["executionArn"])
    assert estados == [
        "ReclamarPedido", "Cobrar", "QuedaReconsulta", "EsperarFinBloqueo", "Reconsultar", "TrasRespuesta",
        "ReservarStock", "EnviarReserva", "EnviarReserva", "Confirmar", "Confirmado",
    ]  # fmt: skip
    assert pausas == [ESPERA_BLOQUEO_S] and pausas[0] > BLOQUEO_COBRO_S
    assert flujo.pasarela.cobros_de(PEDIDO) == 1 and flujo.pasarela.reembolsos_de(PEDIDO) == 0
    assert len(flujo.mensajes("ColaErp")) == 1


@pytest.mark.parametrize(
    "fallo", [LambdaCrashed, IdempotencyPersistenceError], ids=["killed-before-completion", "completion-write-failed"]
)
def test_workflow_cobro_record_never_completed_waits_out_the_lease_and_the_gateway_deduplicates(flujo, pausas, fallo):
    # GIVEN the gateway charged but the record cobro:{id} was never completed (process killed, DynamoDB throttled)
    store = flujo.modulo("CobroFunction").operaciones.store
    completar = store.records.complete
    quedan = [1]

    def completar_o_fallar(*args: Any, **kwargs: Any) -> bool:
        if quedan[0]:
            quedan[0] -= 1
            raise fallo("the completion of the idempotency record did not happen")
        return completar(*args, **kwargs)

    store.records.complete = completar_o_fallar
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it waited past the EN_CURSO lease, took the key over and asked the gateway with the same
    # Idempotency-Key: the gateway answered the first charge; one charge, confirmed
    assert ejecucion["status"] == "SUCCEEDED", ejecucion.get("cause")
    assert pausas == [ESPERA_BLOQUEO_S]
    assert flujo.pasarela.llamadas["/cobros"] == 2 and flujo.pasarela.cobros_de(PEDIDO) == 1
    assert flujo.pasarela.reembolsos_de(PEDIDO) == 0


def test_workflow_cobro_en_curso_under_another_owner_waits_out_its_lease_and_charges(flujo, pausas, reloj):
    # GIVEN cobro:{id} held EN_CURSO by another consumer, its whole lease (CobroFunction's) still ahead
    ahora = int(reloj())
    _poner(flujo, {
        "clave": {"S": f"cobro:{PEDIDO}"}, "estado": {"S": "EN_CURSO"}, "propietario": {"S": "otro"},
        "caduca_bloqueo": {"N": str(ahora + BLOQUEO_COBRO_S)}, "expira_en": {"N": str(ahora + 86400)},
    })  # fmt: skip
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN OperacionEnCurso is not retried into the lease: one Wait outlasts it, then the charge is made once
    assert ejecucion["status"] == "SUCCEEDED", ejecucion.get("cause")
    assert pausas == [ESPERA_BLOQUEO_S]
    assert flujo.pasarela.cobros_de(PEDIDO) == 1


def test_workflow_cobro_unresolved_is_compensated_with_a_reembolso_and_a_notice(flujo, pausas):
    # GIVEN every charge attempt's answer lost (the first one charged, later ones answered from the record)
    _fallar_cobros(flujo, LambdaTimeout, tras_el_real=True)
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN after asking again twice past the lease it refunds (reembolso:{id}), tells the customer, and says so
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "CobroNoCompletado"
    assert "refund" in ejecucion["cause"] and "No charge remains" in ejecucion["cause"]
    assert pausas == [ESPERA_BLOQUEO_S] * 2
    # 17 billed transitions (decision 0101): the charge's two re-asks, then the refund, in one loop
    assert flujo.estados(ejecucion["executionArn"]) == [
        "ReclamarPedido", "Cobrar",
        "QuedaReconsulta", "EsperarFinBloqueo", "Reconsultar", "QuedaReconsulta", "EsperarFinBloqueo", "Reconsultar",
        "QuedaReconsulta", "Reembolsar", "TrasRespuesta", "CobroNoConfirmado", "CerrarReclamo", "AvisarCliente",
        "NotificarNoConfirmado", "FinNoConfirmado", "CobroNoCompletado",
    ]  # fmt: skip
    assert flujo.pasarela.cobros_de(PEDIDO) == 1 and flujo.pasarela.reembolsos_de(PEDIDO) == 1
    assert _no_confirmado(flujo) == {"version": 1, "pedido_id": PEDIDO, "email": EMAIL, "motivo": "cobro-no-confirmado"}
    # the order stays claimed with its outcome: the same pedido_id is never charged again after its refund
    reclamo = flujo.reclamo(PEDIDO)
    assert reclamo["estado"]["S"] == "COMPLETADO"
    assert json.loads(reclamo["resultado"]["S"]) == {"estado": "NO_CONFIRMADO", "motivo": "cobro-no-confirmado"}
    replay = flujo.ejecutar(load_event("flujo/pedido-duplicado.json"))
    assert flujo.estados(replay["executionArn"])[-1] == "Duplicado"
    assert flujo.mensajes("ColaErp") == [] and flujo.mensajes("ColaStock") == []


def test_workflow_cobro_unresolved_and_404_ends_not_confirmed(flujo, pausas):
    # GIVEN a charge function that dies before calling the gateway, every time
    _fallar_cobros(flujo, LambdaCrashed, tras_el_real=False)
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the refund's 404 ("nothing to refund") proves there is no charge: not confirmed, customer told
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "CobroNoCompletado"
    assert flujo.pasarela.llamadas["/cobros"] == 0 and flujo.pasarela.llamadas["/reembolsos"] == 1
    assert flujo.pasarela.cobros_de(PEDIDO) == 0 and flujo.pasarela.reembolsos_de(PEDIDO) == 0
    assert _no_confirmado(flujo)["motivo"] == "cobro-no-confirmado"
    # AND cobro:{id} is closed with that outcome: a late charge request for this order gets it, not a charge
    assert flujo.registro_idempotencia(f"cobro:{PEDIDO}")["estado"]["S"] == "FALLIDO"


def test_workflow_reembolso_answer_lost_is_asked_again_in_the_same_loop_and_refunds_once(flujo, pausas):
    # GIVEN a confirmation that cannot be published (the step after the charge fails) and a refund whose
    # first answer is lost after the gateway refunded (the function timed out)
    boto3.client("sns").delete_topic(TopicArn=flujo.fisicos["TopicPedidoConfirmado"]["Ref"])
    quedan = [1]

    def perder_el_primer_reembolso(real: Any, evento: Any, contexto: Any) -> Any:
        respuesta = real(evento, contexto)
        if isinstance(evento, dict) and evento.get("operacion") == "reembolso" and quedan[0]:
            quedan[0] -= 1
            raise LambdaTimeout("platform fault injected by the test: the refund's answer is lost")
        return respuesta

    flujo.envolver("CobroFunction", perder_el_primer_reembolso)
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the refund's unknown outcome goes through the charge's loop (past the lease, the same key) and is
    # answered as a refund: one charge, one refund, the order cancelled and the customer told
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "PedidoCancelado", ejecucion.get("cause")
    estados = flujo.estados(ejecucion["executionArn"])
    i = estados.index("Reembolsar")
    assert estados[i : i + 6] == [
        "Reembolsar", "QuedaReconsulta", "EsperarFinBloqueo", "Reconsultar", "TrasRespuesta", "PedidoReembolsado",
    ]  # fmt: skip
    assert pausas == [ESPERA_BLOQUEO_S]
    assert flujo.pasarela.cobros_de(PEDIDO) == 1 and flujo.pasarela.reembolsos_de(PEDIDO) == 1
    (evento,) = flujo.eventos_bus()
    assert evento["detail-type"] == "PedidoCancelado" and evento["detail"]["referencia_reembolso"].startswith("re_")
    assert json.loads(flujo.reclamo(PEDIDO)["resultado"]["S"])["estado"] == "REEMBOLSADO"


def test_workflow_cobro_throttled_waits_for_capacity_and_does_not_fail(flujo, pausas, esperas):
    # GIVEN cobro at its reserved concurrency for its first 9 invocations (a peak)
    _fallar_cobros(flujo, LambdaThrottled, tras_el_real=False, veces=9)
    # WHEN an order arrives
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it waits for capacity (retries, then a Wait of 60 s) instead of failing, and is charged once
    assert ejecucion["status"] == "SUCCEEDED", ejecucion.get("cause")
    assert pausas == [ESPERA_CAPACIDAD_S] and len(esperas) == 8
    assert flujo.pasarela.cobros_de(PEDIDO) == 1


def test_workflow_cobro_always_throttled_notifies_without_charging_and_closes_the_reclamo(flujo, pausas):
    # GIVEN cobro throttled for good
    _fallar_cobros(flujo, LambdaThrottled, tras_el_real=False)
    # WHEN an order arrives
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN after its bounded waits it ends "not confirmed", nothing was called, the customer is told
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "PlataformaOcupada"
    assert pausas == [ESPERA_CAPACIDAD_S] * 10
    estados = flujo.estados(ejecucion["executionArn"])
    # 39 billed transitions (decision 0101): 10 rounds of Choice, Wait, Cobrar, the count in a variable
    assert estados[:5] == ["ReclamarPedido", "Cobrar", "QuedaEsperaCapacidad", "EsperarCapacidad", "Cobrar"]
    assert len(estados) == 39 and estados.count("Cobrar") == 11
    assert flujo.pasarela.llamadas["/cobros"] == 0 and flujo.pasarela.llamadas["/reembolsos"] == 0
    assert _no_confirmado(flujo)["motivo"] == "plataforma-ocupada"
    reclamo = flujo.reclamo(PEDIDO)  # closed with its outcome: a redelivery is a duplicate, never a late charge
    assert reclamo["estado"]["S"] == "COMPLETADO"
    assert json.loads(reclamo["resultado"]["S"]) == {"estado": "NO_CONFIRMADO", "motivo": "plataforma-ocupada"}


def test_workflow_dead_execution_reclamo_expires_and_a_redrive_resolves_it(flujo, reloj):
    # GIVEN an execution that claimed the order, charged it and then timed out (TimeoutSeconds): its claim
    # is EN_CURSO with a lapsed lease and cobro:{id} holds the charge
    ahora = int(reloj())
    _poner(flujo, {
        "clave": {"S": f"pedido:{PEDIDO}"}, "estado": {"S": "EN_CURSO"}, "propietario": {"S": "arn:muerta"},
        "caduca_bloqueo": {"N": str(ahora - 1)}, "expira_en": {"N": str(ahora + 86400)},
    })  # fmt: skip
    flujo.modulo("CobroFunction").lambda_handler(load_event("cobro-pedido.json"), LambdaContext("cobro", "arn:cobro"))
    assert flujo.pasarela.cobros_de(PEDIDO) == 1
    # WHEN the order is redriven
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the new execution takes the claim over and confirms the existing charge, without charging again
    assert ejecucion["status"] == "SUCCEEDED", ejecucion.get("cause")
    assert flujo.estados(ejecucion["executionArn"])[-1] == "Confirmado"
    assert flujo.pasarela.cobros_de(PEDIDO) == 1 and flujo.pasarela.llamadas["/cobros"] == 1
    assert flujo.reclamo(PEDIDO)["propietario"]["S"] == ejecucion["executionArn"]


def test_workflow_cobro_never_recorded_is_closed_after_its_compensation(flujo, pausas):
    # GIVEN a gateway that charges but a charge record that can never be completed (DynamoDB keeps failing
    # the completion): every attempt leaves cobro:{id} EN_CURSO, and nobody would ever complete it
    store = flujo.modulo("CobroFunction").operaciones.store
    completar_real = store.records.complete

    def completar(clave: str, *args: Any, **kwargs: Any) -> bool:
        if clave.startswith("cobro:"):
            raise IdempotencyPersistenceError("the completion of the idempotency record did not happen")
        return completar_real(clave, *args, **kwargs)

    store.records.complete = completar
    # WHEN the workflow runs to its end
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the unknown outcome is compensated (one charge, refunded once) and no record is left open:
    # cobro:{id} is FALLIDO, so a late request can never charge this order again (invariant 6 at rest)
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "CobroNoCompletado"
    assert flujo.pasarela.cobros_de(PEDIDO) == 1 and flujo.pasarela.reembolsos_de(PEDIDO) == 1
    assert flujo.registro_idempotencia(f"cobro:{PEDIDO}")["estado"]["S"] == "FALLIDO"
    assert flujo.reclamo(PEDIDO)["estado"]["S"] == "COMPLETADO"


def test_workflow_reclamo_that_cannot_be_closed_ends_alarmed_with_the_repair(flujo):
    # GIVEN an order whose claim pedido:{id} changes owner while it is charged (the close's condition fails:
    # what retries exhausted by DynamoDB throttling also leave behind)
    def robar_reclamo(real: Any, evento: Any, contexto: Any) -> Any:
        boto3.client("dynamodb").update_item(
            TableName=flujo.fisicos["TablaIdempotencia"]["Ref"],
            Key={"clave": {"S": f"pedido:{PEDIDO}"}},
            UpdateExpression="SET propietario = :otro",
            ExpressionAttributeValues={":otro": {"S": "otra-ejecucion"}},
        )
        return real(evento, contexto)

    flujo.envolver("CobroFunction", robar_reclamo)
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it does not end Confirmado with the claim still EN_CURSO: it fails (the failed-executions alarm)
    # as ReclamoSinCerrar, whose cause names the record and the runbook step that repairs it
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "ReclamoSinCerrar"
    assert "pedido:{pedido_id}" in ejecucion["cause"] and "runbooks/" in ejecucion["cause"]
    assert flujo.reclamo(PEDIDO)["estado"]["S"] == "EN_CURSO"
