"""Generic value checks: a text id, a provider's error code, and how a value may be echoed in a message.

What an order's values are (its amount, currency, e-mail, the store's id format) is the domain's,
in :mod:`mercadofresco.dominio.valores`; this module holds what any entry point needs whatever its
domain: :class:`InvalidValueError`, the echo rule and the generic id check.

Error messages are safe to log and to attach to a dead letter: they name the field and echo a
value only when it cannot be sensitive, cut to a few characters (:func:`echo`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from mercadofresco.errors import MercadoFrescoError

__all__ = [
    "ECHO_MAX_CHARS",
    "ID_MAX_CHARS",
    "InvalidValueError",
    "echo",
    "identifier",
    "provider_error_code",
    "unprintable",
]

ID_MAX_CHARS = 200  # an id becomes part of an idempotency key (whose parts stop at 200)
ECHO_MAX_CHARS = 40  # of a non-sensitive value repeated in an error message (or an HTTP answer, or a log line)


class InvalidValueError(MercadoFrescoError, ValueError):
    """A field has a value it may not have; ``str(exc)`` is safe to log and to put in a DLQ attribute."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field {field!r} {problem}")
        self.field = field


def echo(value: Any) -> str:
    """A non-sensitive value as it may appear in a message: its type for containers, a short repr otherwise."""
    if isinstance(value, dict | list | tuple | set):
        return f"a {type(value).__name__}"
    text = ascii(value)  # escapes surrogates and control characters: the log line stays one line
    return text if len(text) <= ECHO_MAX_CHARS else text[: ECHO_MAX_CHARS - 1] + "…"


def identifier(value: Any, field: str, max_chars: int = ID_MAX_CHARS) -> str:
    """An id that may become part of a key, a header or a log field: text, no edges, no controls, <= ``max_chars``."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidValueError(field, f"must be a non-empty string, got {echo(value)}")
    if len(value) > max_chars or value != value.strip() or unprintable(value):
        raise InvalidValueError(field, f"must be at most {max_chars} printable characters without edge spaces")
    return value


def unprintable(text: str) -> bool:
    """Control, format, surrogate or unassigned characters: never part of a real id or address."""
    return any(unicodedata.category(c) in {"Cc", "Cf", "Cs", "Co", "Cn"} for c in text)


_CODE = re.compile(r"[A-Za-z0-9_.-]{1,40}")  # what a provider's error code looks like; free text never passes


def provider_error_code(body: Any) -> str:
    """A provider's error code from its answer (``error``/``codigo``/``code``), or ``""``; never its free text.

    An error body may echo the customer's e-mail, our request or a card fingerprint, and what this
    returns goes into exception messages (a workflow execution's cause), logs and ``mf-detalle``.
    """
    if not isinstance(body, dict):
        return ""
    code = body.get("error") or body.get("codigo") or body.get("code")
    return code if isinstance(code, str) and _CODE.fullmatch(code) else ""
