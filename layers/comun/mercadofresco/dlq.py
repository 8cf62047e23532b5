"""How a consumer tells the on-call *why* a message is in a dead-letter queue.

SQS's own redrive moves a message to the DLQ untouched: it cannot say why. So a
consumer that recognises a message it will never process (malformed JSON, missing
fields, unknown ``version``) does not fail it ``maxReceiveCount`` times: it sends the
message itself to the queue's DLQ with these message attributes, then acknowledges
the original. Messages that land by redrive (transient failures that outlived the
retries) carry no reason, and the DLQ tools treat the missing attribute as evidence.

The DLQ tools (``mf-dlq``) read exactly these attribute names.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "DEFERRALS_ATTRIBUTE",
    "DETAIL_ATTRIBUTE",
    "FUNCTION_ATTRIBUTE",
    "REASON_ATTRIBUTE",
    "SOURCE_QUEUE_ATTRIBUTE",
    "DlqReason",
]

REASON_ATTRIBUTE = "mf-motivo"  # a DlqReason value
DETAIL_ATTRIBUTE = "mf-detalle"  # human-readable error, no card data
SOURCE_QUEUE_ATTRIBUTE = "mf-cola-origen"  # URL of the queue the message was consumed from
FUNCTION_ATTRIBUTE = "mf-funcion"  # the consumer that classified it
DEFERRALS_ATTRIBUTE = "mf-aplazamientos"  # deferrals while a circuit was open (ERP)
# Bytes of the original body, set only when the copy's body had to be cut to leave room for its reason.
TRUNCATED_BODY_ATTRIBUTE = "mf-cuerpo-recortado"


class DlqReason(StrEnum):
    """Why a consumer gave up on a message without retrying it."""

    JSON_INVALIDO = "json-invalido"
    CAMPO_AUSENTE = "campo-ausente"
    VERSION_DESCONOCIDA = "version-desconocida"
    DATO_INVALIDO = "dato-invalido"
    APLAZAMIENTOS_AGOTADOS = "aplazamientos-agotados"

    @property
    def is_poison(self) -> bool:
        """Poison: the consumer cannot understand the message (a code/contract problem)."""
        return self in {DlqReason.JSON_INVALIDO, DlqReason.VERSION_DESCONOCIDA}
