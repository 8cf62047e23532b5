"""mercadofresco-procesar-pedido executed by moto, with the real charge handler and a loopback gateway.

Charges are counted by the gateway stand-in (what was really charged), not by the handler.
"""

from __future__ import annotations

import json
import threading
import time

import boto3
import pytest
from mercadofresco.circuit_breaker import BreakerConfig
from mercadofresco_local.proveedores import Fallo

from tests.conftest import HANG_GUARD_S, load_event

pytestmark = pytest.mark.integration

PEDIDO = "PED-2026-084417"


def _cuerpos(mensajes: list[dict]) -> list[dict]:
    return [json.loads(m["Body"]) for m in mensajes]


def test_workflow_valid_pedido_charges_once_reserves_per_sku_and_confirms(flujo):
    # GIVEN a good PedidoCreado as the pipe delivers it
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it succeeds through the confirmation, with exactly one charge at the gateway
    assert ejecucion["status"] == "SUCCEEDED"
    assert flujo.estados(ejecucion["executionArn"])[-1] == "Confirmado"
    assert flujo.pasarela.cobros_de(PEDIDO) == 1
    assert flujo.pasarela.reembolsos_de(PEDIDO) == 0
    # one reservation per line on the FIFO queue, grouped by sku, dedup id reserva:{pedido_id}:{sku}
    reservas = flujo.mensajes("ColaStock")
    assert sorted((m["Attributes"]["MessageGroupId"], m["Attributes"]["MessageDeduplicationId"]) for m in reservas) == [
        ("FRU-MAN-001", f"reserva:{PEDIDO}:FRU-MAN-001"),
        ("VER-TOM-014", f"reserva:{PEDIDO}:VER-TOM-014"),
    ]
    assert {c["tipo"] for c in _cuerpos(reservas)} == {"ReservaStock"}
    # the confirmation reaches the ERP queue (raw SNS delivery) with version and the charge reference
    (confirmacion,) = _cuerpos(flujo.mensajes("ColaErp"))
    (referencia,) = flujo.pasarela.cobros
    assert confirmacion["tipo"] == "PedidoConfirmado" and confirmacion["version"] == 1
    assert confirmacion["pedido_id"] == PEDIDO and confirmacion["referencia_cobro"] == referencia
    # an explicit payload: what the ERP and the e-mail read, never the card token
    assert confirmacion["email"] == "lucia.ferrer@example.com" and confirmacion["importe_centimos"] == 4820
    assert set(confirmacion) == {
        "tipo", "version", "pedido_id", "cliente_id", "email", "importe_centimos", "moneda", "lineas",
        "referencia_cobro", "confirmado_en",
    }  # fmt: skip
    # the claim is closed with the outcome, without a lease, and lives 24 h past the execution's bound
    reclamo = flujo.reclamo(PEDIDO)
    assert reclamo["estado"]["S"] == "COMPLETADO" and "caduca_bloqueo" not in reclamo
    assert json.loads(reclamo["resultado"]["S"]) == {"estado": "CONFIRMADO", "motivo": None}
    # AND the billed path is the working states only: claim, charge, one Map + one send per line, publish, close
    assert flujo.estados(ejecucion["executionArn"]) == [
        "ReclamarPedido", "Cobrar", "ReservarStock", "EnviarReserva", "EnviarReserva", "Confirmar", "Confirmado",
    ]  # fmt: skip
    assert int(reclamo["expira_en"]["N"]) >= int(time.time()) + 24 * 3600


def test_workflow_transient_gateway_503_is_retried_and_charges_once(flujo, esperas):
    # GIVEN a gateway failing the next 3 calls with 503 (the HTTP layer makes 2 per invocation)
    flujo.proveedores.fallos.programar(Fallo.estado(503, proveedor="pasarela", veces=3))
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the key was released, so ReintentarCobro asked again at once, and one charge exists
    assert ejecucion["status"] == "SUCCEEDED"
    assert flujo.estados(ejecucion["executionArn"])[-1] == "Confirmado"
    assert "ReintentarCobro" in flujo.estados(ejecucion["executionArn"])
    assert flujo.registro.invocations["mercadofresco-cobro"] == 2
    assert flujo.registro.errors["mercadofresco-cobro"] == 1
    assert esperas == []
    assert flujo.pasarela.llamadas["/cobros"] == 4
    assert flujo.pasarela.cobros_de(PEDIDO) == 1


