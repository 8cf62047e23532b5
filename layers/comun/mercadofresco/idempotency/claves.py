"""Idempotency keys: the stable id of a *logical operation*, built from the domain.

A key names what is done *and* to what (``cobro:PED-2026-084417``, never the bare order
id, since one order has a charge, an e-mail and several reservations). It is never a
MessageId nor a fresh UUID: both change between deliveries of the same work. To make
that mistake hard to write, keys are a type of their own (:class:`Clave`) that the store
demands, built only here, and the order-based builders refuse a UUID-shaped id (what a
MessageId or ``uuid4()`` looks like).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import unicodedata
from decimal import Decimal
from typing import Any

from mercadofresco.idempotency.exceptions import IdempotencyKeyError
from mercadofresco.validation import eco

__all__ = [
    "Clave",
    "aviso_erp",
    "cobro",
    "correo_confirmacion",
    "correo_no_confirmado",
    "hash_canonico",
    "json_canonico",
    "pedido",
    "por_contenido",
    "recordatorio_carrito",
    "reembolso",
    "reserva",
]

_OPERACION = re.compile(r"[a-z][a-z0-9-]{0,40}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_MAX_PARTE = 200
_NO_IMPRIMIBLES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # Unicode categories refused in a key part


class Clave(str):
    """An idempotency key built by this module; the store rejects any other ``str``."""

    __slots__ = ()

    @property
    def operacion(self) -> str:
        """The operation the key names (``cobro``, ``reserva``, ...)."""
        return self.split(":", 1)[0]


def _crear(operacion: str, *partes: str, rechazar_uuid: bool = True) -> Clave:
    if not _OPERACION.fullmatch(operacion):
        raise IdempotencyKeyError(f"operation name must match {_OPERACION.pattern}, got {operacion!r}")
    for parte in partes:
        # Messages echo a part only through eco(): cut short and escaped, so a hostile id cannot
        # flood a log line or a DLQ attribute.
        if not isinstance(parte, str) or not parte.strip() or len(parte) > _MAX_PARTE:
            raise IdempotencyKeyError(f"key part for {operacion!r} must be a non-empty str (<= 200), got {eco(parte)}")
        if ":" in parte or parte != parte.strip():
            raise IdempotencyKeyError(f"key part for {operacion!r} may not contain ':' or edge spaces: {eco(parte)}")
        if any(unicodedata.category(c) in _NO_IMPRIMIBLES for c in parte):
            # A key travels as the Idempotency-Key header and a DynamoDB key: a control character,
            # a lone surrogate or an unassigned code point cannot be sent or stored faithfully.
            raise IdempotencyKeyError(f"key part for {operacion!r} has unprintable characters: {eco(parte)}")
        if rechazar_uuid and _UUID.fullmatch(parte):
            raise IdempotencyKeyError(
                f"{parte!r} looks like a MessageId or a random UUID; an idempotency key must come from the "
                f"domain (e.g. the order's pedido_id), stable across redeliveries"
            )
    return Clave(":".join((operacion, *partes)))


def pedido(pedido_id: str) -> Clave:
    """``pedido:{pedido_id}``: the order workflow's claim (one execution per order)."""
    return _crear("pedido", pedido_id)


def cobro(pedido_id: str) -> Clave:
    """``cobro:{pedido_id}``: the one charge of an order."""
    return _crear("cobro", pedido_id)


def reembolso(pedido_id: str) -> Clave:
    """``reembolso:{pedido_id}``: the compensation of an order's charge."""
    return _crear("reembolso", pedido_id)


def correo_confirmacion(pedido_id: str) -> Clave:
    """``correo-confirmacion:{pedido_id}``: one confirmation e-mail per order, whatever the path."""
    return _crear("correo-confirmacion", pedido_id)


def correo_no_confirmado(pedido_id: str) -> Clave:
    """``correo-no-confirmado:{pedido_id}``: one "not confirmed, please retry" e-mail per order."""
    return _crear("correo-no-confirmado", pedido_id)


def aviso_erp(pedido_id: str) -> Clave:
    """``aviso-erp:{pedido_id}``: one ERP notice per confirmed order."""
    return _crear("aviso-erp", pedido_id)


def reserva(pedido_id: str, sku: str) -> Clave:
    """``reserva:{pedido_id}:{sku}``: one stock movement per order line."""
    return _crear("reserva", pedido_id, sku)


def liberacion(pedido_id: str, sku: str) -> Clave:
    """``liberacion:{pedido_id}:{sku}``: undoes ``reserva:{pedido_id}:{sku}`` once, for a cancelled order."""
    return _crear("liberacion", pedido_id, sku)


def recordatorio_carrito(carrito_id: str) -> Clave:
    """``recordatorio-carrito:{carrito_id}``: one reminder per abandoned cart.

    A cart id may legitimately be a UUID minted when the cart was created (it is stable),
    so this builder does not refuse UUID-shaped ids.
    """
    return _crear("recordatorio-carrito", carrito_id, rechazar_uuid=False)


def por_contenido(operacion: str, obj: Any) -> Clave:
    """``{operacion}:sha256:{hex}`` from the canonical JSON of ``obj``, when there is no natural id.

    Key order inside mappings does not matter. Pass only the fields that define the
    operation: an envelope field that changes per delivery (a MessageId, a receive
    timestamp) would make every delivery a new key.
    """
    return _crear(operacion, "sha256", hash_canonico(obj))


def json_canonico(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, UTF-8 kept; ``Decimal``/dates as exact strings."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_a_json)
    except (TypeError, ValueError) as exc:
        raise IdempotencyKeyError(f"cannot build canonical JSON for the idempotency key/payload: {exc}") from exc


def hash_canonico(obj: Any) -> str:
    """SHA-256 hex digest of :func:`json_canonico`.

    ``surrogatepass``: a lone surrogate (JSON's ``"\\ud800"``, legal in a body) still hashes, to the
    same digest every time, instead of raising ``UnicodeEncodeError`` out of a consumer.
    """
    return hashlib.sha256(json_canonico(obj).encode("utf-8", "surrogatepass")).hexdigest()


def _a_json(valor: Any) -> Any:
    # Decimal as its exact string (48.20 stays "48.20"; a float would round), dates in ISO 8601.
    if isinstance(valor, Decimal):
        return str(valor)
    if isinstance(valor, dt.datetime | dt.date):
        return valor.isoformat()
    if isinstance(valor, set | frozenset):
        return sorted(valor, key=json_canonico)
    raise TypeError(f"{type(valor).__name__} is not JSON-serialisable")
