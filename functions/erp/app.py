"""ColaErp (PedidoConfirmado notice) and ColaStock (stock reservations and their releases) -> the ERP.

An open ``erp`` circuit defers the message instead of failing it.

Reordering: this consumer needs no version-conditional write, for two reasons. (1) The
only order-lifecycle event it receives is ``PedidoConfirmado``, once per order: the
workflow publishes it after the charge and the reservations, and its compensation path
(refund, ``PedidoCancelado``) never publishes it, so there is no pair of lifecycle
events to arrive in the wrong order; a redelivered notice is a duplicate, absorbed by
``aviso-erp:{pedido_id}``. (2) Reservations are one per order line (``reserva:{pedido_id}:{sku}``),
kept in order per sku by the FIFO group; a reservation may reach the ERP before its order's
notice, and the ERP files both by ``pedido_id``. A cancelled order's release
(``liberacion:{pedido_id}:{sku}``) travels in the same group after its reservation, so
FIFO order, not a version check, guarantees the ERP never sees the release first. A future lifecycle event on this queue
must carry a per-order sequence and be applied with ``if secuencia > secuencia_actual``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from mercadofresco.consumer import Consumer, Route, accepted
from mercadofresco.dominio import claves
from mercadofresco.dominio.valores import CAMPOS
from mercadofresco.errors import CircuitoAbierto
from mercadofresco.http import client_from_env
from mercadofresco.idempotency import IdempotencyKey, IdempotencyStore
from mercadofresco.process_cache import lazy_module_attribute
from mercadofresco.tracing import LazyTracer

if TYPE_CHECKING:
    from mercadofresco.consumer import Event
    from mercadofresco.http import ProviderClient

logger = Logger()
metrics = Metrics()
tracer = LazyTracer()  # X-Ray SDK imported on first use, not at import (mercadofresco.tracing)

CAMPOS_AVISO = ("pedido_id", "cliente_id", "importe_centimos", "moneda", "referencia_cobro", "lineas", "confirmado_en")
# What makes two deliveries "the same operation": a duplicate that differs here is a conflict (to the DLQ),
# one that differs elsewhere (a later confirmado_en, an added field) is the same notice.
IDENTIDAD_AVISO = ("pedido_id", "importe_centimos")


def crear_consumidor(erp: ProviderClient, store: IdempotencyStore) -> Consumer:
    """The ERP consumer: one route per event type; an open ``erp`` circuit defers the message."""

    def enviar(ruta: str, clave: IdempotencyKey, cuerpo: dict[str, Any], identidad: dict[str, Any]) -> dict[str, Any]:
        def operacion() -> dict[str, Any]:
            respuesta = erp.post(ruta, json=cuerpo, idempotency_key=clave, idempotent=True)
            return accepted(respuesta, "erp")

        return store.run(clave, operacion, payload=identidad)

    def avisar(evento: Event) -> None:
        cuerpo = {c: evento.get(c) for c in CAMPOS_AVISO if evento.get(c) is not None}
        identidad = {c: evento.get(c) for c in IDENTIDAD_AVISO}
        enviar("/avisos", claves.aviso_erp(evento["pedido_id"]), cuerpo, identidad)

    def reservar(evento: Event) -> None:
        cuerpo = {"pedido_id": evento["pedido_id"], "sku": evento["sku"], "cantidad": evento["cantidad"]}
        enviar("/reservas", claves.reserva(evento["pedido_id"], evento["sku"]), cuerpo, cuerpo)

    def liberar(evento: Event) -> None:
        # Same FIFO group (sku) as the reservation it undoes, so the ERP always sees it second.
        cuerpo = {"pedido_id": evento["pedido_id"], "sku": evento["sku"], "cantidad": evento["cantidad"]}
        enviar("/liberaciones", claves.liberacion(evento["pedido_id"], evento["sku"]), cuerpo, cuerpo)

    return Consumer(
        "erp",
        {
            "PedidoConfirmado": Route(avisar, fields=("pedido_id",)),
            "ReservaStock": Route(reservar, fields=("pedido_id", "sku", "cantidad")),
            "LiberacionStock": Route(liberar, fields=("pedido_id", "sku", "cantidad")),
        },
        types_by_queue={"cola-mercadofresco-stock": "ReservaStock"},
        defer_on=(CircuitoAbierto,),
        field_checks=CAMPOS,
    )


# The consumer, built on the first invocation: its Valkey client imports redis, which init need not pay.
_consumidor, __getattr__ = lazy_module_attribute(
    globals(), "consumidor", lambda: crear_consumidor(client_from_env("erp", "ERP_URL"), IdempotencyStore.from_env())
)


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return dict(_consumidor()(event, context))