def test_workflow_declined_card_is_not_retried_and_publishes_the_rejection(flujo, esperas):
    # GIVEN a card the gateway declines
    flujo.proveedores.fallos.rechazar_tarjeta("tok_rechazada_fondos")
    # WHEN the workflow runs for that order
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-rechazado.json"))
    # THEN one call, no retry, no charge, PedidoRechazado on the bus, the claim closed RECHAZADO, nothing reserved
    assert ejecucion["status"] == "SUCCEEDED"
    # (7 billed transitions: docs/decisions/0101-transiciones-del-flujo.md)
    assert flujo.estados(ejecucion["executionArn"]) == [
        "ReclamarPedido", "Cobrar", "TarjetaRechazada", "CerrarReclamo", "AvisarCliente", "NotificarRechazo",
        "Rechazado",
    ]  # fmt: skip
    assert flujo.pasarela.llamadas["/cobros"] == 1 and esperas == []
    assert flujo.registro.invocations["mercadofresco-cobro"] == 1
    assert flujo.pasarela.cobros_de("PED-2026-084418") == 0
    (evento,) = flujo.eventos_bus()
    assert evento["detail-type"] == "PedidoRechazado" and evento["detail"]["pedido_id"] == "PED-2026-084418"
    assert evento["detail"]["email"]  # the e-mail consumer tells the customer (rule mercadofresco-avisos-cliente)
    assert _desenlace_del_reclamo(flujo, "PED-2026-084418") == "RECHAZADO"
    assert flujo.mensajes("ColaStock") == [] and flujo.mensajes("ColaErp") == []
    # AND a redelivery of the same PedidoCreado (a DLQ redrive, a late duplicate) ends at the claim:
    # the order was answered once and is never run by a second execution (invariant 1)
    replay = flujo.ejecutar(load_event("flujo/pedido-rechazado.json"))
    assert flujo.estados(replay["executionArn"])[-1] == "Duplicado"
    assert flujo.registro.invocations["mercadofresco-cobro"] == 1
    assert flujo.eventos_bus() == []  # the customer is not told a second time (mensajes() consumed the first)


def test_workflow_open_circuit_fails_fast_without_calling_the_gateway(flujo, valkey, esperas):
    # GIVEN the shared pasarela circuit open
    from mercadofresco.circuit_breaker import CircuitBreaker

    CircuitBreaker("pasarela", valkey).force("abierto")
    # WHEN an order arrives
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN the execution fails at once with the customer-facing cause, and the gateway saw nothing
    assert ejecucion["status"] == "FAILED"
    assert ejecucion["error"] == "CircuitoAbierto"
    assert "retry in a few minutes" in ejecucion["cause"]
    assert len(flujo.estados(ejecucion["executionArn"])) == 8  # billed transitions (decision 0101)
    assert flujo.pasarela.llamadas["/cobros"] == 0 and esperas == []
    assert flujo.registro.invocations["mercadofresco-cobro"] == 1
    # the claim is closed with that outcome: the customer retries with a new order, and a redelivery of
    # this one can no longer charge an order the customer was told had failed
    assert _desenlace_del_reclamo(flujo, PEDIDO) == "NO_CONFIRMADO"
    # and the customer is told (PedidoNoConfirmado, with the address to write to)
    (evento,) = flujo.eventos_bus()
    assert evento["detail-type"] == "PedidoNoConfirmado"
    assert evento["detail"] == {
        "version": 1, "pedido_id": PEDIDO, "email": "lucia.ferrer@example.com", "motivo": "pasarela-no-disponible",
    }  # fmt: skip


def _desenlace_del_reclamo(flujo, pedido_id: str) -> str:
    """The outcome the order's claim pedido:{id} was closed with (it must be COMPLETADO, lease gone)."""
    reclamo = flujo.reclamo(pedido_id)
    assert reclamo is not None and reclamo["estado"]["S"] == "COMPLETADO" and "caduca_bloqueo" not in reclamo
    return json.loads(reclamo["resultado"]["S"])["estado"]


def _pedido(pedido_id: str) -> list[dict]:
    """flujo/pedido-creado.json as another order."""
    entrada = load_event("flujo/pedido-creado.json")
    evento = json.loads(entrada[0]["body"])
    evento["detail"]["pedido_id"] = pedido_id
    entrada[0]["body"] = json.dumps(evento)
    return entrada


