"""The lesson's idempotency keys: one builder per logical operation of an order or a cart.

Each builder names what is done *and* to what (``cobro:{pedido_id}``, ``reserva:{pedido_id}:{sku}``),
through :func:`mercadofresco.idempotency.keys.make_key`, which checks every part and refuses a
UUID-shaped order id (a MessageId or ``uuid4()`` in the wrong place).
"""

from __future__ import annotations

from mercadofresco.idempotency.keys import IdempotencyKey, make_key

__all__ = [
    "aviso_erp",
    "cobro",
    "correo_confirmacion",
    "correo_no_confirmado",
    "liberacion",
    "pedido",
    "recordatorio_carrito",
    "reembolso",
    "reserva",
]


def pedido(pedido_id: str) -> IdempotencyKey:
    """``pedido:{pedido_id}``: the order workflow's claim (one execution per order)."""
    return make_key("pedido", pedido_id)


def cobro(pedido_id: str) -> IdempotencyKey:
    """``cobro:{pedido_id}``: the one charge of an order."""
    return make_key("cobro", pedido_id)


def reembolso(pedido_id: str) -> IdempotencyKey:
    """``reembolso:{pedido_id}``: the compensation of an order's charge."""
    return make_key("reembolso", pedido_id)


def correo_confirmacion(pedido_id: str) -> IdempotencyKey:
    """``correo-confirmacion:{pedido_id}``: one confirmation e-mail per order, whatever the path."""
    return make_key("correo-confirmacion", pedido_id)


def correo_no_confirmado(pedido_id: str) -> IdempotencyKey:
    """``correo-no-confirmado:{pedido_id}``: one "not confirmed, please retry" e-mail per order."""
    return make_key("correo-no-confirmado", pedido_id)


def aviso_erp(pedido_id: str) -> IdempotencyKey:
    """``aviso-erp:{pedido_id}``: one ERP notice per confirmed order."""
    return make_key("aviso-erp", pedido_id)


def reserva(pedido_id: str, sku: str) -> IdempotencyKey:
    """``reserva:{pedido_id}:{sku}``: one stock movement per order line."""
    return make_key("reserva", pedido_id, sku)


def liberacion(pedido_id: str, sku: str) -> IdempotencyKey:
    """``liberacion:{pedido_id}:{sku}``: undoes ``reserva:{pedido_id}:{sku}`` once, for a cancelled order."""
    return make_key("liberacion", pedido_id, sku)


def recordatorio_carrito(carrito_id: str) -> IdempotencyKey:
    """``recordatorio-carrito:{carrito_id}``: one reminder per abandoned cart.

    A cart id may legitimately be a UUID minted when the cart was created (it is stable),
    so this builder does not refuse UUID-shaped ids.
    """
    return make_key("recordatorio-carrito", carrito_id, refuse_uuid=False)
