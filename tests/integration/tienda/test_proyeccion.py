"""The order-state projection on the real local PostgreSQL and the template's queues in moto.

What matters: each order ends in the state its latest outcome says, whatever the delivery
order or the number of deliveries; an event for an unknown order lands in the DLQ with its
reason and does not take the batch down.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
import psycopg
import pytest
from mercadofresco.dominio.pedidos import LineaPedido, Pedido, crear_pedido
from mercadofresco.dominio.proyeccion import PedidoDesconocido, Resultado, proyectar
from mercadofresco.outbox.schema import apply_migrations
from sam_emulator.provisioning import Provisioner
from sam_emulator.template import Template

from tests.conftest import load_event
from tests.integration.consumidores.conftest import Cola, Sondeo, mensajes, motivo

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration

# The projection as the stack wires it: the topic, the bus and the DLQ are the root's, the queue, its
# subscription and the outcome rule the store unit's (unidades/tienda.yaml).
RECURSOS = ("DatosKey", "ColaProyeccionFallidos", "TopicPedidoConfirmado", "BusMercadoFresco")
RECURSOS_DE_LA_TIENDA = ("ColaProyeccion", "SuscripcionProyeccion", "ReglaResultadoPedido")
PEDIDOS = ("PED-2026-084417", "PED-2026-084418", "PED-2026-084419")


@pytest.fixture
def base(pg_dsn: str, fresh_environment: None) -> str:
    """A migrated private schema holding the three sample orders, written as the store writes them."""
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
        for pedido_id in PEDIDOS:
            crear_pedido(conn, Pedido(pedido_id, "CLI-0193", (LineaPedido("FRU-MAN-001", 2, 249),), "EUR", "a@b.es"))
    return pg_dsn


@dataclass(frozen=True)
class Recursos:
    """The projection's resources as created in moto, the root's and the store unit's, by logical id."""

    physical_ids: dict[str, Any]


def _solo(plantilla: Template, recursos: tuple[str, ...]) -> Template:
    todos = plantilla.doc["Resources"]
    plantilla.__dict__["doc"] = {**plantilla.doc, "Resources": {lid: todos[lid] for lid in recursos}}
    return plantilla


@pytest.fixture
def recursos(aws: None) -> Recursos:
    """The projection's queues, subscription and rule, created in moto from template.yaml and its store unit
    (handed the root's topic, bus and DLQ as the root passes them)."""
    raiz = Template()
    unidad = raiz.resources["Tienda"]
    Provisioner(_solo(raiz, RECURSOS)).provision()
    raiz.resources["Tienda"] = unidad  # read now, with what the root created: the unit is handed their ids
    tienda = _solo(raiz.units()["Tienda"], RECURSOS_DE_LA_TIENDA)
    Provisioner(tienda).provision()
    return Recursos({**raiz.physical_ids, **tienda.physical_ids})


@pytest.fixture
def proyeccion(base: str, recursos: Recursos, app_module: Callable[..., Any]) -> Any:
    return app_module("proyeccion", DATABASE_URL=base)