def test_workflow_long_gateway_outage_opens_the_circuit_and_later_orders_fail_fast(flujo):
    # GIVEN a gateway down for good (every call 503)
    flujo.proveedores.fallos.programar(Fallo.estado(503, proveedor="pasarela"))
    # WHEN orders keep arriving, one after another
    errores, llamadas = [], []
    for n in range(4):
        antes = flujo.pasarela.llamadas["/cobros"] + flujo.pasarela.llamadas["/reembolsos"]
        errores.append(flujo.ejecutar(_pedido(f"PED-2026-0900{n}"))["error"])
        llamadas.append(flujo.pasarela.llamadas["/cobros"] + flujo.pasarela.llamadas["/reembolsos"] - antes)
    # THEN the first order exhausts its bounded calls (charge <= 12, refund <= 12: docs/worst-case-attempts.md)
    # without ever learning whether the gateway charged: it says so (ReembolsoNoCompletado: an operator checks)
    # and the customer is told; the shared breaker opened, so the next orders fail fast without any call
    assert errores[0] == "ReembolsoNoCompletado" and 0 < llamadas[0] <= 24
    assert errores[1:] == ["CircuitoAbierto"] * 3 and llamadas[1:] == [0, 0, 0]
    assert sum(llamadas) <= BreakerConfig().consecutive_failures  # no call after the breaker opened
    assert flujo.pasarela.cobros == {}
    motivos = [e["detail"]["motivo"] for e in flujo.eventos_bus() if e["detail-type"] == "PedidoNoConfirmado"]
    assert sorted(motivos) == ["pasarela-no-disponible"] * 3 + ["reembolso-pendiente"]


def test_workflow_failure_after_the_cobro_refunds_exactly_once(flujo):
    # GIVEN the confirmation topic gone (the step after the charge and the reservations fails) and
    # the gateway cutting the first refund's answer after refunding (the HTTP layer retries it)
    boto3.client("sns").delete_topic(TopicArn=flujo.fisicos["TopicPedidoConfirmado"]["Ref"])
    flujo.proveedores.fallos.programar(Fallo.conexion_cortada(tras_procesar=True, ruta="/reembolsos", veces=1))
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it compensates: one charge, exactly one refund, PedidoCancelado, and the execution fails visibly
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "PedidoCancelado"
    estados = flujo.estados(ejecucion["executionArn"])
    assert "Reembolsar" in estados and len(estados) == 12 + 2 * 2  # 12 + 2 per line (decision 0101)
    assert flujo.pasarela.cobros_de(PEDIDO) == 1
    assert flujo.pasarela.reembolsos_de(PEDIDO) == 1
    assert flujo.pasarela.llamadas["/reembolsos"] == 2
    (evento,) = flujo.eventos_bus()
    assert evento["detail-type"] == "PedidoCancelado"
    assert evento["detail"]["referencia_reembolso"].startswith("re_")
    # and every line's reservation is released in its own FIFO group, delivered after the reservation
    por_grupo: dict[str, list[tuple[str, str]]] = {}
    while lote := flujo.mensajes("ColaStock"):
        for m in lote:
            atributos = m["Attributes"]
            por_grupo.setdefault(atributos["MessageGroupId"], []).append(
                (json.loads(m["Body"])["tipo"], atributos["MessageDeduplicationId"])
            )
    assert por_grupo == {
        sku: [("ReservaStock", f"reserva:{PEDIDO}:{sku}"), ("LiberacionStock", f"liberacion:{PEDIDO}:{sku}")]
        for sku in ("FRU-MAN-001", "VER-TOM-014")
    }


