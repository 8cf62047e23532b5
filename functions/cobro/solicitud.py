"""What the workflow asks the charge function: parsed and checked once, with a clear error.

The workflow sends ``{"operacion": "cobro" | "reembolso", "pedido": <PedidoCreado detail>,
"referencia_cobro": ...}`` (refunds only). The order is read as a tolerant reader: only the
fields below are checked, unknown ones are ignored; an order without them, with a value no order
can have (an amount that is not a positive whole number of cents under the ceiling, a currency
that is not ISO 4217, an order, customer or sku id not in the store's format), or of a version this function
does not read, raises :class:`~mercadofresco.errors.EventoInvalido` (never retried: the workflow's
``Catch`` ends the order without charging) — before the gateway is called. Its message is safe
for the execution's cause: it never repeats a card token or a customer's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mercadofresco import validation
from mercadofresco.dominio import claves, valores
from mercadofresco.errors import EventoInvalido
from mercadofresco.idempotency.exceptions import IdempotencyKeyError

if TYPE_CHECKING:
    from collections.abc import Callable

OPERACIONES = ("cobro", "reembolso")
VERSIONES = frozenset({1})
CANTIDAD_MAX = 10_000  # units of one sku in one order; more is a typo or an attack, not a basket


@dataclass(frozen=True, slots=True)
class Solicitud:
    """One charge or refund request (no card data beyond the gateway's token, never logged)."""

    operacion: str
    pedido_id: str
    importe_centimos: int
    moneda: str
    cliente_id: str | None = None
    token_tarjeta: str | None = None
    referencia_cobro: str | None = None
    lineas: int = 0  # how many lines (each checked: the stock reservations after the charge must not fail on them)

    @classmethod
    def desde_evento(cls, evento: Any) -> Solicitud:
        """Parse the task's payload; :class:`EventoInvalido` says exactly what is wrong."""
        if not isinstance(evento, dict):
            raise EventoInvalido(f"payload must be a JSON object, got {type(evento).__name__}")
        operacion = evento.get("operacion")
        if not isinstance(operacion, str) or operacion not in OPERACIONES:
            raise EventoInvalido(
                f"'operacion' must be one of {', '.join(OPERACIONES)}, got {validation.echo(operacion)}"
            )
        pedido = evento.get("pedido")
        if not isinstance(pedido, dict):
            raise EventoInvalido("missing field 'pedido' (the PedidoCreado detail)")
        version = pedido.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version not in VERSIONES:
            raise EventoInvalido(f"PedidoCreado version {validation.echo(version)} is not one this function reads (1)")
        try:
            solicitud = cls(
                operacion=operacion,
                pedido_id=_pedido_id(pedido),
                importe_centimos=valores.importe_centimos(pedido.get("importe_centimos")),
                moneda=valores.moneda(pedido.get("moneda", "EUR")),
                cliente_id=_opcional(pedido, "cliente_id", valores.id_tienda),
                token_tarjeta=_opcional(pedido, "token_tarjeta"),
                referencia_cobro=_opcional(evento, "referencia_cobro"),
                lineas=_lineas(pedido),
            )
        except validation.InvalidValueError as exc:
            raise EventoInvalido(str(exc)) from None  # the named error the workflow's Catch matches
        return solicitud

    @property
    def medio_de_pago(self) -> dict[str, str]:
        """A card token when the order has one, else the customer's card on file at the gateway."""
        if self.token_tarjeta:
            return {"token_tarjeta": self.token_tarjeta}
        if self.cliente_id:
            return {"cliente_id": self.cliente_id}
        raise EventoInvalido(f"order {self.pedido_id} has neither 'token_tarjeta' nor 'cliente_id' to charge")


def _pedido_id(pedido: dict[str, Any]) -> str:
    """The order id in the store's format, checked as what it becomes: ``cobro:{pedido_id}``, the gateway's
    ``Idempotency-Key`` (a UUID-shaped id is refused there: it looks like a MessageId)."""
    pedido_id = valores.id_tienda(pedido.get("pedido_id"), "pedido_id")
    try:
        claves.cobro(pedido_id)
    except IdempotencyKeyError as exc:
        raise validation.InvalidValueError("pedido_id", f"cannot name the charge: {exc}") from None
    return pedido_id


def _texto(valor: Any, campo: str) -> str:
    """A printable string (a card token, a charge reference); its value never appears in the error."""
    try:
        return validation.identifier(valor, campo)
    except validation.InvalidValueError:
        raise validation.InvalidValueError(campo, "must be a non-empty printable string (<= 200)") from None


def _opcional(datos: dict[str, Any], campo: str, formato: Callable[[Any, str], str] = _texto) -> str | None:
    """An optional id checked by ``formato``, whose errors never repeat the value (a card token, a customer id)."""
    return None if datos.get(campo) is None else formato(datos[campo], campo)


def _lineas(pedido: dict[str, Any]) -> int:
    lineas = pedido.get("lineas")
    if not isinstance(lineas, list) or not lineas:
        raise EventoInvalido("field 'lineas' must be a non-empty list of {sku, cantidad}")
    for i, linea in enumerate(lineas):
        if not isinstance(linea, dict):
            raise EventoInvalido(f"line {i} must be an object with 'sku' and 'cantidad'")
        cantidad = linea.get("cantidad")
        # The sku names the line's reservation (reserva:{pedido_id}:{sku}): refused here, before the charge.
        sku = valores.id_tienda(linea.get("sku"), f"lineas[{i}].sku")
        try:
            claves.reserva("x", sku)
        except IdempotencyKeyError:
            raise EventoInvalido(f"line {i} has a 'sku' that cannot name its reservation") from None
        if isinstance(cantidad, bool) or not isinstance(cantidad, int) or not 1 <= cantidad <= CANTIDAD_MAX:
            raise EventoInvalido(
                f"line {i} ({validation.echo(linea['sku'])}) needs a whole 'cantidad' from 1 to {CANTIDAD_MAX}, "
                f"got {validation.echo(cantidad)}"
            )
    return len(lineas)
