"""The same faults on both engines (issue 37): no charge without a confirmed or refunded order, nothing stuck.

The faults of the chaos campaign that touch the workflow, each as the engine meets it
(``tests/contract/motores.py``): the invocation that charges (or refunds) dying after the gateway acted,
or before; the gateway's read timeouts; an unknown outcome resolved by asking again past the lease; the
claim's close throttled; the charging function throttled; two starts of one order. Every test ends
with the six invariants judged as the chaos campaign judges them (``violaciones``).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from mercadofresco.idempotency import IdempotencyPersistenceError
from mercadofresco_local.proveedores import Fallo
from sam_emulator.platform_faults import LambdaCrashed, LambdaTimeout

from tests.conftest import HANG_GUARD_S, load_event
from tests.contract.conftest import READ_TIMEOUT_S
from tests.contract.motores import SIN_METRICAS, estrangular_cierre, violaciones
from tests.fixtures.flujo import tiempos_plantilla

pytestmark = [pytest.mark.integration, SIN_METRICAS]

PEDIDO = "PED-2026-084417"
TIEMPOS = tiempos_plantilla()
BLOQUEO_COBRO_S = TIEMPOS.leases_s["CobroFunction"]
ESPERA_BLOQUEO_S = TIEMPOS.workflows["ProcesarPedido"].waits_s["EsperarFinBloqueo"]
FALLOS_DE_PLATAFORMA = pytest.mark.parametrize(
    "fallo", [LambdaTimeout, LambdaCrashed], ids=["sandbox-timedout", "lambda-unknown"]
)
# Billed units of the unknown-outcome paths (an order of 2 lines).
UNIDADES = {
    "resuelto_confirmado": {"step_functions": 11, "durable": 8},
    "compensado": {"step_functions": 17, "durable": 10},
    "reintentado": {"step_functions": 8, "durable": 7},
}


@FALLOS_DE_PLATAFORMA
def test_invocation_dying_after_the_gateway_charged_is_resolved_by_asking_again_and_confirmed(motor, fallo):
    # GIVEN the invocation that charges dies right after the gateway charged (its answer is lost)
    motor.fallar("cobro", fallo, tras_el_real=True, veces=1)
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the unknown outcome is asked again with the same key past the charge's lease, and confirmed
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado"), resultado.causa
    assert resultado.esperas_s == [ESPERA_BLOQUEO_S] and ESPERA_BLOQUEO_S > BLOQUEO_COBRO_S
    assert motor.pasarela.cobros_de(PEDIDO) == 1 and motor.pasarela.reembolsos_de(PEDIDO) == 0
    assert len(motor.confirmaciones()) == 1
    assert resultado.unidades == UNIDADES["resuelto_confirmado"][motor.nombre]
    assert violaciones(motor, PEDIDO) == []


def test_record_never_completed_after_charging_waits_out_the_lease_and_the_gateway_deduplicates(motor):
    # GIVEN the gateway charged but cobro:{id} was never completed (DynamoDB failed the completion once)
    store = _store_de_cobros(motor)
    completar = store.records.complete
    quedan = [1]

    def completar_o_fallar(*args: Any, **kwargs: Any) -> bool:
        if quedan[0]:
            quedan[0] -= 1
            raise IdempotencyPersistenceError("the completion of the idempotency record did not happen")
        return completar(*args, **kwargs)

    store.records.complete = completar_o_fallar
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it waited past the EN_CURSO lease, took the key over and asked the gateway with the same
    # Idempotency-Key: the gateway answered with its first charge; one charge, confirmed
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado"), resultado.causa
    assert resultado.esperas_s == [ESPERA_BLOQUEO_S]
    assert motor.pasarela.llamadas["/cobros"] == 2 and motor.pasarela.cobros_de(PEDIDO) == 1
    assert violaciones(motor, PEDIDO) == []


def test_gateway_read_timeouts_after_charging_are_asked_again_with_the_same_key_and_charge_once(motor):
    # GIVEN a gateway that charges but answers after the client's read timeout, on both HTTP attempts
    motor.pasarela.fallos.programar(Fallo.latencia(READ_TIMEOUT_S * 3, proveedor="pasarela", veces=2))
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the key was released (a timeout of an idempotent call), asked again at once, one charge, confirmed
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado"), resultado.causa
    assert resultado.esperas_s == [] and motor.pasarela.llamadas["/cobros"] == 3
    assert motor.pasarela.cobros_de(PEDIDO) == 1
    assert resultado.unidades == UNIDADES["reintentado"][motor.nombre]
    assert violaciones(motor, PEDIDO) == []


def test_every_charge_answer_lost_is_compensated_with_one_reembolso_and_a_notice(motor):
    # GIVEN every invocation that charges dies after the gateway acted (the first one charged)
    motor.fallar("cobro", LambdaTimeout, tras_el_real=True, veces=None)
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN after asking again twice past the lease it refunds (reembolso:{id}), tells the customer, and says so
    assert (resultado.estado, resultado.error) == ("FAILED", "CobroNoCompletado")
    assert "refund" in resultado.causa and "No charge remains" in resultado.causa
    assert resultado.esperas_s == [ESPERA_BLOQUEO_S] * 2
    assert motor.pasarela.cobros_de(PEDIDO) == 1 and motor.pasarela.reembolsos_de(PEDIDO) == 1
    assert motor.desenlace(PEDIDO) == {"estado": "NO_CONFIRMADO", "motivo": "cobro-no-confirmado"}
    assert resultado.unidades == UNIDADES["compensado"][motor.nombre]
    assert violaciones(motor, PEDIDO) == []
    # AND the order stays claimed with its outcome: a replay is a duplicate, never a second charge
    assert motor.ejecutar(load_event("flujo/pedido-duplicado.json")).final == "Duplicado"
    assert motor.pasarela.cobros_de(PEDIDO) == 1


def test_charge_dying_before_the_gateway_every_time_ends_not_confirmed_with_nothing_to_refund(motor):
    # GIVEN every invocation that charges dies before calling the gateway
    motor.fallar("cobro", LambdaCrashed, tras_el_real=False, veces=None)
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the refund's 404 ("nothing to refund") proves there is no charge: not confirmed, customer told
    assert (resultado.estado, resultado.error) == ("FAILED", "CobroNoCompletado")
    assert motor.pasarela.llamadas["/cobros"] == 0 and motor.pasarela.llamadas["/reembolsos"] == 1
    assert motor.pasarela.cobros_de(PEDIDO) == 0 and motor.pasarela.reembolsos_de(PEDIDO) == 0
    # AND cobro:{id} is closed with that outcome: a late charge request for this order gets it, not a charge
    assert motor.flujo.registro_idempotencia(f"cobro:{PEDIDO}")["estado"]["S"] == "FALLIDO"
    assert violaciones(motor, PEDIDO) == []


def test_refund_dying_after_refunding_is_asked_again_and_refunds_once(motor):
    # GIVEN a confirmation that cannot be published (so the order is refunded) and the invocation that
    # refunds dying right after the gateway refunded
    import boto3

    boto3.client("sns").delete_topic(TopicArn=motor.flujo.fisicos["TopicPedidoConfirmado"]["Ref"])
    motor.fallar("reembolso", LambdaTimeout, tras_el_real=True, veces=1)
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the refund's unknown outcome is asked again past the lease with the same key: one refund
    assert (resultado.estado, resultado.error) == ("FAILED", "PedidoCancelado"), resultado.causa
    assert resultado.esperas_s == [ESPERA_BLOQUEO_S]
    assert motor.pasarela.cobros_de(PEDIDO) == 1 and motor.pasarela.reembolsos_de(PEDIDO) == 1
    (evento,) = motor.eventos_bus()
    assert evento["detail-type"] == "PedidoCancelado" and evento["detail"]["referencia_reembolso"].startswith("re_")
    assert motor.desenlace(PEDIDO)["estado"] == "REEMBOLSADO"
    assert violaciones(motor, PEDIDO) == []


def test_reclamo_close_throttled_twice_is_retried_and_the_order_confirmed(motor):
    # GIVEN DynamoDB throttling the claim's close twice
    with estrangular_cierre(PEDIDO, veces=2) as rechazados:
        # WHEN the workflow runs
        resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the close was retried and the order ends confirmed, its claim closed
    assert rechazados == [2]
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado"), resultado.causa
    assert motor.desenlace(PEDIDO) == {"estado": "CONFIRMADO", "motivo": None}
    assert violaciones(motor, PEDIDO) == []


def test_reclamo_close_throttled_for_good_ends_alarmed_with_the_repair(motor):
    # GIVEN DynamoDB throttling the claim's close past every retry
    with estrangular_cierre(PEDIDO, veces=None):
        # WHEN the workflow runs
        resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it does not end with the claim silently EN_CURSO: it fails as ReclamoSinCerrar (the failed
    # executions' alarm), whose cause names the record and the runbook that repairs it
    assert (resultado.estado, resultado.error) == ("FAILED", "ReclamoSinCerrar")
    assert "pedido:{pedido_id}" in resultado.causa and "runbooks/" in resultado.causa
    assert motor.flujo.reclamo(PEDIDO)["estado"]["S"] == "EN_CURSO"
    assert motor.pasarela.cobros_de(PEDIDO) == 1 and len(motor.confirmaciones()) == 1
    assert violaciones(motor, PEDIDO, fin_alarmado=True) == []


def test_reclamo_taken_by_another_owner_while_charging_cannot_be_closed_and_ends_alarmed(motor):
    # GIVEN the claim pedido:{id} changing owner while the order is charged (what a close whose condition
    # fails looks like: another execution took over a lease that lapsed)
    import boto3

    def robar_reclamo(seguir: Any) -> Any:
        boto3.client("dynamodb").update_item(
            TableName=motor.flujo.fisicos["TablaIdempotencia"]["Ref"],
            Key={"clave": {"S": f"pedido:{PEDIDO}"}},
            UpdateExpression="SET propietario = :otro",
            ExpressionAttributeValues={":otro": {"S": "otra-ejecucion"}},
        )
        return seguir()

    motor.envolver_operacion("cobro", robar_reclamo)
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it does not end confirmed with a claim it does not own: ReclamoSinCerrar, the record untouched
    assert (resultado.estado, resultado.error) == ("FAILED", "ReclamoSinCerrar")
    reclamo = motor.flujo.reclamo(PEDIDO)
    assert reclamo["estado"]["S"] == "EN_CURSO" and reclamo["propietario"]["S"] == "otra-ejecucion"
    assert violaciones(motor, PEDIDO, fin_alarmado=True) == []


def test_charging_function_throttled_a_few_times_waits_and_charges_once(motor):
    # GIVEN the function that charges throttled for its next 3 invocations (a peak)
    motor.estrangular(veces=3)
    # WHEN an order arrives
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it waits for capacity instead of failing, and is charged once
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado"), resultado.causa
    assert motor.pasarela.cobros_de(PEDIDO) == 1
    assert violaciones(motor, PEDIDO) == []


def test_charging_function_throttled_for_good_tells_the_customer_without_charging(motor):
    if motor.nombre == "durable":
        pytest.skip(
            "not expressible on the durable engine: the charge is code inside the durable function, so no "
            "step of the saga runs while the function is throttled and none can tell the customer; the service "
            "retries the invocation and then fails the execution (the local runner after 5 failed invocations), "
            "before the claim was taken: the order goes to the function's on-failure destination, not to a "
            "'not confirmed' notice (docs/decisions/0140-step-functions-or-durable-functions.md)"
        )
    # GIVEN the function that charges throttled for good
    motor.estrangular(veces=None)
    # WHEN an order arrives
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN after its bounded capacity waits it ends "not confirmed": nothing called, the customer told
    assert (resultado.estado, resultado.error) == ("FAILED", "PlataformaOcupada")
    assert motor.pasarela.llamadas["/cobros"] == 0
    assert motor.desenlace(PEDIDO) == {"estado": "NO_CONFIRMADO", "motivo": "plataforma-ocupada"}
    assert violaciones(motor, PEDIDO) == []


def test_two_starts_of_one_pedido_make_one_cobro_one_confirmation_and_no_reembolso(motor):
    # GIVEN a first execution held at its charge (its claim taken) until the test lets it go
    cobrando, soltar = threading.Event(), threading.Event()

    def retener(seguir: Any) -> Any:
        if not cobrando.is_set():
            cobrando.set()
            assert soltar.wait(HANG_GUARD_S), "the test never let the charge go"
        return seguir()

    motor.envolver_operacion("cobro", retener)
    nombre = "pedido-PED-2026-084417"  # claves.ejecucion_pedido: the durable start's key (the runner does not dedup)
    original = motor.arrancar(load_event("flujo/pedido-creado.json"), nombre=nombre)
    assert cobrando.wait(HANG_GUARD_S), "the first execution never reached its charge"
    # WHEN the redelivery runs to its end while the first is charging, and then the first goes on
    redelivery = motor.esperar(motor.arrancar(load_event("flujo/pedido-duplicado.json"), nombre=f"{nombre}-bis"))
    soltar.set()
    primero = motor.esperar(original)
    # THEN one ends confirmed and the other as a duplicate: one charge, no refund, one confirmation
    assert sorted([primero.final, redelivery.final]) == ["Confirmado", "Duplicado"]
    assert motor.pasarela.cobros_de(PEDIDO) == 1 and motor.pasarela.reembolsos_de(PEDIDO) == 0
    assert len(motor.confirmaciones()) == 1
    # AND a later replay of the same order is a duplicate too
    assert motor.ejecutar(load_event("flujo/pedido-duplicado.json")).final == "Duplicado"
    assert violaciones(motor, PEDIDO) == []


def _store_de_cobros(motor: Any) -> Any:
    """The idempotency store the charge writes through, in whichever engine charges."""
    if motor.nombre == "durable":
        return motor.app.pasos.operaciones.store
    return motor.flujo.modulo("CobroFunction").operaciones.store