def test_workflow_two_starts_of_one_pedido_make_one_cobro_and_no_reembolso(flujo):
    # GIVEN a first execution held at its charge (its claim taken) until the test lets it go
    cobrando, soltar = threading.Event(), threading.Event()

    def retener(real, evento, contexto):
        if not cobrando.is_set():
            cobrando.set()
            assert soltar.wait(HANG_GUARD_S), "the test never let the charge go"
        return real(evento, contexto)

    flujo.envolver("CobroFunction", retener)
    ejecuciones = {"original": flujo.arrancar(load_event("flujo/pedido-creado.json"), nombre="original")}
    assert cobrando.wait(HANG_GUARD_S), "the first execution never reached its charge"
    # WHEN the redelivery runs to its end while the first is charging, and then the first goes on
    ejecuciones["redelivery"] = flujo.arrancar(load_event("flujo/pedido-duplicado.json"), nombre="redelivery")
    resultados = {"redelivery": flujo.esperar(ejecuciones["redelivery"])}
    soltar.set()
    resultados["original"] = flujo.esperar(ejecuciones["original"])
    # THEN both succeed, one through the charge and one as a duplicate; one charge, no refund, one confirmation
    assert {r["status"] for r in resultados.values()} == {"SUCCEEDED"}
    finales = sorted(flujo.estados(arn)[-1] for arn in ejecuciones.values())
    assert finales == ["Confirmado", "Duplicado"]
    assert flujo.pasarela.cobros_de(PEDIDO) == 1
    assert flujo.pasarela.reembolsos_de(PEDIDO) == 0
    assert flujo.registro.invocations["mercadofresco-cobro"] == 1
    assert len(flujo.mensajes("ColaErp")) == 1
    # AND a later replay of the same order is a duplicate too
    replay = flujo.ejecutar(load_event("flujo/pedido-duplicado.json"))
    assert flujo.estados(replay["executionArn"])[-1] == "Duplicado"
    assert flujo.pasarela.cobros_de(PEDIDO) == 1


@pytest.mark.parametrize(
    ("evento", "motivo"),
    [
        ("flujo/pedido-version-2.json", "version-desconocida"),
        ("flujo/pedido-campo-ausente.json", "campo-ausente"),
    ],
)
def test_workflow_unreadable_event_goes_to_the_dlq_with_its_reason_without_charging(flujo, evento, motivo):
    # GIVEN an order event the workflow cannot read
    entrada = load_event(evento)
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(entrada)
    # THEN it fails as EventoInvalido, the untouched body is in the order DLQ with its reason, nothing charged
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "EventoInvalido"
    (carta,) = flujo.mensajes("ColaPedidosFallidos")
    assert carta["Body"] == entrada[0]["body"]
    atributos = {k: v["StringValue"] for k, v in carta["MessageAttributes"].items()}
    assert atributos["mf-motivo"] == motivo
    assert atributos["mf-cola-origen"] == flujo.fisicos["ColaPedidos"]["QueueUrl"]
    assert flujo.pasarela.llamadas["/cobros"] == 0
    assert flujo.registro.invocations["mercadofresco-cobro"] == 0


def test_workflow_version_as_text_is_version_desconocida(flujo):
    # GIVEN an order whose version is the string "1" (a producer bug, not the contract's integer)
    entrada = load_event("flujo/pedido-creado.json")
    evento = json.loads(entrada[0]["body"])
    evento["detail"]["version"] = "1"
    entrada[0]["body"] = json.dumps(evento)
    # WHEN the workflow runs THEN it is refused with its reason, never compared as a number, nothing charged
    ejecucion = flujo.ejecutar(entrada)
    assert ejecucion["error"] == "EventoInvalido"
    (carta,) = flujo.mensajes("ColaPedidosFallidos")
    assert carta["MessageAttributes"]["mf-motivo"]["StringValue"] == "version-desconocida"
    assert flujo.pasarela.llamadas["/cobros"] == 0


def test_workflow_non_json_body_goes_to_the_dlq_without_claiming_or_charging(flujo):
    # GIVEN a body that is not JSON (only a hand-sent message can be: the rule writes JSON)
    entrada = load_event("flujo/pedido-malformado.json")
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(entrada)
    # THEN the untouched body is in the order DLQ with its reason, nothing claimed, nothing charged
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "EventoInvalido"
    (carta,) = flujo.mensajes("ColaPedidosFallidos")
    assert carta["Body"] == entrada[0]["body"]
    assert carta["MessageAttributes"]["mf-motivo"]["StringValue"] == "json-invalido"
    assert flujo.pasarela.llamadas["/cobros"] == 0
    assert flujo.registro.invocations["mercadofresco-cobro"] == 0


def test_workflow_batch_of_two_pedidos_fails_without_charging(flujo):
    # GIVEN a batch of two records (the pipe misconfigured with BatchSize > 1)
    lote = load_event("flujo/pedido-creado.json") + load_event("flujo/pedido-rechazado.json")
    # WHEN the workflow runs
    ejecucion = flujo.ejecutar(lote)
    # THEN it refuses loudly instead of silently handling only the first order
    assert ejecucion["status"] == "FAILED" and ejecucion["error"] == "LoteNoAdmitido"
    assert flujo.pasarela.llamadas["/cobros"] == 0
