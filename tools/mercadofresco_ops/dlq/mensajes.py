"""Reading a dead letter: its body (through SNS/EventBridge envelopes), attributes and reason.

A malformed body is not an error here: it is evidence, recorded as ``cuerpo_invalido``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mercadofresco.dlq import (
    DEFERRALS_ATTRIBUTE,
    DETAIL_ATTRIBUTE,
    FUNCTION_ATTRIBUTE,
    REASON_ATTRIBUTE,
    SOURCE_QUEUE_ATTRIBUTE,
    TRUNCATED_BODY_ATTRIBUTE,
)

ATRIBUTOS_DLQ = (
    REASON_ATTRIBUTE,
    DETAIL_ATTRIBUTE,
    SOURCE_QUEUE_ATTRIBUTE,
    FUNCTION_ATTRIBUTE,
    DEFERRALS_ATTRIBUTE,
    TRUNCATED_BODY_ATTRIBUTE,
)
RESUMEN_MAX_CHARS = 80
DETALLE_MAX_CHARS = 300  # of mf-detalle in tables and --json (the consumer already caps it at 1000)
SENT_MAX_MS = 253_402_300_799_000  # 9999-12-31T23:59:59Z: a later SentTimestamp cannot be a date


@dataclass(frozen=True)
class Sobre:
    """How the event travelled: ``None`` (raw), ``"sns"`` or ``"eventbridge"``; plus the parsed outer body."""

    tipo: str | None
    exterior: Any = None


@dataclass(frozen=True)
class MensajeDlq:
    """One dead letter, as the runbook reads it."""

    message_id: str
    cuerpo: str
    enviado_ms: int | None
    recepciones: int | None
    evento: dict[str, Any] | None  # the event itself, unwrapped; None when the body is not a JSON object
    sobre: Sobre = field(default_factory=lambda: Sobre(None))
    version: Any = None
    motivo: str | None = None
    detalle: str | None = None
    cola_origen: str | None = None
    funcion: str | None = None
    grupo: str | None = None
    receipt_handle: str | None = None
    atributos: dict[str, Any] = field(default_factory=dict)  # MessageAttributes as SQS returned them

    @property
    def cuerpo_invalido(self) -> bool:
        return self.evento is None

    @property
    def enviado(self) -> datetime | None:
        return None if self.enviado_ms is None else datetime.fromtimestamp(self.enviado_ms / 1000, UTC)

    def resumen(self) -> str:
        return recortar(" ".join(self.cuerpo.split()), RESUMEN_MAX_CHARS)

    def a_dict(self) -> dict[str, Any]:
        """The JSON view the CLI prints with ``--json``."""
        return {
            "message_id": self.message_id,
            "enviado": self.enviado.isoformat() if self.enviado else None,
            "recepciones": self.recepciones,
            "motivo": self.motivo,
            "detalle": None if self.detalle is None else recortar(self.detalle, DETALLE_MAX_CHARS),
            "cola_origen": self.cola_origen,
            "funcion": self.funcion,
            "version": self.version,
            "sobre": self.sobre.tipo,
            "grupo": self.grupo,
            "cuerpo_invalido": self.cuerpo_invalido,
            "cuerpo": self.resumen(),
        }


def unwrap(cuerpo: str) -> tuple[dict[str, Any] | None, Sobre]:
    """The event inside ``cuerpo``: raw JSON, an SNS notification's ``Message``, or EventBridge's ``detail``.

    EventBridge's own top-level ``version`` ("0") is the envelope's, never the event's: only
    ``detail`` is returned for it.
    """
    try:
        datos = json.loads(cuerpo)
    except (ValueError, TypeError, RecursionError):  # RecursionError: JSON nested deeper than Python's stack
        return None, Sobre(None)
    if isinstance(datos, dict) and datos.get("Type") == "Notification" and isinstance(datos.get("Message"), str):
        interior, _ = unwrap(datos["Message"])
        return interior, Sobre("sns", datos)
    if isinstance(datos, dict) and isinstance(datos.get("detail"), dict) and "detail-type" in datos:
        return datos["detail"], Sobre("eventbridge", datos)
    return (datos, Sobre(None)) if isinstance(datos, dict) else (None, Sobre(None))


def envolver(evento: dict[str, Any], sobre: Sobre) -> str:
    """The body to send for ``evento``, in the same envelope it arrived in."""
    if sobre.tipo == "sns":
        return json.dumps({**sobre.exterior, "Message": json.dumps(evento)})
    if sobre.tipo == "eventbridge":
        return json.dumps({**sobre.exterior, "detail": evento})
    return json.dumps(evento)


def recortar(texto: str, maximo: int) -> str:
    """``texto`` cut to ``maximo`` characters (an ellipsis marks the cut), lone surrogates made printable.

    A body's JSON may spell a lone surrogate (``"\\ud800"``); printed as it is, it would make the
    terminal's encoder raise. ``U+FFFD`` shows where it was.
    """
    texto = _SURROGADO.sub("\ufffd", texto)
    return texto if len(texto) <= maximo else texto[: maximo - 1] + "…"


_SURROGADO = re.compile("[\ud800-\udfff]")


def _atributo(atributos: dict[str, Any], nombre: str) -> str | None:
    valor = atributos.get(nombre)
    texto = valor.get("StringValue") if isinstance(valor, dict) else None
    return texto if isinstance(texto, str) else None


def _entero(valor: Any, maximo: int | None = None) -> int | None:
    """An SQS number attribute; absent, not a number or out of range (a date past year 9999) -> None."""
    try:
        numero = int(valor) if valor is not None else None
    except (TypeError, ValueError):
        return None
    return None if numero is None or numero < 0 or (maximo is not None and numero > maximo) else numero


def leer(mensaje: dict[str, Any]) -> MensajeDlq:
    """A :class:`MensajeDlq` from one element of ``ReceiveMessage``'s ``Messages``; never raises.

    Whatever a DLQ holds (any body SQS accepts, any attributes, no timestamps) is read:
    the runbook's tools must work precisely on the messages nothing else could read.
    """
    cuerpo = mensaje.get("Body")
    cuerpo = cuerpo if isinstance(cuerpo, str) else ""
    sistema = mensaje.get("Attributes") or {}
    atributos = mensaje.get("MessageAttributes") or {}
    evento, sobre = unwrap(cuerpo)
    return MensajeDlq(
        message_id=str(mensaje.get("MessageId", "?")),
        cuerpo=cuerpo,
        enviado_ms=_entero(sistema.get("SentTimestamp"), SENT_MAX_MS),
        recepciones=_entero(sistema.get("ApproximateReceiveCount")),
        evento=evento,
        sobre=sobre,
        version=evento.get("version") if evento is not None else None,
        motivo=_atributo(atributos, REASON_ATTRIBUTE),
        detalle=_atributo(atributos, DETAIL_ATTRIBUTE),
        cola_origen=_atributo(atributos, SOURCE_QUEUE_ATTRIBUTE),
        funcion=_atributo(atributos, FUNCTION_ATTRIBUTE),
        grupo=sistema.get("MessageGroupId"),
        receipt_handle=mensaje.get("ReceiptHandle"),
        atributos=atributos,
    )
