"""The lesson's idempotency keys: one builder per logical operation of an order or a cart.

Each builder names what is done *and* to what (``cobro:{pedido_id}``, ``reserva:{pedido_id}:{sku}``),
through :func:`mercadofresco.idempotency.keys.make_key`, which checks every part and refuses a
UUID-shaped order id (a MessageId or ``uuid4()`` in the wrong place).
"""

from __future__ import annotations

import hashlib
import re

from mercadofresco.idempotency.keys import IdempotencyKey, make_key

__all__ = [
    "aviso_erp",
    "cobro",
    "correo_confirmacion",
    "correo_no_confirmado",
    "ejecucion_pedido",
    "liberacion",
    "pedido",
    "recordatorio_carrito",
    "reembolso",
    "reserva",
]


def pedido(pedido_id: str) -> IdempotencyKey:
    """``pedido:{pedido_id}``: the order workflow's claim (one execution per order)."""
    return make_key("pedido", pedido_id)


# Lambda's Invoke DurableExecutionName: 1 to 64 of these characters (botocore's model); no ':' and no '.'.
_NOMBRE_EJECUCION = re.compile(r"[A-Za-z0-9_-]{1,64}")
_PREFIJO_EJECUCION = "pedido-"
_PREFIJO_EJECUCION_RESUMIDA = "pedidoh-"  # never a prefix of a plain name: its 7th character is 'h', not '-'


def ejecucion_pedido(pedido_id: str) -> str:
    """``pedido-{pedido_id}``: the name of the order's durable execution, the idempotency key of its start.

    The claim's ``pedido:{pedido_id}`` cannot be one: a durable execution name takes 1 to 64 letters,
    digits, ``-`` and ``_``. An id that does not fit as it is (a ``.``, or longer than 57 characters: the
    store's ids take up to 64) is named by the SHA-256 of the claim's key, under another prefix, so
    two orders never share a name.
    """
    clave = pedido(pedido_id)  # the same checks as the claim: no UUID, no ':', printable
    nombre = _PREFIJO_EJECUCION + pedido_id
    if _NOMBRE_EJECUCION.fullmatch(nombre):
        return nombre
    resumen = hashlib.sha256(clave.encode()).hexdigest()
    return (_PREFIJO_EJECUCION_RESUMIDA + resumen)[:64]


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
