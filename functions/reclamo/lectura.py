"""What the order workflow starts with, read once: the pipe's batch -> one PedidoCreado, or a named error.

The pipe sends a JSON array even for ``BatchSize`` 1; each record's body is the ``PedidoCreado``
EventBridge event the bus rule wrote. Reading it here, in the function that claims the order, costs
no state transition (a ``Pass``/``Choice`` that only reads data is one). Tolerant reader: only the
contract's fields are checked (``email`` and ``moneda`` too: every outcome is told to the customer and
the confirmation carries them); unknown fields pass through. Rules run in order: the version first
(a version-2 event lacks version 1's fields, and ``version-desconocida`` is the reason the on-call must
see), then the presence of version 1's fields, then their types. Each line's sku and quantity are
checked by the charge function, before any charge.

:class:`EventoInvalido`'s message is ``"<mf-motivo>: <detail>"`` (:class:`mercadofresco.dlq.DlqReason`):
the workflow sends the body to the order DLQ with that reason. Anything but one SQS record is
:class:`LoteNoAdmitido` (a misconfigured pipe): the execution fails loudly, the events are in the
bus archive for replay.
"""

from __future__ import annotations

import json
from typing import Any

from mercadofresco import validation
from mercadofresco.dlq import DlqReason
from mercadofresco.dominio import claves, valores
from mercadofresco.dominio.errores import LoteNoAdmitido
from mercadofresco.errors import EventoInvalido
from mercadofresco.idempotency.exceptions import IdempotencyKeyError

VERSION = 1
CAMPOS = ("pedido_id", "importe_centimos", "lineas", "email", "moneda")
# What PedidoConfirmado carries (the ERP and the e-mail read these; never the card token).
CAMPOS_CONFIRMACION = ("pedido_id", "email", "importe_centimos", "moneda", "lineas")


def _invalido(motivo: DlqReason, detalle: str) -> EventoInvalido:
    return EventoInvalido(f"{motivo}: {detalle}")


def pedido_creado(registros: Any) -> dict[str, Any]:
    """The ``detail`` of the batch's one ``PedidoCreado``; raises :class:`LoteNoAdmitido` / :class:`EventoInvalido`."""
    if not isinstance(registros, list) or len(registros) != 1:
        n = len(registros) if isinstance(registros, list) else type(registros).__name__
        raise LoteNoAdmitido(f"pipe-mf-pedidos must start one execution per order (BatchSize 1), got {n}")
    registro = registros[0]
    if not isinstance(registro, dict) or not isinstance(registro.get("body"), str):
        raise LoteNoAdmitido("the execution's input is not an SQS record with a string 'body'")
    try:
        evento = json.loads(registro["body"])
    except ValueError:
        raise _invalido(DlqReason.JSON_INVALIDO, "the body is not JSON") from None
    detalle = evento.get("detail") if isinstance(evento, dict) else None
    if not isinstance(detalle, dict):
        raise _invalido(DlqReason.JSON_INVALIDO, "the body is not an EventBridge event with a 'detail' object")
    if "version" not in detalle:
        raise _invalido(DlqReason.CAMPO_AUSENTE, "PedidoCreado needs version")
    version = detalle["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version != VERSION:
        raise _invalido(DlqReason.VERSION_DESCONOCIDA, f"PedidoCreado version other than {VERSION}")
    if ausentes := [c for c in CAMPOS if c not in detalle]:
        raise _invalido(
            DlqReason.CAMPO_AUSENTE, f"PedidoCreado needs {', '.join(CAMPOS)}; missing {', '.join(ausentes)}"
        )
    importe = detalle["importe_centimos"]
    if isinstance(importe, bool) or not isinstance(importe, int | float):
        raise _invalido(DlqReason.DATO_INVALIDO, "PedidoCreado with a non-numeric importe_centimos")
    try:
        claves.pedido(valores.id_tienda(detalle["pedido_id"], "pedido_id"))  # a UUID-shaped id cannot name its claim
    except (validation.InvalidValueError, IdempotencyKeyError) as exc:
        raise _invalido(DlqReason.DATO_INVALIDO, f"PedidoCreado with a pedido_id no order can have: {exc}") from None
    return detalle


def confirmacion(pedido: dict[str, Any]) -> dict[str, Any]:
    """PedidoConfirmado's explicit payload but the charge's reference and time (the workflow adds them)."""
    carga = {"tipo": "PedidoConfirmado", "version": VERSION, **{c: pedido[c] for c in CAMPOS_CONFIRMACION}}
    if "cliente_id" in pedido:  # optional: a card token may pay instead
        carga["cliente_id"] = pedido["cliente_id"]
    return carga
