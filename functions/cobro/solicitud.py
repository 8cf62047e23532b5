"""What the workflow asks the charge function: parsed and checked once, with a clear error.

The workflow sends ``{"operacion": "cobro" | "reembolso", "pedido": <PedidoCreado detail>,
"referencia_cobro": ...}`` (refunds only). The order is read as a tolerant reader: only the
fields below are checked, unknown ones are ignored; an order without them, or of a version
this function does not read, raises :class:`~mercadofresco.errors.EventoInvalido` (never
retried: the workflow's ``Catch`` ends the order without charging).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mercadofresco.errors import EventoInvalido

OPERACIONES = ("cobro", "reembolso")
VERSIONES = frozenset({1})


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
        if operacion not in OPERACIONES:
            raise EventoInvalido(f"'operacion' must be one of {', '.join(OPERACIONES)}, got {operacion!r}")
        pedido = evento.get("pedido")
        if not isinstance(pedido, dict):
            raise EventoInvalido("missing field 'pedido' (the PedidoCreado detail)")
        version = pedido.get("version")
        if version not in VERSIONES or isinstance(version, bool):
            raise EventoInvalido(f"PedidoCreado version {version!r} is not one this function reads (1)")
        return cls(
            operacion=operacion,
            pedido_id=_texto(pedido, "pedido_id"),
            importe_centimos=_importe(pedido),
            moneda=_texto(pedido, "moneda", "EUR"),
            cliente_id=_opcional(pedido, "cliente_id"),
            token_tarjeta=_opcional(pedido, "token_tarjeta"),
            referencia_cobro=_opcional(evento, "referencia_cobro"),
            lineas=_lineas(pedido),
        )

    @property
    def medio_de_pago(self) -> dict[str, str]:
        """A card token when the order has one, else the customer's card on file at the gateway."""
        if self.token_tarjeta:
            return {"token_tarjeta": self.token_tarjeta}
        if self.cliente_id:
            return {"cliente_id": self.cliente_id}
        raise EventoInvalido(f"order {self.pedido_id} has neither 'token_tarjeta' nor 'cliente_id' to charge")


def _texto(datos: dict[str, Any], campo: str, defecto: str | None = None) -> str:
    valor = datos.get(campo, defecto)
    if not isinstance(valor, str) or not valor.strip():
        raise EventoInvalido(f"field {campo!r} must be a non-empty string, got {valor!r}")
    return valor


def _opcional(datos: dict[str, Any], campo: str) -> str | None:
    return _texto(datos, campo) if datos.get(campo) is not None else None


def _lineas(pedido: dict[str, Any]) -> int:
    lineas = pedido.get("lineas")
    if not isinstance(lineas, list) or not lineas:
        raise EventoInvalido("field 'lineas' must be a non-empty list of {sku, cantidad}")
    for i, linea in enumerate(lineas):
        cantidad = linea.get("cantidad") if isinstance(linea, dict) else None
        if not isinstance(linea, dict) or not isinstance(linea.get("sku"), str) or not linea["sku"].strip():
            raise EventoInvalido(f"line {i} has no 'sku' string")
        if isinstance(cantidad, bool) or not isinstance(cantidad, int) or cantidad < 1:
            raise EventoInvalido(f"line {i} ({linea['sku']}) needs a whole 'cantidad' >= 1, got {cantidad!r}")
    return len(lineas)


def _importe(pedido: dict[str, Any]) -> int:
    valor = pedido.get("importe_centimos")
    if isinstance(valor, bool) or not isinstance(valor, int) or valor <= 0:
        raise EventoInvalido(f"field 'importe_centimos' must be a positive whole number of cents, got {valor!r}")
    return valor
