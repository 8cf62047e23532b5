"""The order workflow's paths, the same on both engines: outcomes, charges, refunds, claims, customers told.

Each test runs once on the state machine (moto's interpreter) and once on the durable function (the
SDK's local runner), against the same moto resources and the same gateway stand-in; charges and
refunds are counted by the gateway per ``Idempotency-Key``. The billed units of each path are pinned
per engine (``UNIDADES``): the state machine's transitions, the durable execution's operations.
"""

from __future__ import annotations

import json

import boto3
import pytest
from mercadofresco.circuit_breaker import CircuitBreaker

from tests.conftest import load_event
from tests.contract.motores import SIN_METRICAS, violaciones

pytestmark = [pytest.mark.integration, SIN_METRICAS]

PEDIDO = "PED-2026-084417"
RECHAZADO = "PED-2026-084418"
EMAIL = "lucia.ferrer@example.com"
SKUS = ("FRU-MAN-001", "VER-TOM-014")
# Billed units per path (an order of 2 lines): transitions (docs/decisions/0101-transiciones-del-flujo.md)
# and durable operations (the start, one per step and wait, one per step retry).
UNIDADES = {
    "confirmado": {"step_functions": 7, "durable": 6},
    "rechazado": {"step_functions": 7, "durable": 5},
    "circuito_abierto": {"step_functions": 8, "durable": 5},
    "reembolsado": {"step_functions": 16, "durable": 9},
    "evento_invalido": {"step_functions": 4, "durable": 3},
}


def _cuerpos(mensajes: list[dict]) -> list[dict]:
    return [json.loads(m["Body"]) for m in mensajes]


def test_valid_pedido_charges_once_reserves_per_sku_confirms_and_closes_the_reclamo(motor):
    # GIVEN a good PedidoCreado as the pipe delivers it
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it ends confirmed, with exactly one charge at the gateway and no refund
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Confirmado")
    assert motor.pasarela.cobros_de(PEDIDO) == 1 and motor.pasarela.reembolsos_de(PEDIDO) == 0
    # one reservation per line on the FIFO queue, grouped by sku, dedup id reserva:{pedido_id}:{sku}
    reservas = motor.flujo.mensajes("ColaStock")
    assert sorted((m["Attributes"]["MessageGroupId"], m["Attributes"]["MessageDeduplicationId"]) for m in reservas) == [
        (sku, f"reserva:{PEDIDO}:{sku}") for sku in SKUS
    ]
    assert {c["tipo"] for c in _cuerpos(reservas)} == {"ReservaStock"}
    # the confirmation: the explicit payload (never the card token) and the charge's reference
    (confirmacion,) = motor.confirmaciones()
    (referencia,) = motor.pasarela.cobros
    assert confirmacion["referencia_cobro"] == referencia and confirmacion["email"] == EMAIL
    assert set(confirmacion) == {
        "tipo", "version", "pedido_id", "cliente_id", "email", "importe_centimos", "moneda", "lineas",
        "referencia_cobro", "confirmado_en",
    }  # fmt: skip
    # the claim is closed with the outcome and without a lease; every invariant holds
    reclamo = motor.flujo.reclamo(PEDIDO)
    assert reclamo["estado"]["S"] == "COMPLETADO" and "caduca_bloqueo" not in reclamo
    assert motor.desenlace(PEDIDO) == {"estado": "CONFIRMADO", "motivo": None}
    assert violaciones(motor, PEDIDO) == []
    # AND the path bills its units, nothing waited
    assert resultado.unidades == UNIDADES["confirmado"][motor.nombre] and resultado.esperas_s == []


def test_declined_card_is_not_retried_tells_the_customer_and_a_redelivery_is_a_duplicate(motor):
    # GIVEN a card the gateway declines
    motor.pasarela.fallos.rechazar_tarjeta("tok_rechazada_fondos")
    # WHEN the workflow runs for that order
    resultado = motor.ejecutar(load_event("flujo/pedido-rechazado.json"))
    # THEN one call, no charge, the claim closed RECHAZADO, PedidoRechazado on the bus, nothing reserved
    assert (resultado.estado, resultado.final) == ("SUCCEEDED", "Rechazado")
    assert motor.pasarela.llamadas["/cobros"] == 1 and motor.pasarela.cobros_de(RECHAZADO) == 0
    assert motor.desenlace(RECHAZADO) == {"estado": "RECHAZADO", "motivo": "tarjeta_rechazada"}
    (evento,) = motor.eventos_bus()
    assert evento["detail-type"] == "PedidoRechazado" and evento["detail"]["email"]
    assert motor.flujo.mensajes("ColaStock") == [] and motor.confirmaciones() == []
    assert resultado.unidades == UNIDADES["rechazado"][motor.nombre]
    # AND a redelivery of the same PedidoCreado ends at the claim: never a second execution, nor a second notice
    replay = motor.ejecutar(load_event("flujo/pedido-rechazado.json"))
    assert replay.final == "Duplicado" and motor.pasarela.llamadas["/cobros"] == 1
    assert len(motor.eventos_bus()) == 1
    assert violaciones(motor, RECHAZADO) == []


