"""Value checks every entry point shares: an order's amount, currency, e-mail and ids, checked for what they are.

The store's identifiers (order, customer, sku) have ONE format, defined here next to the generator of
order ids (:func:`nuevo_pedido_id`) and checked by :func:`id_tienda` at every entry point: the store API,
the store's write, the workflow's claim and charge, and every queue consumer.

Presence is not validity: ``"importe_centimos": "48.20"``, ``-100`` or ``10**30`` are present, and an
order carrying one must be refused *before* anything is charged, e-mailed or sent to the ERP. The
charge function (``functions/cobro/solicitud.py``) and the queue consumers (the body readers) call
these same functions, so the workflow and the consumers agree on what a valid order is.

Error messages are safe to log and to attach to a dead letter: they name the field and echo a
value only when it cannot be sensitive (an amount, a currency code), cut to a few characters.
An e-mail address, a card token or any other personal value is never echoed back.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from typing import Any

from mercadofresco.errors import MercadoFrescoError

__all__ = [
    "ECO_MAX_CHARS",
    "EMAIL_MAX_CHARS",
    "ID_MAX_CHARS",
    "ID_TIENDA_FORMATO",
    "ID_TIENDA_MAX_CHARS",
    "IMPORTE_MAX_CENTIMOS",
    "ValorInvalido",
    "codigo_proveedor",
    "eco",
    "email",
    "id_tienda",
    "identificador",
    "importe_centimos",
    "moneda",
    "nuevo_pedido_id",
]


IMPORTE_MAX_CENTIMOS = 100_000_000  # 1 000 000.00: no grocery order is larger; above it is a bug or an attack
ID_MAX_CHARS = 200  # an id becomes part of an idempotency key (whose parts stop at 200)
EMAIL_MAX_CHARS = 254  # RFC 5321's path limit
ECO_MAX_CHARS = 40  # of a non-sensitive value repeated in an error message (or an HTTP answer, or a log line)
ID_TIENDA_MAX_CHARS = 64
# The store's ids: what its generator makes ("PED-" and 20 hex digits) and what it accepts as a customer or a
# sku. ASCII only, so an id is the same bytes in a URL, a header (Idempotency-Key), a log and a DynamoDB key;
# no ':' (it separates an idempotency key's parts), no space, no control or format character.
_ID_TIENDA = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{ID_TIENDA_MAX_CHARS - 1}}}")
ID_TIENDA_FORMATO = (
    f"must be 1 to {ID_TIENDA_MAX_CHARS} ASCII letters, digits, '.', '_' or '-', starting with a letter or digit"
)

# ISO 4217 codes of currencies in circulation (2025). Left out on purpose: precious metals
# (XAU, XAG, XPD, XPT), fund and accounting units (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW,
# XBA-XBD, XDR, XSU, XUA), testing codes (XTS, XXX) and withdrawn ones (HRK, SLL, CUC, ANG):
# nobody pays a basket of groceries in them.
_CODIGOS_ISO_4217 = """AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
    CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD
    GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT
    LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR
    NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP
    STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD
    XCG XOF XPF YER ZAR ZMW ZWG"""
MONEDAS_ISO_4217 = frozenset(_CODIGOS_ISO_4217.split())
# Deliberately simple: one "@", a dot in the domain, no spaces or control characters, ASCII or
# not (internationalised addresses exist). The provider does the real check; this one keeps
# obvious garbage (a number, "n/a", a whole JSON document) from becoming an e-mail.
_EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s.]+(\.[^@\s.]+)+")


class ValorInvalido(MercadoFrescoError, ValueError):
    """A field has a value no order can have; ``str(exc)`` is safe to log and to put in a DLQ attribute."""

    def __init__(self, campo: str, problema: str) -> None:
        super().__init__(f"field {campo!r} {problema}")
        self.campo = campo


def eco(valor: Any) -> str:
    """A non-sensitive value as it may appear in a message: its type for containers, a short repr otherwise."""
    if isinstance(valor, dict | list | tuple | set):
        return f"a {type(valor).__name__}"
    texto = ascii(valor)  # escapes surrogates and control characters: the log line stays one line
    return texto if len(texto) <= ECO_MAX_CHARS else texto[: ECO_MAX_CHARS - 1] + "…"


def importe_centimos(valor: Any, campo: str = "importe_centimos") -> int:
    """A positive whole number of cents, at most :data:`IMPORTE_MAX_CENTIMOS` (never a string, float or bool)."""
    if isinstance(valor, bool) or not isinstance(valor, int):
        raise ValorInvalido(campo, f"must be a whole number of cents, got {eco(valor)}")
    if not 0 < valor <= IMPORTE_MAX_CENTIMOS:
        raise ValorInvalido(campo, f"must be between 1 and {IMPORTE_MAX_CENTIMOS} cents, got {eco(valor)}")
    return valor


def moneda(valor: Any, campo: str = "moneda") -> str:
    """An ISO 4217 currency code in circulation, upper case (``EUR``)."""
    if not isinstance(valor, str) or valor not in MONEDAS_ISO_4217:
        raise ValorInvalido(campo, f"must be an ISO 4217 currency code such as 'EUR', got {eco(valor)}")
    return valor


def email(valor: Any, campo: str = "email") -> str:
    """An e-mail address (shape only); the value itself never appears in the error."""
    if not isinstance(valor, str) or len(valor) > EMAIL_MAX_CHARS or not _EMAIL.fullmatch(valor) or _raro(valor):
        raise ValorInvalido(campo, "is not an e-mail address")
    return valor


def identificador(valor: Any, campo: str, max_chars: int = ID_MAX_CHARS) -> str:
    """An id that may become part of a key, a header or a log field: text, no edges, no controls, <= ``max_chars``."""
    if not isinstance(valor, str) or not valor.strip():
        raise ValorInvalido(campo, f"must be a non-empty string, got {eco(valor)}")
    if len(valor) > max_chars or valor != valor.strip() or _raro(valor):
        raise ValorInvalido(campo, f"must be at most {max_chars} printable characters without edge spaces")
    return valor


def id_tienda(valor: Any, campo: str) -> str:
    """An order, customer or sku id in the store's format; the value never appears in the error (it may be personal)."""
    if not isinstance(valor, str):
        raise ValorInvalido(campo, f"must be a string, got {type(valor).__name__}")
    if not _ID_TIENDA.fullmatch(valor):  # fullmatch: "$" would let a final "\n" in
        raise ValorInvalido(campo, ID_TIENDA_FORMATO)
    return valor


def nuevo_pedido_id() -> str:
    """A new order id, in the store's format (``PED-`` and 20 upper-case hex digits)."""
    return f"PED-{uuid.uuid4().hex[:20].upper()}"


def _raro(texto: str) -> bool:
    """Control, format, surrogate or unassigned characters: never part of a real id or address."""
    return any(unicodedata.category(c) in {"Cc", "Cf", "Cs", "Co", "Cn"} for c in texto)


_CODIGO = re.compile(r"[A-Za-z0-9_.-]{1,40}")  # what a provider's error code looks like; free text never passes


def codigo_proveedor(cuerpo: Any) -> str:
    """A provider's error code from its answer (``error``/``codigo``/``code``), or ``""``; never its free text.

    An error body may echo the customer's e-mail, our request or a card fingerprint, and what this
    returns goes into exception messages (a workflow execution's cause), logs and ``mf-detalle``.
    """
    if not isinstance(cuerpo, dict):
        return ""
    codigo = cuerpo.get("error") or cuerpo.get("codigo") or cuerpo.get("code")
    return codigo if isinstance(codigo, str) and _CODIGO.fullmatch(codigo) else ""
