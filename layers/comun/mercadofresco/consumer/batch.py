"""The batch glue every SQS consumer shares: Powertools partial batch responses around our rules.

Per record: read it (:mod:`.reading`), dispatch by event type to its :class:`Route`, and
classify what went wrong:

============================  ==================================================  =================
outcome                       what happens                                        receive burnt?
============================  ==================================================  =================
handled                       acknowledged                                        no
bad input / permanent error   copied to the DLQ with ``mf-reason``, acknowledged  no
a value the store refuses     the same (:func:`data_error`: never transient)  no
a ``defer_on`` error          deferred (:mod:`.deferral`), acknowledged       no
too little invocation left    handed over (re-sent, not counted), acknowledged    no
any other error (transient)   reported in ``batchItemFailures``; SQS redelivers   yes (safety net)
============================  ==================================================  =================

FIFO queues go through ``SqsFifoPartialProcessor(skip_group_on_error=True)``: a failed
record stops *its* message group for the rest of the batch (order kept per group) while
other groups go on.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.exceptions import OrphanedChildLoggerError
from aws_lambda_powertools.metrics import MetricUnit

from mercadofresco.consumer.deferral import DeferralPolicy, defer, receives_exhausted
from mercadofresco.consumer.queues import Queues, send_to_dlq
from mercadofresco.consumer.reading import InvalidMessageError, read
from mercadofresco.dlq import DlqReason
from mercadofresco.errors import PermanentError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from aws_lambda_powertools.utilities.batch import BatchProcessor
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
    from botocore.client import BaseClient

    from mercadofresco.consumer.queues import Queue
    from mercadofresco.consumer.reading import Event, Route

logger = Logger(child=True)
metrics = Metrics()

CORRELATION_KEYS = ("pedido_id", "carrito_id", "sku")  # logged with every line about a record
# Time one record may take in the worst case: 2 HTTP attempts x (2 s connect + 10 s read) plus
# the retry wait and the idempotency writes. A record is only started with this much left, so a
# slow provider cannot make the invocation time out and return the whole batch to the queue.
RESERVE_PER_RECORD_MS = 26_000


class Consumer:
    """An SQS consumer: ``Consumer(...)(event, context)`` returns ``batchItemFailures``.

    Parameters
    ----------
    function_name
        The consumer's name, written on every dead letter (``mf-function``).
    routes
        Event type -> :class:`Route` (required fields, versions, handler): the dispatch table.
    types_by_queue
        Queue-name prefix -> event type, for queues whose bodies carry no ``tipo``.
    defer_on
        Exceptions meaning "the dependency is unavailable on purpose" (an open circuit):
        the record is deferred instead of failed.
    policy, sqs
        Deferral policy and SQS client (defaults: :class:`DeferralPolicy`, the project's client).
    reserve_ms
        Start a record only with this much of the invocation left; later ones are deferred.
    field_checks
        Field -> check raising :class:`~mercadofresco.validation.InvalidValueError`, applied to every
        event carrying the field (the domain's: :data:`mercadofresco.dominio.valores.CAMPOS`).
    """

    def __init__(
        self,
        function_name: str,
        routes: Mapping[str, Route],
        *,
        types_by_queue: Mapping[str, str] | None = None,
        defer_on: tuple[type[BaseException], ...] = (),
        policy: DeferralPolicy | None = None,
        sqs: BaseClient | None = None,
        reserve_ms: int = RESERVE_PER_RECORD_MS,
        field_checks: Mapping[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        self.function_name = function_name
        self.routes = routes
        self.types_by_queue = dict(types_by_queue or {})
        self.defer_on = defer_on
        self.policy = policy or DeferralPolicy()
        self.queues = Queues(sqs)
        self.reserve_ms = reserve_ms
        self.field_checks = dict(field_checks or {})

    def __call__(self, event: dict[str, Any], context: Any = None) -> PartialItemFailureResponse:
        records = _sqs_records(event)
        if not records:  # nothing that is an SQS message (Powertools would raise on an empty batch)
            return {"batchItemFailures": []}
        event = {**event, "Records": records}
        # Imported by the first batch, not at import: Powertools' batch module loads asyncio and every
        # event data class (~12 % of a consumer's import; bench/bench_cold_start.py, "first use").
        from aws_lambda_powertools.utilities.batch import (
            BatchProcessor,
            EventType,
            SqsFifoPartialProcessor,
            process_partial_response,
        )

        if any(r["eventSourceARN"].endswith(".fifo") for r in records):
            processor: BatchProcessor = SqsFifoPartialProcessor(skip_group_on_error=True, logger=logger)
        else:
            processor = BatchProcessor(event_type=EventType.SQS, logger=logger)
        # A batch where every record failed is still a partial response, not an exception.
        processor.raise_on_entire_batch_failure = False
        return process_partial_response(
            event=event, record_handler=self.handle_record, processor=processor, context=context
        )

    def _default_type(self, queue: Queue) -> str | None:
        return next((t for prefix, t in self.types_by_queue.items() if queue.name.startswith(prefix)), None)

    def handle_record(self, record: SQSRecord, lambda_context: Any = None) -> None:
        """Handle one record; return to acknowledge it, raise to report it failed."""
        raw = record.raw_event
        queue = self.queues.from_arn(record.event_source_arn)
        if exhausted := receives_exhausted(queue, raw):
            send_to_dlq(self.queues.sqs, queue, raw, DlqReason.APLAZAMIENTOS_AGOTADOS, exhausted, self.function_name)
            return
        if lambda_context is not None and lambda_context.get_remaining_time_in_millis() < self.reserve_ms:
            # Not started, so no call was made: defer rather than fail (a failure would burn a receive).
            cause = "too little time left in the invocation"
            defer(self.queues.sqs, queue, raw, self.policy, self.function_name, cause, counts=False)
            return
        try:
            event = read(record.body, self.routes, self._default_type(queue), self.field_checks)
            self._handle(event)
            metrics.add_metric(name="MensajesProcesados", unit=MetricUnit.Count, value=1)
        except (InvalidMessageError, PermanentError) as exc:
            reason = exc.reason if isinstance(exc, InvalidMessageError) else DlqReason.DATO_INVALIDO
            detail = exc.detail if isinstance(exc, InvalidMessageError) else f"{type(exc).__name__}: {exc}"
            self._to_dlq(queue, raw, reason, detail)
        except self.defer_on as exc:
            cause, min_s = f"{type(exc).__name__}: {exc}", getattr(exc, "retry_in_s", 0)
            defer(self.queues.sqs, queue, raw, self.policy, self.function_name, cause, min_s=min_s)
            metrics.add_metric(name="MensajesAplazados", unit=MetricUnit.Count, value=1)
        except Exception as exc:
            if (detail := data_error(exc)) is None:
                raise  # transient (or unknown): batchItemFailures, SQS redelivers
            self._to_dlq(queue, raw, DlqReason.DATO_INVALIDO, detail)

    def _to_dlq(self, queue: Queue, raw: dict[str, Any], reason: DlqReason, detail: str) -> None:
        send_to_dlq(self.queues.sqs, queue, raw, reason, detail, self.function_name)
        metrics.add_metric(name="MensajesAlDlq", unit=MetricUnit.Count, value=1)

    def _handle(self, event: Event) -> None:
        with _correlation(event):
            logger.info("handling event", tipo=event.type, version=event.version, sobre=event.envelope)
            self.routes[event.type].handler(event)


def data_error(exc: BaseException) -> str | None:
    """Why ``exc`` was caused by the record's own values (it fails the same way on every delivery), or ``None``.

    A lone surrogate cannot be encoded for a driver or an SDK (``UnicodeError``). PostgreSQL refuses a
    value it cannot store (SQLSTATE class 22, ``DataError``: a NUL, invalid text, out of range) or of the
    wrong type (42804), and psycopg one it cannot send (a sqlstate-less ``ProgrammingError``: a dict where
    a string belongs; the layer's queries are static, so the values are what varies). Checked without
    importing the driver: a consumer that never loaded psycopg cannot have met its errors. The answer
    never repeats the value (it may be personal, or huge): the class and SQLSTATE say enough to group.
    """
    if isinstance(exc, UnicodeError):
        reason = exc.reason if isinstance(exc, UnicodeEncodeError | UnicodeDecodeError) else "encoding"
        return f"{type(exc).__name__}: a value holds characters that cannot be encoded ({reason})"
    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(exc, psycopg.Error):
        return None
    if isinstance(exc, psycopg.DataError | psycopg.errors.DatatypeMismatch) or (
        isinstance(exc, psycopg.ProgrammingError) and exc.sqlstate is None
    ):
        sqlstate = exc.sqlstate or "none: refused by the driver"
        return f"{type(exc).__name__} (SQLSTATE {sqlstate}): a value cannot be stored"
    return None


def _is_sqs_record(record: Any) -> bool:
    """An SQS message as Lambda's SQS mapping delivers it: what the batch glue needs to handle or report it."""
    return (
        isinstance(record, dict)
        and record.get("eventSource") == "aws:sqs"
        and isinstance(record.get("messageId"), str)
        and isinstance(record.get("body"), str)
        and isinstance(record.get("eventSourceARN"), str)
        and record["eventSourceARN"].count(":") == 5
    )


def _sqs_records(event: Any) -> list[dict[str, Any]] | None:
    """The event's SQS records; what is not one (an SNS, DynamoDB Streams, EventBridge or API Gateway
    event sent here by a wrong mapping, or garbage) is refused with an error log and a metric, not raised:
    raising would make that source retry the same event forever, and there is no SQS message to fail.
    """
    records = event.get("Records") if isinstance(event, dict) else None
    if not isinstance(records, list):
        logger.error(
            "event refused: not an SQS batch (no Records list); check what invokes this function",
            claves=sorted(map(str, event))[:10] if isinstance(event, dict) else type(event).__name__,
        )
        metrics.add_metric(name="EventosRechazados", unit=MetricUnit.Count, value=1)
        return None
    valid = [r for r in records if _is_sqs_record(r)]
    if foreign := len(records) - len(valid):
        sources = sorted(
            {
                str(r.get("eventSource") or r.get("EventSource") or "?")[:40]
                for r in records
                if isinstance(r, dict) and not _is_sqs_record(r)
            }
        )
        logger.error(
            "records refused: not SQS messages; check the event source mapping", ajenos=foreign, fuentes=sources
        )
        metrics.add_metric(name="EventosRechazados", unit=MetricUnit.Count, value=foreign)
    return valid


@contextmanager
def _correlation(event: Event) -> Iterator[None]:
    """Every log line while handling ``event`` (ours, the HTTP client's, the breaker's) carries its ids.

    Needs the handler's own ``Logger()`` (the parent of this child); without one (a script,
    a test) the lines go out without the ids rather than failing the record.
    """
    keys = {c: event.get(c) for c in CORRELATION_KEYS if event.get(c) is not None}
    try:
        logger.append_keys(**keys)
        logger.set_correlation_id(event.get("pedido_id") or event.get("carrito_id"))
        annotated = True
    except OrphanedChildLoggerError:
        annotated = False
    try:
        yield
    finally:
        if annotated:
            logger.remove_keys(list(keys))
            logger.set_correlation_id(None)
