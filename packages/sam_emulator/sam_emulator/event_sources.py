"""SQS event source mappings with Lambda's semantics (moto's own mapping ignores partial failures).

What Lambda does, and this does, for each SAM ``Events`` entry of ``Type: SQS`` (or a native
``AWS::Lambda::EventSourceMapping`` on a queue):

- ``ScalingConfig.MaximumConcurrency`` pollers, each a thread that receives up to
  ``BatchSize`` messages (waiting at most ``MaximumBatchingWindowInSeconds`` to fill it)
  and invokes the handler with the batch as an SQS event;
- the queue's own ``VisibilityTimeout`` applies while a batch is in flight (divided by the
  run's time-compression factor, at least 1 s), but never less than the function's
  ``Timeout``: AWS refuses an SQS trigger whose queue's visibility is shorter than the
  function's timeout, so a live invocation never sees its messages handed to another one.
  The run compresses the visibility, not the function's ``Timeout`` nor the time a batch
  takes on a starved CPU; without this floor (180 s / 30 = 6 s against a 30 s consumer) a
  batch slower than 6 s is received again while still running, the copies fail on the
  idempotency claim, burn ``maxReceiveCount`` and end in the DLQ though processed once.
  Failed records therefore come back after the floor, not after the compressed visibility;
- the handler raising fails the whole batch; with ``FunctionResponseTypes:
  [ReportBatchItemFailures]`` only the records in ``batchItemFailures`` fail (a malformed
  response fails the whole batch, as Lambda does); every other record is deleted;
- a failed record is simply not deleted: it becomes visible again when its visibility
  expires, and SQS's redrive (moto implements it) moves it to the DLQ after
  ``maxReceiveCount`` receives;
- ``FilterCriteria``: a record no filter matches is deleted without invoking.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.aws import client
from sam_emulator.background import BackgroundThread, stop_all
from sam_emulator.principal import acting_as

if TYPE_CHECKING:
    from sam_emulator.functions import Function, Functions
    from sam_emulator.template import Template

DEFAULT_CONCURRENCY = 2  # Lambda scales far higher; a laptop does not
POLL_WAIT_S = 1  # long-poll wait, so stop() is answered within a second
FIFO_WAIT_S = 0.1  # pause between empty short polls of a FIFO queue


@dataclass
class Stats:
    batches: int = 0
    received: int = 0
    deleted: int = 0
    failed: int = 0
    filtered: int = 0
    poll_errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record_error(self, exc: Exception) -> None:
        with self._lock:
            self.poll_errors.append(f"{type(exc).__name__}: {exc}")

    def add_counts(self, **values: int) -> None:
        with self._lock:
            for key, value in values.items():
                setattr(self, key, getattr(self, key) + value)


@dataclass
class EventSourceMapping:
    """One queue → function mapping, run by ``concurrency`` poller threads."""

    name: str
    function: Function
    queue_url: str
    queue_arn: str
    batch_size: int = 10
    window_s: float = 0.0
    concurrency: int = DEFAULT_CONCURRENCY
    reports_failures: bool = False
    visibility_s: int = 30
    filters: list[Any] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)  # shared by the pollers
    _threads: list[BackgroundThread] = field(default_factory=list, repr=False)

    def start(self) -> None:
        self._stop.clear()
        self._threads = [
            BackgroundThread(f"esm-{self.name}-{i}", self._poll, stopping=self._stop).start()
            for i in range(self.concurrency)
        ]

    def stop(self) -> None:
        threads, self._threads = self._threads, []
        stop_all(thread.stop for thread in threads)

    def check(self) -> None:
        for thread in self._threads:
            thread.raise_if_failed()

    def _poll(self, _stop: threading.Event) -> None:  # _stop is self._stop, which _receive waits on too
        sqs = client("sqs")
        # Lambda (or the pipe) polls with the consumer's own role: its calls are that role's (sam_emulator.principal).
        with acting_as(getattr(self.function, "logical_id", None)):
            while not self._stop.is_set():
                try:
                    messages = self._receive(sqs)
                    if messages:
                        self.process(sqs, messages)
                except Exception as exc:  # a poller never dies: Lambda's keeps polling after an API error
                    self.stats.record_error(exc)
                    self._stop.wait(POLL_WAIT_S)

    def _receive(self, sqs: Any) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        while len(messages) < self.batch_size and not self._stop.is_set():
            response = sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(10, self.batch_size - len(messages)),
                WaitTimeSeconds=self._wait_s() if not messages else 0,
                VisibilityTimeout=self.visibility_s,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            messages.extend(response)
            if not response or self.window_s <= 0:
                break
        if not messages and self.queue_url.endswith(".fifo"):
            self._stop.wait(FIFO_WAIT_S)
        return messages

    def _wait_s(self) -> int:
        # moto's long poll on a FIFO queue whose groups are all in flight sleeps the whole wait:
        # a delete that frees a group does not wake it. Short polls keep FIFO consumers moving.
        return 0 if self.queue_url.endswith(".fifo") else POLL_WAIT_S

    def process(self, sqs: Any, messages: list[dict[str, Any]]) -> None:
        """Invoke the function with one batch and settle each record as Lambda does."""
        records = [sqs_record(m, self.queue_arn) for m in messages]
        chosen = [r for r in records if self._passes_filters(r)]
        self.stats.add_counts(batches=1, received=len(records), filtered=len(records) - len(chosen))
        failed = self._invoke(chosen) if chosen else set()
        to_delete = [r for r in records if r["messageId"] not in failed]
        for i in range(0, len(to_delete), 10):
            inputs = [{"Id": str(n), "ReceiptHandle": r["receiptHandle"]} for n, r in enumerate(to_delete[i : i + 10])]
            sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=inputs)
        self.stats.add_counts(deleted=len(to_delete) - (len(records) - len(chosen)), failed=len(failed))

    def _invoke(self, records: list[dict[str, Any]]) -> set[str]:
        ids = {r["messageId"] for r in records}
        try:
            response = self.function.invoke({"Records": records})
        except Exception:  # the function errored: Lambda fails the whole batch
            return ids
        if not self.reports_failures:
            return set()
        return failed_ids(response, ids)

    def _passes_filters(self, record: dict[str, Any]) -> bool:
        if not self.filters:
            return True
        from moto.events.models import EventPattern

        candidate = {**record, "body": _json_or_text(record["body"])}
        return any(EventPattern.load(json.dumps(f)).matches_event(candidate) for f in self.filters)


def failed_ids(response: Any, ids: set[str]) -> set[str]:
    """The records a partial batch response fails; all of them when the response is malformed."""
    if response is None:
        return set()
    if not isinstance(response, dict) or not isinstance(response.get("batchItemFailures", []), list):
        return ids
    failed = {f.get("itemIdentifier") if isinstance(f, dict) else None for f in response.get("batchItemFailures", [])}
    return ids if not failed <= ids else failed


def sqs_record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """One SQS message as Lambda puts it in an event record."""
    attributes = {
        name: {
            "stringValue": value.get("StringValue"),
            "binaryValue": value.get("BinaryValue"),
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": value["DataType"],
        }
        for name, value in message.get("MessageAttributes", {}).items()
    }
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": attributes,
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": queue_arn.split(":")[3],
    }


def _json_or_text(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body


def mappings_from_template(
    template: Template, functions: Functions, compression: float = 1.0, unit_path: str = ""
) -> list[EventSourceMapping]:
    """Every SQS event source of the template's functions, ready to start (a unit's: ``unit_path`` as
    ``Template.walk()`` gives it, the prefix of its functions' ids)."""
    mappings = []
    for lid, resource in template.of_type("AWS::Serverless::Function").items():
        events = template.resolve(resource.get("Properties", {}).get("Events", {}))
        for name, event in events.items():
            if event.get("Type") == "SQS":
                function = functions.by_id[f"{unit_path}{lid}"]
                mappings.append(sqs_mapping(f"{unit_path}{lid}.{name}", function, event["Properties"], compression))
    for lid in template.of_type("AWS::Lambda::EventSourceMapping"):
        props = template.properties(lid)
        if props.get("EventSourceArn", "").startswith("arn:aws:sqs:"):
            props["Queue"] = props["EventSourceArn"]
            mappings.append(sqs_mapping(lid, functions.by_name(props["FunctionName"]), props, compression))
    return mappings