def test_open_circuit_fails_fast_without_calling_the_gateway_and_tells_the_customer(motor, valkey):
    # GIVEN the shared pasarela circuit open
    CircuitBreaker("pasarela", valkey).force("abierto")
    # WHEN an order arrives
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it fails at once with the customer-facing cause, and the gateway saw nothing
    assert (resultado.estado, resultado.error) == ("FAILED", "CircuitoAbierto")
    assert "retry in a few minutes" in resultado.causa and resultado.esperas_s == []
    assert motor.pasarela.llamadas["/cobros"] == 0
    # the claim is closed with that outcome, and the customer is told with the address to write to
    assert motor.desenlace(PEDIDO) == {"estado": "NO_CONFIRMADO", "motivo": "pasarela-no-disponible"}
    (evento,) = motor.eventos_bus()
    assert (evento["detail-type"], evento["detail"]) == (
        "PedidoNoConfirmado",
        {"version": 1, "pedido_id": PEDIDO, "email": EMAIL, "motivo": "pasarela-no-disponible"},
    )
    assert resultado.unidades == UNIDADES["circuito_abierto"][motor.nombre]
    assert violaciones(motor, PEDIDO) == []


def test_failure_after_the_cobro_refunds_once_cancels_and_releases_every_reservation(motor):
    # GIVEN the confirmation topic gone: the step after the charge and the reservations fails
    boto3.client("sns").delete_topic(TopicArn=motor.flujo.fisicos["TopicPedidoConfirmado"]["Ref"])
    # WHEN the workflow runs
    resultado = motor.ejecutar(load_event("flujo/pedido-creado.json"))
    # THEN it compensates: one charge, exactly one refund, PedidoCancelado, and the execution fails visibly
    assert (resultado.estado, resultado.error) == ("FAILED", "PedidoCancelado")
    assert motor.pasarela.cobros_de(PEDIDO) == 1 and motor.pasarela.reembolsos_de(PEDIDO) == 1
    (evento,) = motor.eventos_bus()
    assert evento["detail-type"] == "PedidoCancelado"
    assert evento["detail"]["referencia_reembolso"].startswith("re_") and evento["detail"]["email"] == EMAIL
    assert motor.desenlace(PEDIDO)["estado"] == "REEMBOLSADO"
    # every line's reservation is released in its own FIFO group, delivered after the reservation
    por_grupo: dict[str, list[tuple[str, str]]] = {}
    while lote := motor.flujo.mensajes("ColaStock"):
        for m in lote:
            grupo, dedup = m["Attributes"]["MessageGroupId"], m["Attributes"]["MessageDeduplicationId"]
            por_grupo.setdefault(grupo, []).append((json.loads(m["Body"])["tipo"], dedup))
    assert por_grupo == {
        sku: [("ReservaStock", f"reserva:{PEDIDO}:{sku}"), ("LiberacionStock", f"liberacion:{PEDIDO}:{sku}")]
        for sku in SKUS
    }
    assert resultado.unidades == UNIDADES["reembolsado"][motor.nombre]
    assert violaciones(motor, PEDIDO) == []


@pytest.mark.parametrize(
    ("evento", "motivo"),
    [
        ("flujo/pedido-version-2.json", "version-desconocida"),
        ("flujo/pedido-campo-ausente.json", "campo-ausente"),
        ("flujo/pedido-malformado.json", "json-invalido"),
    ],
)
def test_unreadable_event_goes_to_the_dlq_with_its_reason_without_claiming_or_charging(motor, evento, motivo):
    # GIVEN an order event the workflow cannot read
    entrada = load_event(evento)
    # WHEN the workflow runs
    resultado = motor.ejecutar(entrada)
    # THEN it fails as EventoInvalido; the untouched body is in the order DLQ with its reason; nothing charged
    assert (resultado.estado, resultado.error) == ("FAILED", "EventoInvalido")
    (carta,) = motor.flujo.mensajes("ColaPedidosFallidos")
    assert carta["Body"] == entrada[0]["body"]
    atributos = {k: v["StringValue"] for k, v in carta["MessageAttributes"].items()}
    assert atributos["mf-motivo"] == motivo
    assert atributos["mf-cola-origen"] == motor.flujo.fisicos["ColaPedidos"]["QueueUrl"]
    assert motor.pasarela.llamadas["/cobros"] == 0
    assert resultado.unidades == UNIDADES["evento_invalido"][motor.nombre]


def test_batch_of_two_pedidos_fails_loudly_without_claiming_or_charging(motor):
    # GIVEN a batch of two records (the pipe misconfigured with BatchSize > 1)
    lote = load_event("flujo/pedido-creado.json") + load_event("flujo/pedido-rechazado.json")
    # WHEN the workflow runs
    resultado = motor.ejecutar(lote)
    # THEN it refuses instead of silently handling only the first order
    assert (resultado.estado, resultado.error) == ("FAILED", "LoteNoAdmitido")
    assert motor.pasarela.llamadas["/cobros"] == 0 and motor.flujo.reclamo(PEDIDO) is None
