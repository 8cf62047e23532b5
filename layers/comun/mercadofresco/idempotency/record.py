"""The idempotency record as it lives in DynamoDB (one item per key).

=================  ======  =====================================================================
attribute          type    meaning
=================  ======  =====================================================================
``clave``          S       the key (partition key), e.g. ``cobro:PED-2026-084417``
``estado``         S       ``EN_CURSO`` | ``COMPLETADO`` | ``FALLIDO``
``expira_en``      N       epoch seconds; past it the record counts as absent (DynamoDB TTL attribute)
``caduca_bloqueo`` N       epoch seconds; end of an ``EN_CURSO`` claim (removed once finished)
``propietario``    S       random token of the claim, so only its holder finishes or releases it
``hash_payload``   S       SHA-256 of the canonical payload (absent when the caller validates none)
``resultado``      S       the operation's result as JSON (``COMPLETADO``)
``error``          M       ``{tipo, mensaje}`` of the permanent failure (``FALLIDO``)
=================  ======  =====================================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "MAX_ERROR_MESSAGE_CHARS",
    "IdempotencyRecord",
    "IdempotencyStatus",
    "StoredError",
    "error_attribute",
    "result_json",
]

MAX_ERROR_MESSAGE_CHARS = 1000  # a stored error message is for humans and for the replayed exception


class IdempotencyStatus(StrEnum):
    """The three states of a record; with only two, two simultaneous consumers both run."""

    EN_CURSO = "EN_CURSO"
    COMPLETADO = "COMPLETADO"
    FALLIDO = "FALLIDO"


@dataclass(frozen=True, slots=True)
class StoredError:
    """A permanent failure as stored: qualified class name and message."""

    tipo: str
    mensaje: str

    @classmethod
    def of(cls, exc: BaseException) -> StoredError:
        """How ``exc`` is stored: its qualified class name, and its message as DynamoDB can hold it (cut short)."""
        # DynamoDB stores valid UTF-8 only: a lone surrogate (JSON's "\ud800", legal in a provider's body and
        # so in a message that quotes it) becomes its escape; everything else is kept.
        message = str(exc).encode("utf-8", "backslashreplace").decode("utf-8")
        return cls(tipo=f"{type(exc).__module__}.{type(exc).__qualname__}", mensaje=message[:MAX_ERROR_MESSAGE_CHARS])

    @property
    def module(self) -> str:
        return self.tipo.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.tipo.rpartition(".")[2]


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """One idempotency record, decoded."""

    clave: str
    estado: IdempotencyStatus
    expira_en: int
    caduca_bloqueo: int | None = None
    propietario: str | None = None
    hash_payload: str | None = None
    resultado_json: str | None = None
    error: StoredError | None = None

    def expired(self, now_s: float) -> bool:
        """Past ``expira_en``: DynamoDB's TTL deletes late (up to 48 h), so treat it as absent."""
        return self.expira_en < int(now_s)

    def lease_alive(self, now_s: float) -> bool:
        """An ``EN_CURSO`` claim whose lease has not ended."""
        return (
            self.estado is IdempotencyStatus.EN_CURSO
            and self.caduca_bloqueo is not None
            and self.caduca_bloqueo >= int(now_s)
        )

    def result(self) -> Any:
        """The stored result, decoded from JSON."""
        return None if self.resultado_json is None else json.loads(self.resultado_json)

    def to_item(self) -> dict[str, dict[str, Any]]:
        """The DynamoDB (low-level, typed) item."""
        item: dict[str, dict[str, Any]] = {
            "clave": {"S": self.clave},
            "estado": {"S": self.estado.value},
            "expira_en": {"N": str(self.expira_en)},
        }
        optional = {
            "caduca_bloqueo": None if self.caduca_bloqueo is None else {"N": str(self.caduca_bloqueo)},
            "propietario": None if self.propietario is None else {"S": self.propietario},
            "hash_payload": None if self.hash_payload is None else {"S": self.hash_payload},
            "resultado": None if self.resultado_json is None else {"S": self.resultado_json},
            "error": None if self.error is None else error_attribute(self.error),
        }
        item.update({k: v for k, v in optional.items() if v is not None})
        return item

    @classmethod
    def from_item(cls, item: dict[str, dict[str, Any]]) -> IdempotencyRecord:
        """Decode a low-level item (as GetItem or an ``ALL_OLD`` answer returns it)."""
        error = item.get("error", {}).get("M")
        return cls(
            clave=item["clave"]["S"],
            estado=IdempotencyStatus(item["estado"]["S"]),
            expira_en=int(item["expira_en"]["N"]),
            caduca_bloqueo=int(item["caduca_bloqueo"]["N"]) if "caduca_bloqueo" in item else None,
            propietario=item.get("propietario", {}).get("S"),
            hash_payload=item.get("hash_payload", {}).get("S"),
            resultado_json=item.get("resultado", {}).get("S"),
            error=None if error is None else StoredError(tipo=error["tipo"]["S"], mensaje=error["mensaje"]["S"]),
        )


def result_json(result: Any) -> str:
    """A result as stored (``resultado``): JSON, UTF-8 kept as it is unless the text holds a lone surrogate.

    DynamoDB stores valid UTF-8 only, and a lone surrogate (JSON's ``"\\ud800"``) is not; escaped as JSON
    (``ensure_ascii``) it is stored, and decodes to the very same value. Raises ``TypeError``/``ValueError``
    for what JSON cannot hold (``NaN``, an object).
    """
    text = json.dumps(result, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(result, allow_nan=False)
    return text


def error_attribute(error: StoredError) -> dict[str, Any]:
    """The ``error`` map attribute of a ``FALLIDO`` record."""
    return {"M": {"tipo": {"S": error.tipo}, "mensaje": {"S": error.mensaje}}}
