"""Idempotency keys: the stable id of a *logical operation*, as a type of its own.

A key names what is done *and* to what (``cobro:PED-2026-084417``, never the bare order
id, since one order has a charge, an e-mail and several reservations). It is never a
MessageId nor a fresh UUID: both change between deliveries of the same work. To make
that mistake hard to write, keys are a type of their own (:class:`IdempotencyKey`) that
the store demands, made only by :func:`make_key`, which refuses a UUID-shaped part (what
a MessageId or ``uuid4()`` looks like). The lesson's own keys (``cobro:{pedido_id}``...)
are built from it in :mod:`mercadofresco.dominio.claves`.
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
from mercadofresco.validation import echo

__all__ = ["IdempotencyKey", "canonical_hash", "canonical_json", "key_from_content", "make_key"]

_OPERATION = re.compile(r"[a-z][a-z0-9-]{0,40}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_MAX_PART = 200
_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # Unicode categories refused in a key part


class IdempotencyKey(str):
    """An idempotency key made by :func:`make_key`; the store rejects any other ``str``."""

    __slots__ = ()

    @property
    def operation(self) -> str:
        """The operation the key names (``cobro``, ``reserva``, ...)."""
        return self.split(":", 1)[0]


def make_key(operation: str, *parts: str, refuse_uuid: bool = True) -> IdempotencyKey:
    """``{operation}:{part}:...``, each part checked: text, no ':', printable, <= 200, and (by default) no UUID."""
    if not _OPERATION.fullmatch(operation):
        raise IdempotencyKeyError(f"operation name must match {_OPERATION.pattern}, got {operation!r}")
    for part in parts:
        # Messages echo a part only through echo(): cut short and escaped, so a hostile id cannot
        # flood a log line or a DLQ attribute.
        if not isinstance(part, str) or not part.strip() or len(part) > _MAX_PART:
            raise IdempotencyKeyError(f"key part for {operation!r} must be a non-empty str (<= 200), got {echo(part)}")
        if ":" in part or part != part.strip():
            raise IdempotencyKeyError(f"key part for {operation!r} may not contain ':' or edge spaces: {echo(part)}")
        if any(unicodedata.category(c) in _UNPRINTABLE for c in part):
            # A key travels as the Idempotency-Key header and a DynamoDB key: a control character,
            # a lone surrogate or an unassigned code point cannot be sent or stored faithfully.
            raise IdempotencyKeyError(f"key part for {operation!r} has unprintable characters: {echo(part)}")
        if refuse_uuid and _UUID.fullmatch(part):
            raise IdempotencyKeyError(
                f"{part!r} looks like a MessageId or a random UUID; an idempotency key must come from the "
                f"domain (e.g. the order's pedido_id), stable across redeliveries"
            )
    return IdempotencyKey(":".join((operation, *parts)))


def key_from_content(operation: str, obj: Any) -> IdempotencyKey:
    """``{operation}:sha256:{hex}`` from the canonical JSON of ``obj``, when there is no natural id.

    Key order inside mappings does not matter. Pass only the fields that define the
    operation: an envelope field that changes per delivery (a MessageId, a receive
    timestamp) would make every delivery a new key.
    """
    return make_key(operation, "sha256", canonical_hash(obj))


def canonical_json(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, UTF-8 kept; ``Decimal``/dates as exact strings."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_to_json)
    except (TypeError, ValueError) as exc:
        raise IdempotencyKeyError(f"cannot build canonical JSON for the idempotency key/payload: {exc}") from exc


def canonical_hash(obj: Any) -> str:
    """SHA-256 hex digest of :func:`canonical_json`.

    ``surrogatepass``: a lone surrogate (JSON's ``"\\ud800"``, legal in a body) still hashes, to the
    same digest every time, instead of raising ``UnicodeEncodeError`` out of a consumer.
    """
    return hashlib.sha256(canonical_json(obj).encode("utf-8", "surrogatepass")).hexdigest()


def _to_json(value: Any) -> Any:
    # Decimal as its exact string (48.20 stays "48.20"; a float would round), dates in ISO 8601.
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(value, key=canonical_json)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")
