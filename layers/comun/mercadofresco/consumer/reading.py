"""Reading an SQS record's body as a domain event: envelopes, tolerant reader, contract check.

A body reaches a consumer queue in one of three shapes, and the consumer must not care which:

- raw JSON: ``{"tipo": "PedidoConfirmado", "version": 1, "pedido_id": ...}`` (SNS raw
  delivery, a direct ``SendMessage`` such as the workflow's stock reservations);
- an SNS envelope (a subscription without raw delivery): ``{"Type": "Notification",
  "Message": "<the JSON above, as a string>", ...}``;
- an EventBridge envelope (a bus rule targeting the queue): ``{"detail-type":
  "CarritoAbandonado", "detail": {"version": 1, "carrito_id": ...}, ...}``. The envelope's
  own ``"version": "0"`` is EventBridge's, never the event's: only ``detail`` counts.

Tolerant reader: only the contract's required fields are checked; unknown fields are kept
in ``Event.data`` and ignored, so a producer may add fields before its consumers know them
(the lesson's compatible evolution). What cannot be read raises :class:`InvalidMessageError`
with its :class:`~mercadofresco.dlq.DlqReason`, which the batch glue turns into a dead letter.

Presence is not validity: every field an event carries that has a check in ``field_checks`` (the
domain's, :data:`mercadofresco.dominio.valores.CAMPOS`: an amount is a positive whole number of cents,
a currency ISO 4217, an order id the store's format) is checked for what it is, in every consumer, so
an amount of ``"48.20"`` or ``-100`` never reaches the ERP or a customer's e-mail. A bad value
(:class:`~mercadofresco.validation.InvalidValueError`) is ``dato-invalido``; its detail names the
field and never repeats an e-mail address.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco.dlq import DlqReason
from mercadofresco.errors import EventoInvalido
from mercadofresco.validation import InvalidValueError, echo

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

DEFAULT_VERSIONS = frozenset({1})


class InvalidMessageError(EventoInvalido):
    """A message the consumer will never process: goes to the DLQ with ``reason``."""

    def __init__(self, reason: DlqReason, detail: str) -> None:
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Route:
    """What a consumer does with one event type: its required fields, versions and handler."""

    handler: Callable[[Event], Any]
    fields: tuple[str, ...] = ()
    versions: frozenset[int] = field(default=DEFAULT_VERSIONS)


@dataclass(frozen=True, slots=True)
class Event:
    """A domain event read from a record, whatever its envelope."""

    type: str
    version: int
    data: Mapping[str, Any]
    envelope: str  # "sqs" (raw), "sns" or "eventbridge": where it came from, for logs

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise InvalidMessageError(DlqReason.JSON_INVALIDO, f"{what} is not JSON: {exc}") from None
    except RecursionError:  # nested deeper than the interpreter's stack: poison, not a transient failure
        raise InvalidMessageError(DlqReason.JSON_INVALIDO, f"{what} is JSON nested too deeply to read") from None
    if not isinstance(value, dict):
        raise InvalidMessageError(DlqReason.JSON_INVALIDO, f"{what} is JSON but not an object ({type(value).__name__})")
    return value


def unwrap(body: str) -> tuple[dict[str, Any], str | None, str]:
    """Strip the envelope: return ``(data, the envelope's event type, envelope)``."""
    data = _json_object(body, "body")
    if data.get("Type") == "Notification" and isinstance(data.get("Message"), str) and "TopicArn" in data:
        return _json_object(data["Message"], "SNS Message"), None, "sns"
    if "detail-type" in data and "detail" in data and "source" in data:
        detail = data["detail"]
        if not isinstance(detail, dict):
            raise InvalidMessageError(DlqReason.JSON_INVALIDO, "EventBridge detail is not an object")
        return detail, str(data["detail-type"]), "eventbridge"
    return data, None, "sqs"


def _version(data: Mapping[str, Any], route: Route, event_type: str) -> int:
    if "version" not in data:
        raise InvalidMessageError(DlqReason.CAMPO_AUSENTE, f"{event_type}: missing field 'version'")
    version = data["version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise InvalidMessageError(
            DlqReason.DATO_INVALIDO, f"{event_type}: 'version' must be an integer, got {echo(version)}"
        )
    if version not in route.versions:
        readable = ", ".join(str(v) for v in sorted(route.versions))
        raise InvalidMessageError(DlqReason.VERSION_DESCONOCIDA, f"{event_type}: version {version} (reads {readable})")
    return version


def read(
    body: str,
    routes: Mapping[str, Route],
    default_type: str | None = None,
    field_checks: Mapping[str, Callable[[Any], Any]] | None = None,
) -> Event:
    """Read ``body`` as one of the event types in ``routes``, checking each field that has a check.

    The type comes from the EventBridge ``detail-type``, else the body's ``tipo``, else
    ``default_type`` (a queue that only ever carries one type, like the stock queue).
    ``field_checks`` maps a field to a function raising :class:`InvalidValueError` on a bad value.

    Raises
    ------
    InvalidMessageError
        Not JSON, unknown type, missing field or ``version``, or a version this consumer does not read.
    """
    data, envelope_type, envelope = unwrap(body)
    event_type = envelope_type or data.get("tipo") or default_type
    if not event_type:
        raise InvalidMessageError(DlqReason.CAMPO_AUSENTE, "missing field 'tipo' (the event type)")
    route = routes.get(event_type) if isinstance(event_type, str) else None
    if route is None:
        raise InvalidMessageError(
            DlqReason.DATO_INVALIDO, f"event type {echo(event_type)} is not one this consumer handles"
        )
    version = _version(data, route, event_type)
    missing = [c for c in route.fields if data.get(c) is None or data.get(c) == ""]
    if missing:
        raise InvalidMessageError(DlqReason.CAMPO_AUSENTE, f"{event_type}: missing field(s) {', '.join(missing)}")
    for field_name, check in (field_checks or {}).items():
        if field_name in data:
            try:
                check(data[field_name])
            except InvalidValueError as exc:
                raise InvalidMessageError(DlqReason.DATO_INVALIDO, f"{event_type}: {exc}") from None
    return Event(type=event_type, version=version, data=data, envelope=envelope)
