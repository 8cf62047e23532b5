"""The values of an order, checked for what they are: amount, currency, e-mail, the store's ids, order lines.

The store's identifiers (order, customer, sku) have ONE format, defined here next to the generator of
order ids (:func:`nuevo_pedido_id`) and checked by :func:`id_tienda` at every entry point: the store API,
the store's write, the workflow's claim and charge, and every queue consumer (through :data:`CAMPOS`,
which the consumers hand to :class:`mercadofresco.consumer.Consumer` as its ``field_checks``).

Presence is not validity: ``"importe_centimos": "48.20"``, ``-100`` or ``10**30`` are present, and an
order carrying one must be refused *before* anything is charged, e-mailed or sent to the ERP. The
charge function (``functions/cobro/solicitud.py``) and the queue consumers call these same functions,
so the workflow and the consumers agree on what a valid order is. An e-mail address, a card token or
any other personal value is never echoed back in an error.
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

from mercadofresco.validation import InvalidValueError, echo, identifier, unprintable

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "CAMPOS",
    "CANTIDAD_MAX",
    "EMAIL_MAX_CHARS",
    "ID_TIENDA_FORMATO",
    "ID_TIENDA_MAX_CHARS",
    "IMPORTE_MAX_CENTIMOS",
    "LINEAS_MAX",
    "MONEDAS_ISO_4217",
    "email",
    "id_tienda",
    "importe_centimos",
    "moneda",
    "nuevo_pedido_id",
]


IMPORTE_MAX_CENTIMOS = 100_000_000  # 1 000 000.00: no grocery order is larger; above it is a bug or an attack
EMAIL_MAX_CHARS = 254  # RFC 5321's path limit
ID_TIENDA_MAX_CHARS = 64
CANTIDAD_MAX = 10_000  # units of one sku in one order line
LINEAS_MAX = 200
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


def importe_centimos(valor: Any, campo: str = "importe_centimos") -> int:
    """A positive whole number of cents, at most :data:`IMPORTE_MAX_CENTIMOS` (never a string, float or bool)."""
    if isinstance(valor, bool) or not isinstance(valor, int):
        raise InvalidValueError(campo, f"must be a whole number of cents, got {echo(valor)}")
    if not 0 < valor <= IMPORTE_MAX_CENTIMOS:
        raise InvalidValueError(campo, f"must be between 1 and {IMPORTE_MAX_CENTIMOS} cents, got {echo(valor)}")
    return valor


def moneda(valor: Any, campo: str = "moneda") -> str:
    """An ISO 4217 currency code in circulation, upper case (``EUR``)."""
    if not isinstance(valor, str) or valor not in MONEDAS_ISO_4217:
        raise InvalidValueError(campo, f"must be an ISO 4217 currency code such as 'EUR', got {echo(valor)}")
    return valor


def email(valor: Any, campo: str = "email") -> str:
    """An e-mail address (shape only); the value itself never appears in the error."""
    if not isinstance(valor, str) or len(valor) > EMAIL_MAX_CHARS or not _EMAIL.fullmatch(valor) or unprintable(valor):
        raise InvalidValueError(campo, "is not an e-mail address")
    return valor


def id_tienda(valor: Any, campo: str) -> str:
    """An order, customer or sku id in the store's format; the value never appears in the error (it may be personal)."""
    if not isinstance(valor, str):
        raise InvalidValueError(campo, f"must be a string, got {type(valor).__name__}")
    if not _ID_TIENDA.fullmatch(valor):  # fullmatch: "$" would let a final "\n" in
        raise InvalidValueError(campo, ID_TIENDA_FORMATO)
    return valor


def nuevo_pedido_id() -> str:
    """A new order id, in the store's format (``PED-`` and 20 upper-case hex digits)."""
    return f"PED-{uuid.uuid4().hex[:20].upper()}"


def _cantidad(valor: Any, campo: str = "cantidad") -> int:
    if isinstance(valor, bool) or not isinstance(valor, int) or not 1 <= valor <= CANTIDAD_MAX:
        raise InvalidValueError(campo, f"must be a whole number from 1 to {CANTIDAD_MAX}, got {echo(valor)}")
    return valor


def _lineas(valor: Any) -> list[Any]:
    if not isinstance(valor, list) or len(valor) > LINEAS_MAX:
        raise InvalidValueError("lineas", f"must be a list of at most {LINEAS_MAX} order lines")
    for i, linea in enumerate(valor):
        if not isinstance(linea, dict):
            raise InvalidValueError(f"lineas[{i}]", "must be an object with sku and cantidad")
        id_tienda(linea.get("sku"), f"lineas[{i}].sku")
        _cantidad(linea.get("cantidad"), f"lineas[{i}].cantidad")
    return valor


# Field -> its check, applied by a consumer to every event that carries the field (whatever its type).
CAMPOS: dict[str, Callable[[Any], Any]] = {
    "pedido_id": lambda v: id_tienda(v, "pedido_id"),
    "carrito_id": lambda v: identifier(v, "carrito_id"),  # the carts table's, not the store's
    "cliente_id": lambda v: id_tienda(v, "cliente_id"),
    "sku": lambda v: id_tienda(v, "sku"),
    "cantidad": _cantidad,
    "importe_centimos": importe_centimos,
    "moneda": moneda,
    "email": email,
    "lineas": _lineas,
    # Optional text the projection stores (the outcome's reason, the event's id): a code or null, never an object.
    "motivo": lambda v: v is None or identifier(v, "motivo"),
    "error": lambda v: v is None or identifier(v, "error"),
    "id": lambda v: v is None or identifier(v, "id"),
}
