"""The store API's side of an order: validate a ``POST /pedidos`` body, honour the client's
``Idempotency-Key``, and read an order (with its projected state) back.

A client that times out does not know whether its order exists; it retries with the same
``Idempotency-Key`` and must get the *same* order, not a second one (the lesson's duplicate
charge, one layer earlier). So the key is claimed in the same PostgreSQL transaction as the
order and its ``PedidoCreado`` outbox row (:func:`mercadofresco.dominio.pedidos.crear_pedido`):
either the key, the order and the event all exist, or none does. A concurrent retry with the
same key waits on the claim's row lock and then reads the order the first request wrote.
The same key with another body is a client bug, refused with :class:`ClaveReutilizada`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mercadofresco import validation
from mercadofresco.dominio import valores
from mercadofresco.dominio.pedidos import LineaPedido, Pedido, PedidoInvalido, crear_pedido
from mercadofresco.dominio.valores import nuevo_pedido_id
from mercadofresco.errors import PermanentError
from mercadofresco.outbox.exceptions import OutboxError
from mercadofresco.validation import echo

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from psycopg import Connection

__all__ = [
    "ClaveIdempotenciaInvalida",
    "ClaveReutilizada",
    "PedidoRegistrado",
    "SolicitudInvalida",
    "consultar_pedido",
    "huella",
    "nuevo_pedido_id",
    "registrar_pedido",
    "validar_clave",
    "validar_solicitud",
]

MAX_LINEAS = 50
MAX_CANTIDAD = 1_000
MAX_PRECIO_CENTIMOS = 10_000_000  # 100,000.00 a unit: anything above is a client bug, not a sale
MAX_CLAVE = 255
MAX_CAMPOS_DESCONOCIDOS = 5  # named in an answer; the rest are counted (a body may carry thousands)
CAMPOS_PEDIDO = frozenset({"cliente_id", "email", "lineas", "moneda"})
CAMPOS_LINEA = frozenset({"sku", "cantidad", "precio_centimos"})
_CLAVE = re.compile(r"^[\x21-\x7e]+$")  # visible ASCII: a UUID, a ULID, a hash all fit
# Active ISO 4217 alphabetic codes (amounts are kept in the currency's minor unit).
MONEDAS_ISO_4217 = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF
    CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL
    HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL
    MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON
    RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH
    UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG""".split()  # noqa: SIM905 - a table to read
)


class SolicitudInvalida(PedidoInvalido):
    """The request body is not a valid order; ``errores`` lists every problem found (all of them, at once)."""

    def __init__(self, errores: list[str]) -> None:
        super().__init__("invalid order: " + "; ".join(errores))
        self.errores = errores


class ClaveIdempotenciaInvalida(OutboxError, PermanentError, ValueError):
    """The ``Idempotency-Key`` header is missing or malformed."""


class ClaveReutilizada(OutboxError, PermanentError):
    """The ``Idempotency-Key`` was already used with a different request body."""

    def __init__(self, clave: str, pedido_id: str) -> None:
        super().__init__(
            f"Idempotency-Key {echo(clave)} was already used for order {pedido_id} with a different request body;"
            " send a new key for a new order, or the same body to get that order back"
        )
        self.clave = clave
        self.pedido_id = pedido_id


@dataclass(frozen=True, slots=True)
class PedidoRegistrado:
    """What ``POST /pedidos`` answers: the order, and whether this request created it (201) or found it (200)."""

    pedido: dict[str, Any]
    creado: bool


def _es_entero(valor: Any) -> bool:
    return isinstance(valor, int) and not isinstance(valor, bool)


def _id(datos: Mapping[str, Any], campo: str, donde: str, errores: list[str]) -> str | None:
    """A customer or sku id in the store's format (:func:`mercadofresco.valores.id_tienda`)."""
    valor = datos.get(campo)
    if not isinstance(valor, str) or not valor.strip():
        errores.append(f"{donde}{campo}: required, a non-empty string")
        return None
    try:
        return valores.id_tienda(valor, campo)
    except validation.InvalidValueError:
        errores.append(f"{donde}{campo}: {valores.ID_TIENDA_FORMATO}")
        return None


def _desconocidos(datos: Mapping[str, Any], conocidos: frozenset[str]) -> str | None:
    """The unknown field names, each cut as the log policy cuts a value, the first few named and the rest counted."""
    extra = sorted(set(datos) - conocidos)
    if not extra:
        return None
    nombrados = ", ".join(echo(nombre) for nombre in extra[:MAX_CAMPOS_DESCONOCIDOS])
    resto = len(extra) - MAX_CAMPOS_DESCONOCIDOS
    return f"unknown field(s) {nombrados}" + (f" and {resto} more" if resto > 0 else "")


