"""The four DynamoDB calls of the idempotency record, and the one place their failures are wrapped.

Every call is a single conditional request on the low-level client. A
``ConditionalCheckFailedException`` is an *answer* (someone else holds or finished
the key) and comes back as a return value, never as an error to retry; any other
failure of DynamoDB becomes :class:`IdempotencyPersistenceError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from mercadofresco.idempotency.exceptions import IdempotencyPersistenceError
from mercadofresco.idempotency.record import IdempotencyRecord, IdempotencyStatus, error_attribute

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from mercadofresco.idempotency.record import StoredError

_CCF = "ConditionalCheckFailedException"

# Every attribute through a placeholder: the names are ours, DynamoDB's reserved words are many.
_NOMBRES = {
    f"#{n}": n
    for n in ("clave", "estado", "expira_en", "caduca_bloqueo", "propietario", "hash_payload", "resultado", "error")
}

# The claim succeeds when the key is absent, or its record has expired (TTL deletes late),
# or it is EN_CURSO with a lapsed lease (its consumer died) -- and, when the caller
# validates payloads, only a claim over the *same* payload may be taken over.
_RECLAMO = (
    "attribute_not_exists(#clave) OR #expira_en < :ahora OR (#estado = :en_curso AND #caduca_bloqueo < :ahora{hash})"
)
_RECLAMO_HASH = " AND (attribute_not_exists(#hash_payload) OR #hash_payload = :hash)"
# Finishing or releasing is for the claim's holder only; if the item vanished meanwhile
# (deleted by hand), finishing re-creates it so duplicates still see the outcome.
_ES_MIO = "attribute_not_exists(#clave) OR #propietario = :propietario"


class DynamoDBRecords:
    """Reads and writes idempotency records in one table through a low-level client."""

    def __init__(self, table_name: str, client: BaseClient) -> None:
        self.table_name = table_name
        self.client = client

    def claim(self, new: IdempotencyRecord, now_s: int) -> tuple[bool, IdempotencyRecord | None]:
        """One conditional PutItem. ``(True, None)`` if claimed, else ``(False, record found)``.

        The record found comes from ``ReturnValuesOnConditionCheckFailure=ALL_OLD``: no GetItem.
        It is ``None`` only if DynamoDB returned no item with the refusal.
        """
        valores: dict[str, Any] = {":ahora": {"N": str(now_s)}, ":en_curso": {"S": IdempotencyStatus.EN_CURSO}}
        if new.hash_payload is not None:
            valores[":hash"] = {"S": new.hash_payload}
        condicion = _RECLAMO.format(hash=_RECLAMO_HASH if new.hash_payload is not None else "")
        respuesta = self._llamar(
            "put_item",
            Item=new.to_item(),
            ConditionExpression=condicion,
            ExpressionAttributeNames=_usados(condicion),
            ExpressionAttributeValues=valores,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        if isinstance(respuesta, _Rechazo):
            return False, None if respuesta.item is None else IdempotencyRecord.from_item(respuesta.item)
        return True, None

    def complete(self, key: str, owner: str, result_json: str, expires_epoch_s: int) -> bool:
        """EN_CURSO → COMPLETADO with the result; ``False`` if the claim is no longer ours."""
        return self._terminar(
            key,
            owner,
            "SET #estado = :estado, #resultado = :resultado, #expira_en = :expira_en REMOVE #caduca_bloqueo",
            {
                ":estado": {"S": IdempotencyStatus.COMPLETADO},
                ":resultado": {"S": result_json},
                ":expira_en": {"N": str(expires_epoch_s)},
            },
        )

    def mark_failed(self, key: str, owner: str, error: StoredError, expires_epoch_s: int) -> bool:
        """EN_CURSO → FALLIDO with the error; ``False`` if the claim is no longer ours."""
        return self._terminar(
            key,
            owner,
            "SET #estado = :estado, #error = :error, #expira_en = :expira_en REMOVE #caduca_bloqueo",
            {
                ":estado": {"S": IdempotencyStatus.FALLIDO},
                ":error": error_attribute(error),
                ":expira_en": {"N": str(expires_epoch_s)},
            },
        )

    def release(self, key: str, owner: str) -> bool:
        """Delete our claim after a transient failure; ``False`` if it is no longer ours."""
        condicion = "#propietario = :propietario"
        respuesta = self._llamar(
            "delete_item",
            Key={"clave": {"S": key}},
            ConditionExpression=condicion,
            ExpressionAttributeNames=_usados(condicion),
            ExpressionAttributeValues={":propietario": {"S": owner}},
        )
        return not isinstance(respuesta, _Rechazo)

    def read(self, key: str) -> IdempotencyRecord | None:
        """Strongly consistent GetItem (used only while waiting for another consumer's outcome)."""
        respuesta = self._llamar("get_item", Key={"clave": {"S": key}}, ConsistentRead=True)
        item = None if isinstance(respuesta, _Rechazo) else respuesta.get("Item")
        return None if item is None else IdempotencyRecord.from_item(item)

    def _terminar(self, key: str, owner: str, actualizacion: str, valores: dict[str, Any]) -> bool:
        texto = f"{actualizacion} {_ES_MIO}"
        respuesta = self._llamar(
            "update_item",
            Key={"clave": {"S": key}},
            UpdateExpression=actualizacion,
            ConditionExpression=_ES_MIO,
            ExpressionAttributeNames=_usados(texto),
            ExpressionAttributeValues={**valores, ":propietario": {"S": owner}},
        )
        return not isinstance(respuesta, _Rechazo)

    def _llamar(self, operation: str, **kwargs: Any) -> dict[str, Any] | _Rechazo:
        """Call the client: its answer, a :class:`_Rechazo` for a failed condition, else the persistence error."""
        try:
            return getattr(self.client, operation)(TableName=self.table_name, **kwargs)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == _CCF:
                return _Rechazo(exc.response.get("Item"))
            raise IdempotencyPersistenceError(
                f"DynamoDB {operation} on {self.table_name} failed: {exc.response.get('Error', {}).get('Code')}: {exc}"
            ) from exc
        except BotoCoreError as exc:
            raise IdempotencyPersistenceError(f"DynamoDB {operation} on {self.table_name} failed: {exc}") from exc


@dataclass(frozen=True, slots=True)
class _Rechazo:
    """A failed condition: the item DynamoDB returned with it (``ALL_OLD``), if any."""

    item: dict[str, Any] | None


def _usados(expresion: str) -> dict[str, str]:
    """Only the placeholders an expression uses (DynamoDB rejects unused ones)."""
    return {k: v for k, v in _NOMBRES.items() if k in expresion}
