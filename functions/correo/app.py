"""ColaCorreo (confirmations, reminders, order outcomes) -> one e-mail each; secondary provider while primary is open.

Exactly one e-mail per operation: the idempotency key (``correo-confirmacion:{pedido_id}``,
``recordatorio-carrito:{carrito_id}``, ``correo-no-confirmado:{pedido_id}`` for the one outcome of an
order that was not confirmed: declined, not confirmed or cancelled) wraps the *choice* of provider too, so a fallback
never adds a second e-mail; the key also goes to the provider as ``Idempotency-Key``, so
a read timeout may be retried (``idempotent=True``). The fallback happens only on ``CircuitoAbierto`` (the primary
was not called); a failed call to the primary is retried by the queue, not re-sent
elsewhere, because it may have been delivered. With both circuits open the message is
deferred, as the lesson allows ("o simplemente retrasarse").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
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

# What each e-mail's template shows; everything else in the event is ignored (tolerant reader).
CAMPOS_CONFIRMACION = ("pedido_id", "importe_centimos", "moneda", "lineas")
CAMPOS_RECORDATORIO = ("carrito_id", "skus")
CAMPOS_NO_CONFIRMADO = ("pedido_id", "motivo")
# An order ends in one outcome: each non-confirmation tells the customer with its own template, one key per order.
PLANTILLAS_NO_CONFIRMADO = {
    "PedidoNoConfirmado": "pedido-no-confirmado",  # not confirmed, please retry (gateway down, busy, unresolved)
    "PedidoRechazado": "pedido-rechazado",  # the card was declined
    "PedidoCancelado": "pedido-cancelado",  # charged, then refunded: a step after the charge failed
}


def crear_consumidor(principal: ProviderClient, secundario: ProviderClient, store: IdempotencyStore) -> Consumer:
    """The e-mail consumer: confirmation and cart reminder, one key each, fallback inside the key."""

    def enviar(clave: IdempotencyKey, correo: dict[str, Any]) -> None:
        def por(cliente: ProviderClient) -> dict[str, Any]:
            respuesta = cliente.post("/correos", json=correo, idempotency_key=clave, idempotent=True)
            return accepted(respuesta, cliente.dependency)

        def operacion() -> dict[str, Any]:
            try:
                return por(principal)
            except CircuitoAbierto:
                logger.warning("primary e-mail circuit open: sending through the secondary", clave=clave)
                metrics.add_metric(name="CorreoProveedorSecundario", unit=MetricUnit.Count, value=1)
                return por(secundario)

        store.run(clave, operacion, payload={"destinatario": correo["destinatario"]})

    def confirmar(evento: Event) -> None:
        datos = {c: evento.get(c) for c in CAMPOS_CONFIRMACION if evento.get(c) is not None}
        correo = {"destinatario": evento["email"], "plantilla": "confirmacion-pedido", "datos": datos}
        enviar(claves.correo_confirmacion(evento["pedido_id"]), correo)

    def recordar(evento: Event) -> None:
        datos = {c: evento.get(c) for c in CAMPOS_RECORDATORIO if evento.get(c) is not None}
        correo = {"destinatario": evento["email"], "plantilla": "recordatorio-carrito", "datos": datos}
        enviar(claves.recordatorio_carrito(evento["carrito_id"]), correo)

    def avisar_no_confirmado(evento: Event) -> None:
        datos = {c: evento.get(c) for c in CAMPOS_NO_CONFIRMADO if evento.get(c) is not None}
        correo = {"destinatario": evento["email"], "plantilla": PLANTILLAS_NO_CONFIRMADO[evento.type], "datos": datos}
        enviar(claves.correo_no_confirmado(evento["pedido_id"]), correo)

    aviso = Route(avisar_no_confirmado, fields=("pedido_id", "email"))
    return Consumer(
        "correo",
        {
            "PedidoConfirmado": Route(confirmar, fields=("pedido_id", "email")),
            "CarritoAbandonado": Route(recordar, fields=("carrito_id", "email")),
            **dict.fromkeys(PLANTILLAS_NO_CONFIRMADO, aviso),
        },
        defer_on=(CircuitoAbierto,),
        field_checks=CAMPOS,
    )


# The consumer, built on the first invocation: its Valkey client imports redis, which init need not pay.
_consumidor, __getattr__ = lazy_module_attribute(
    globals(),
    "consumidor",
    lambda: crear_consumidor(
        client_from_env("correo-principal", "CORREO_PRINCIPAL_URL"),
        client_from_env("correo-secundario", "CORREO_SECUNDARIO_URL"),
        IdempotencyStore.from_env(),
    ),
)


@metrics.log_metrics
@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return dict(_consumidor()(event, context))