def _entero_positivo(datos: Mapping[str, Any], campo: str, maximo: int, donde: str, errores: list[str]) -> int | None:
    valor = datos.get(campo)
    if not _es_entero(valor) or not 1 <= valor <= maximo:
        errores.append(f"{donde}{campo}: required, an integer from 1 to {maximo} (got {echo(valor)})")
        return None
    return valor


def _lineas(valor: Any, errores: list[str]) -> list[LineaPedido]:
    if not isinstance(valor, list) or not valor:
        errores.append("lineas: required, a non-empty list of {sku, cantidad, precio_centimos}")
        return []
    if len(valor) > MAX_LINEAS:
        errores.append(f"lineas: at most {MAX_LINEAS} lines (got {len(valor)})")
        return []
    lineas: list[LineaPedido] = []
    for i, linea in enumerate(valor):
        donde = f"lineas[{i}]."
        if not isinstance(linea, dict):
            errores.append(f"lineas[{i}]: must be an object with sku, cantidad and precio_centimos")
            continue
        if desconocidos := _desconocidos(linea, CAMPOS_LINEA):
            errores.append(f"{donde}: {desconocidos}")
        sku = _id(linea, "sku", donde, errores)
        cantidad = _entero_positivo(linea, "cantidad", MAX_CANTIDAD, donde, errores)
        precio = _entero_positivo(linea, "precio_centimos", MAX_PRECIO_CENTIMOS, donde, errores)
        if sku is not None and cantidad is not None and precio is not None:
            lineas.append(LineaPedido(sku, cantidad, precio))
    skus = [linea.sku for linea in lineas]
    if len(skus) != len(set(skus)):
        # One line per sku: the stock reservation's key is reserva:{pedido_id}:{sku}.
        errores.append("lineas: each sku may appear once (add the quantities)")
    return lineas


def validar_solicitud(cuerpo: Any, pedido_id: str) -> Pedido:
    """Build the order from a parsed ``POST /pedidos`` body, or raise :class:`SolicitudInvalida` listing every problem.

    Amounts are integer cents (never floats), quantities positive integers, the currency an
    ISO 4217 code (default ``EUR``), the e-mail well-formed. Unknown fields are refused: in a
    request (unlike an event) a misspelt field is a client bug the client should hear about.
    """
    if not isinstance(cuerpo, dict):
        raise SolicitudInvalida(["the body must be a JSON object"])
    errores: list[str] = []
    if desconocidos := _desconocidos(cuerpo, CAMPOS_PEDIDO):
        errores.append(f"{desconocidos} (accepted: {', '.join(sorted(CAMPOS_PEDIDO))})")
    cliente_id = _id(cuerpo, "cliente_id", "", errores)
    email = cuerpo.get("email")
    try:
        valores.email(email)  # also refuses NUL/control characters PostgreSQL or a mail header cannot take
    except validation.InvalidValueError:
        errores.append("email: required, an address like nombre@dominio.es")  # never echoed: personal data
    moneda = cuerpo.get("moneda", "EUR")
    if not isinstance(moneda, str) or moneda not in MONEDAS_ISO_4217:  # a list or a dict is not hashable
        errores.append(f"moneda: an ISO 4217 code such as EUR (got {validation.echo(moneda)})")
    lineas = _lineas(cuerpo.get("lineas"), errores)
    if errores:
        raise SolicitudInvalida(errores)
    pedido = Pedido(pedido_id, str(cliente_id), tuple(lineas), str(moneda), str(email))
    try:  # what only the whole order can break (its total above the ceiling): refused here, not by the write
        pedido.validar()
    except PedidoInvalido as exc:
        raise SolicitudInvalida([str(exc)]) from None
    return pedido


def validar_clave(clave: str | None) -> str:
    """The ``Idempotency-Key`` header's value, or :class:`ClaveIdempotenciaInvalida` saying why not."""
    if not clave:
        raise ClaveIdempotenciaInvalida(
            "the Idempotency-Key header is required: a unique value per order (e.g. a UUID), reused on every retry"
        )
    if len(clave) > MAX_CLAVE or not _CLAVE.fullmatch(clave):
        raise ClaveIdempotenciaInvalida(f"Idempotency-Key: 1 to {MAX_CLAVE} visible ASCII characters, no spaces")
    return clave


def huella(cuerpo: Any) -> str:
    """SHA-256 of the body's canonical JSON: key order and whitespace do not make two bodies different."""
    canonico = json.dumps(cuerpo, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonico.encode("utf-8", "surrogatepass")).hexdigest()  # a lone "\ud800" hashes too