def queue_of(arn: str, compression: float, minimum_s: float = 1) -> tuple[str, int]:
    """An SQS queue's URL, and its visibility timeout divided by the run's compression (at least ``minimum_s``)."""
    sqs = client("sqs")
    url = sqs.get_queue_url(QueueName=arn.rsplit(":", 1)[1])["QueueUrl"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
    return url, math.ceil(max(minimum_s, 1, int(attributes["VisibilityTimeout"]) / compression))


def sqs_mapping(name: str, function: Function, props: dict[str, Any], compression: float) -> EventSourceMapping:
    """One SQS event source of ``function`` (SAM ``Events`` properties), its times compressed.

    The visibility is floored at the function's ``Timeout`` (see the module's docstring).
    """
    queue_arn = props["Queue"]
    url, visibility_s = queue_of(queue_arn, compression, minimum_s=function.timeout_s)
    return EventSourceMapping(
        name=name,
        function=function,
        queue_url=url,
        queue_arn=queue_arn,
        batch_size=int(props.get("BatchSize", 10)),
        window_s=float(props.get("MaximumBatchingWindowInSeconds", 0)) / compression,
        concurrency=int(props.get("ScalingConfig", {}).get("MaximumConcurrency", DEFAULT_CONCURRENCY)),
        reports_failures="ReportBatchItemFailures" in props.get("FunctionResponseTypes", []),
        visibility_s=visibility_s,
        filters=[json.loads(f["Pattern"]) for f in props.get("FilterCriteria", {}).get("Filters", [])],
    )
