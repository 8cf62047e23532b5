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

__all__ = ["DynamoDBRecords"]

_CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailedException"

# Every attribute through a placeholder: the names are ours, DynamoDB's reserved words are many.
_NAMES = {
    f"#{n}": n
    for n in ("clave", "estado", "expira_en", "caduca_bloqueo", "propietario", "hash_payload", "resultado", "error")
}

# The claim succeeds when the key is absent, or its record has expired (TTL deletes late),
# or it is EN_CURSO with a lapsed lease (its consumer died) -- and, when the caller
# validates payloads, only a claim over the *same* payload may be taken over.
_CLAIM_CONDITION = (
    "attribute_not_exists(#clave) OR #expira_en < :ahora OR (#estado = :en_curso AND #caduca_bloqueo < :ahora{hash})"
)
_SAME_PAYLOAD = " AND (attribute_not_exists(#hash_payload) OR #hash_payload = :hash)"
# Finishing or releasing is for the claim's holder only; if the item vanished meanwhile
# (deleted by hand), finishing re-creates it so duplicates still see the outcome.
_OWNED = "attribute_not_exists(#clave) OR #propietario = :propietario"


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
        values: dict[str, Any] = {":ahora": {"N": str(now_s)}, ":en_curso": {"S": IdempotencyStatus.EN_CURSO}}
        if new.hash_payload is not None:
            values[":hash"] = {"S": new.hash_payload}
        condition = _CLAIM_CONDITION.format(hash=_SAME_PAYLOAD if new.hash_payload is not None else "")
        response = self._call(
            "put_item",
            Item=new.to_item(),
            ConditionExpression=condition,
            ExpressionAttributeNames=_used_names(condition),
            ExpressionAttributeValues=values,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        if isinstance(response, _Refusal):
            return False, None if response.item is None else IdempotencyRecord.from_item(response.item)
        return True, None

    def complete(self, key: str, owner: str, result_json: str, expires_epoch_s: int) -> bool:
        """EN_CURSO → COMPLETADO with the result; ``False`` if the claim is no longer ours."""
        return self._finish(
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
        return self._finish(
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
        condition = "#propietario = :propietario"
        response = self._call(
            "delete_item",
            Key={"clave": {"S": key}},
            ConditionExpression=condition,
            ExpressionAttributeNames=_used_names(condition),
            ExpressionAttributeValues={":propietario": {"S": owner}},
        )
        return not isinstance(response, _Refusal)

    def read(self, key: str) -> IdempotencyRecord | None:
        """Strongly consistent GetItem (used only while waiting for another consumer's outcome)."""
        response = self._call("get_item", Key={"clave": {"S": key}}, ConsistentRead=True)
        item = None if isinstance(response, _Refusal) else response.get("Item")
        return None if item is None else IdempotencyRecord.from_item(item)

    def _finish(self, key: str, owner: str, update: str, values: dict[str, Any]) -> bool:
        text = f"{update} {_OWNED}"
        response = self._call(
            "update_item",
            Key={"clave": {"S": key}},
            UpdateExpression=update,
            ConditionExpression=_OWNED,
            ExpressionAttributeNames=_used_names(text),
            ExpressionAttributeValues={**values, ":propietario": {"S": owner}},
        )
        return not isinstance(response, _Refusal)

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any] | _Refusal:
        """Call the client: its answer, a :class:`_Refusal` for a failed condition, else the persistence error."""
        try:
            return getattr(self.client, operation)(TableName=self.table_name, **kwargs)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == _CONDITIONAL_CHECK_FAILED:
                return _Refusal(exc.response.get("Item"))
            raise IdempotencyPersistenceError(
                f"DynamoDB {operation} on {self.table_name} failed: {exc.response.get('Error', {}).get('Code')}: {exc}"
            ) from exc
        except BotoCoreError as exc:
            raise IdempotencyPersistenceError(f"DynamoDB {operation} on {self.table_name} failed: {exc}") from exc


@dataclass(frozen=True, slots=True)
class _Refusal:
    """A failed condition: the item DynamoDB returned with it (``ALL_OLD``), if any."""

    item: dict[str, Any] | None


def _used_names(expression: str) -> dict[str, str]:
    """Only the placeholders an expression uses (DynamoDB rejects unused ones)."""
    return {k: v for k, v in _NAMES.items() if k in expression}