def _estados(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        return dict(conn.execute("SELECT pedido_id, estado FROM pedidos"))


def _en_cola(evento: dict[str, Any], recursos: Recursos) -> dict[str, Any]:
    """The sample event, as if read from the template's queue in moto (its ARN tells the consumer the DLQ)."""
    arn = recursos.physical_ids["ColaProyeccion"]["Arn"]
    return {"Records": [{**r, "eventSourceARN": arn} for r in evento["Records"]]}


def test_proyectar_later_state_applies_and_older_one_is_ignored(base: str) -> None:
    with psycopg.connect(base) as conn:
        # GIVEN an order refunded (the compensation's last word)
        primero = proyectar(conn, "PED-2026-084417", "PedidoCancelado", motivo="ReservaStockFallida")
        # WHEN the older confirmation arrives late, and the refund is redelivered
        tarde = proyectar(conn, "PED-2026-084417", "PedidoConfirmado")
        duplicado = proyectar(conn, "PED-2026-084417", "PedidoCancelado")
    # THEN the refund stays: the late and the duplicate events changed nothing
    assert (primero.resultado, primero.estado_anterior, primero.estado) == (Resultado.APLICADO, "CREADO", "REEMBOLSADO")
    assert (tarde.resultado, tarde.estado) == (Resultado.IGNORADO, "REEMBOLSADO")
    assert duplicado.resultado is Resultado.IGNORADO
    assert _estados(base)["PED-2026-084417"] == "REEMBOLSADO"


def test_proyectar_not_confirmed_then_confirmed_after_redrive_ends_confirmed(base: str) -> None:
    with psycopg.connect(base) as conn:
        # GIVEN a customer told "not confirmed, please retry"
        proyectar(conn, "PED-2026-084419", "PedidoNoConfirmado", motivo="CircuitoAbierto")
        # WHEN the order is redriven and confirmed, and then a stale "not confirmed" is redelivered
        proyectar(conn, "PED-2026-084419", "PedidoConfirmado")
        tarde = proyectar(conn, "PED-2026-084419", "PedidoNoConfirmado")
    # THEN the order is confirmed
    assert tarde.resultado is Resultado.IGNORADO
    assert _estados(base)["PED-2026-084419"] == "CONFIRMADO"


def test_proyectar_rejected_then_confirmed_keeps_first_outcome(base: str) -> None:
    with psycopg.connect(base) as conn:
        proyectar(conn, "PED-2026-084418", "PedidoRechazado", motivo="tarjeta_rechazada")
        otro = proyectar(conn, "PED-2026-084418", "PedidoConfirmado")
    # THEN one execution's outcome is final: same rank, never overwritten
    assert otro.resultado is Resultado.IGNORADO
    assert _estados(base)["PED-2026-084418"] == "RECHAZADO"


def test_proyectar_unknown_order_raises_permanent_error(base: str) -> None:
    with psycopg.connect(base) as conn, pytest.raises(PedidoDesconocido, match="PED-0000"):
        proyectar(conn, "PED-0000", "PedidoConfirmado")


def test_handler_out_of_order_batch_ends_in_latest_states_and_unknown_order_in_dlq(
    proyeccion: Any, base: str, recursos: Recursos, lambda_context: Any
) -> None:
    # GIVEN a batch where a refund precedes the confirmation it compensates, plus an unknown order
    evento = _en_cola(load_event("proyeccion-lote-desordenado.json"), recursos)
    # WHEN the projection handles it
    respuesta = proyeccion.lambda_handler(evento, lambda_context)
    # THEN no record is reported failed (nothing transient happened)...
    assert respuesta == {"batchItemFailures": []}
    # ...each order shows its latest outcome...
    assert _estados(base) == {
        "PED-2026-084417": "REEMBOLSADO",
        "PED-2026-084418": "RECHAZADO",
        "PED-2026-084419": "NO_CONFIRMADO",
    }
    # ...and the unknown order's event is in the DLQ with its reason
    (muerto,) = mensajes(boto3.client("sqs"), Cola.de(recursos, "ColaProyeccionFallidos"))
    assert motivo(muerto) == "dato-invalido"
    assert "PED-0000-NO-EXISTE" in muerto["Body"]


def test_handler_same_event_twice_applies_once(
    proyeccion: Any, base: str, recursos: Recursos, lambda_context: Any
) -> None:
    # GIVEN the confirmation, delivered twice (at least once)
    evento = _en_cola(load_event("proyeccion-pedido-confirmado.json"), recursos)
    # WHEN both deliveries are handled
    proyeccion.lambda_handler(evento, lambda_context)
    proyeccion.lambda_handler(evento, lambda_context)
    # THEN the order is confirmed; the second delivery was a no-op (metric EstadosIgnorados)
    assert _estados(base)["PED-2026-084417"] == "CONFIRMADO"


def test_handler_database_down_reports_record_failed_for_redelivery(
    recursos: Recursos, app_module: Callable[..., Any], lambda_context: Any, fresh_environment: None
) -> None:
    # GIVEN a projection whose database refuses connections
    app = app_module("proyeccion", DATABASE_URL="postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=1")
    evento = _en_cola(load_event("proyeccion-pedido-cancelado.json"), recursos)
    # WHEN the refund arrives
    respuesta = app.lambda_handler(evento, lambda_context)
    # THEN the record is failed (SQS redelivers it), not dead-lettered: the outage is transient
    assert [f["itemIdentifier"] for f in respuesta["batchItemFailures"]] == [evento["Records"][0]["messageId"]]
    assert mensajes(boto3.client("sqs"), Cola.de(recursos, "ColaProyeccionFallidos")) == []


def test_outcomes_from_topic_and_bus_reach_the_queue_and_update_states(
    proyeccion: Any, base: str, recursos: Recursos, lambda_context: Any
) -> None:
    # GIVEN the template's subscription and rule feeding mercadofresco-proyeccion
    sqs, sns, events = boto3.client("sqs"), boto3.client("sns"), boto3.client("events")
    confirmado = json.loads(load_event("proyeccion-pedido-confirmado.json")["Records"][0]["body"])
    # WHEN the workflow confirms one order on the topic and rejects another on the bus
    sns.publish(TopicArn=recursos.physical_ids["TopicPedidoConfirmado"]["Ref"], Message=json.dumps(confirmado))
    rechazo = {"version": 1, "pedido_id": "PED-2026-084418", "motivo": "tarjeta_rechazada"}
    salida = events.put_events(
        Entries=[
            {
                "EventBusName": recursos.physical_ids["BusMercadoFresco"]["Ref"],
                "Source": "mercadofresco.pedidos",
                "DetailType": "PedidoRechazado",
                "Detail": json.dumps(rechazo),
            }
        ]
    )
    assert salida["FailedEntryCount"] == 0
    # AND Lambda's mapping drains the queue
    manejados = Sondeo(sqs, Cola.de(recursos, "ColaProyeccion"), proyeccion.lambda_handler, lambda_context).drenar()
    # THEN both outcomes are projected, and nothing is left behind
    assert manejados == 2
    estados = _estados(base)
    assert (estados["PED-2026-084417"], estados["PED-2026-084418"]) == ("CONFIRMADO", "RECHAZADO")
    assert mensajes(sqs, Cola.de(recursos, "ColaProyeccionFallidos")) == []


def _registro(detalle: dict[str, Any], tipo: str, n: int, recursos: Recursos) -> dict[str, Any]:
    """One bus event on the projection's queue (its body as EventBridge writes it: ASCII JSON)."""
    (plantilla,) = load_event("proyeccion-pedido-cancelado.json")["Records"]
    cuerpo = {
        "version": "0",
        "id": f"ev-{n}",
        "detail-type": tipo,
        "source": "mercadofresco.pedidos",
        "detail": detalle,
    }
    arn = recursos.physical_ids["ColaProyeccion"]["Arn"]
    return {**plantilla, "messageId": f"m-{n}", "body": json.dumps(cuerpo), "eventSourceARN": arn}


@pytest.mark.parametrize(
    "campo_valor",
    [
        ("motivo", {"codigo": "ReservaStockFallida"}),  # an object where a string belongs
        ("motivo", "Reserva\x00StockFallida"),  # a NUL: PostgreSQL text cannot hold it
        ("error", "Reserva\ud800Fallida"),  # a lone surrogate: cannot be encoded for the driver
        ("error", ["ReservaStockFallida"]),  # a list: psycopg would store it as '{...}'
        ("id", 7),
    ],
)
def test_handler_payload_problem_is_dead_lettered_with_its_reason_not_retried(
    proyeccion: Any, base: str, recursos: Recursos, lambda_context: Any, campo_valor: tuple[str, Any]
) -> None:
    # GIVEN a PedidoCancelado with one field of the wrong type or with characters no database can store,
    # next to a good confirmation of another order in the same batch
    campo, valor = campo_valor
    malo = _registro({"version": 1, "pedido_id": "PED-2026-084417", campo: valor}, "PedidoCancelado", 1, recursos)
    bueno = _registro({"version": 1, "pedido_id": "PED-2026-084419"}, "PedidoConfirmado", 2, recursos)
    # WHEN the projection handles the batch
    respuesta = proyeccion.lambda_handler({"Records": [malo, bueno]}, lambda_context)
    # THEN nothing is handed back for a retry: a payload problem is not transient...
    assert respuesta == {"batchItemFailures": []}
    # ...the bad record is in the DLQ once, with its reason, and its order was not touched...
    (muerto,) = mensajes(boto3.client("sqs"), Cola.de(recursos, "ColaProyeccionFallidos"))
    assert motivo(muerto) == "dato-invalido"
    assert campo in muerto["MessageAttributes"]["mf-detalle"]["StringValue"]
    # ...and the good one in the same batch was projected
    estados = _estados(base)
    assert (estados["PED-2026-084417"], estados["PED-2026-084419"]) == ("CREADO", "CONFIRMADO")