def registrar_pedido(
    conn: Connection,
    clave: str,
    cuerpo: Any,
    *,
    llamante: str = "",
    antes_de_confirmar: Callable[[], None] | None = None,
) -> PedidoRegistrado:
    """Create the order for ``clave`` (key, order and ``PedidoCreado`` in one transaction) or return the one it made.

    Keys are scoped to ``llamante`` (the authenticated caller, e.g. the IAM principal API Gateway
    verified), as payment APIs scope them per account: two clients that happen to pick the same
    key get two orders, and no client gets another's order back by replaying a key it guessed.

    Raises
    ------
    ClaveIdempotenciaInvalida
        ``clave`` is missing or malformed (nothing written).
    SolicitudInvalida
        The body is not a valid order (nothing written, the key stays free).
    ClaveReutilizada
        ``clave`` already made an order from a different body (nothing written).

    ``antes_de_confirmar`` runs after a new order's rows are written and before they commit (the
    relay's pending signal, :mod:`mercadofresco.outbox.pending`); what it raises rolls them back.
    """
    clave = validar_clave(clave)
    pedido = validar_solicitud(cuerpo, nuevo_pedido_id())
    firma = huella(cuerpo)
    clave_guardada = _clave_de(llamante, clave)
    with conn.transaction():
        # The claim: a concurrent request with the same key blocks here until this one commits,
        # then finds the row (ON CONFLICT DO NOTHING returns nothing) and reads the order.
        reclamada = conn.execute(
            "INSERT INTO solicitudes_pedido (clave_idempotencia, huella, pedido_id) VALUES (%s, %s, %s)"
            " ON CONFLICT (clave_idempotencia) DO NOTHING RETURNING pedido_id",
            (clave_guardada, firma, pedido.pedido_id),
        ).fetchone()
        if reclamada is not None:
            crear_pedido(conn, pedido)
            if antes_de_confirmar is not None:
                antes_de_confirmar()
            creado, pedido_id = True, pedido.pedido_id
        else:
            fila = conn.execute(
                "SELECT huella, pedido_id FROM solicitudes_pedido WHERE clave_idempotencia = %s", (clave_guardada,)
            ).fetchone()
            if fila[0] != firma:
                raise ClaveReutilizada(clave, fila[1])
            creado, pedido_id = False, fila[1]
        leido = consultar_pedido(conn, pedido_id)
    if leido is None:  # the key's order is gone (deleted by an operator): say so, never invent one
        raise OutboxError(f"Idempotency-Key {echo(clave)} points to order {pedido_id}, which no longer exists")
    return PedidoRegistrado(leido, creado)


def _clave_de(llamante: str, clave: str) -> str:
    """The stored key: the caller's scope, then the client's key ("\n" never occurs in a valid key)."""
    return f"{llamante}\n{clave}" if llamante else clave


def consultar_pedido(conn: Connection, pedido_id: str, *, llamante: str = "") -> dict[str, Any] | None:
    """The order as ``GET /pedidos/{id}`` shows it (state included), or ``None`` when there is none.

    With ``llamante`` (the authenticated caller), only an order that caller's own request created:
    another caller's order is ``None`` too, so a caller learns neither its content (the customer's
    e-mail) nor that it exists. Without one (no IAM in front: a local run) every order is readable.
    """
    fila = conn.execute(
        "SELECT pedido_id, cliente_id, email, lineas, importe_centimos, moneda, estado, estado_motivo,"
        " creado_en, estado_actualizado_en FROM pedidos p WHERE pedido_id = %(pedido_id)s"
        " AND (%(alcance)s = '' OR EXISTS (SELECT 1 FROM solicitudes_pedido s"
        " WHERE s.pedido_id = p.pedido_id AND starts_with(s.clave_idempotencia, %(alcance)s)))",
        {"pedido_id": pedido_id, "alcance": _clave_de(llamante, "") if llamante else ""},
    ).fetchone()
    if fila is None:
        return None
    (pid, cliente_id, email, lineas, importe, moneda, estado, motivo, creado_en, actualizado_en) = fila
    return {
        "pedido_id": pid,
        "cliente_id": cliente_id,
        "email": email,
        "lineas": lineas,
        "importe_centimos": importe,
        "moneda": moneda.strip(),
        "estado": estado,
        "estado_motivo": motivo,
        "creado_en": creado_en.isoformat(),
        "estado_actualizado_en": actualizado_en.isoformat() if actualizado_en else None,
    }
