"""EventBridge Pipes run locally (moto creates pipes but never runs them).

Each ``AWS::Pipes::Pipe`` of the template is read for its source, filters, input template
and target, and run with Pipes' semantics:

- SQS source: polled like an event source mapping (``SqsQueueParameters.BatchSize``); a
  batch whose target call fails is not deleted, so the queue's own redrive applies;
- DynamoDB stream source: every shard read from ``StartingPosition``; a failed batch is
  retried ``MaximumRetryAttempts`` times, then sent to ``DeadLetterConfig`` (an SQS queue);
- ``FilterCriteria``: EventBridge patterns (moto's matcher) on each record; a record no
  filter matches is dropped (and, for SQS, deleted);
- ``InputTemplate``: ``<$.path>`` placeholders (the SQS body and DynamoDB images are JSON
  paths too) and ``<aws.pipes.event.json>``; inside quotes a value is inserted as text;
- targets: Step Functions (``StartExecution``, ``FIRE_AND_FORGET``, a unique name per
  batch), an event bus (``PutEvents`` with the target's ``Source``/``DetailType``), an
  SQS queue, or a function of the template. The target receives the batch as a JSON array.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.aws import client
from sam_emulator.background import BackgroundPart, BackgroundThread
from sam_emulator.event_sources import EventSourceMapping, queue_of
from sam_emulator.principal import AwsCall, acting_as, current_principal, report_call

if TYPE_CHECKING:
    from sam_emulator.functions import Functions
    from sam_emulator.template import Template
    from sam_emulator.ttl import TtlSweeper

_MARKER = re.compile(r"<(\$(?:\.[^<>]*)?|aws\.pipes\.[a-z.\-]+)>")
STREAM_WAIT_S = 0.2
POLLERS_SQS = 5  # Pipes scales its SQS pollers by itself; five keep up with a laptop's workflow


class PipeError(Exception):
    """A pipe's target refused a batch."""


def apply_template(template: str | None, event: dict[str, Any], pipe_name: str = "") -> Any:
    """Render a Pipes ``InputTemplate`` for one event; without a template the event passes as is."""
    if template is None:
        return event

    def substitute(m: re.Match[str]) -> str:
        value = _value(m.group(1), event, pipe_name)
        if _inside_string(template, m.start()):
            return json.dumps(value if isinstance(value, str) else json.dumps(value))[1:-1]
        return json.dumps(value)

    text = _MARKER.sub(substitute, template)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _inside_string(text: str, position: int) -> bool:
    """Whether ``position`` falls inside a JSON string literal of the template."""
    inside, escaped = False, False
    for char in text[:position]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            inside = not inside
    return inside


def _value(path: str, event: dict[str, Any], pipe_name: str) -> Any:
    if path == "aws.pipes.event.json":
        return event
    if path == "aws.pipes.pipe-name":
        return pipe_name
    if path == "aws.pipes.event":
        return json.dumps(event)
    value: Any = event
    for part in [p for p in path[2:].split(".") if p]:
        if isinstance(value, str):  # an SQS body is a JSON path too
            value = json.loads(value)
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


@dataclass
class Target:
    """A pipe's target, called with one batch (a JSON array after the input template)."""

    pipe_name: str
    arn: str
    parameters: dict[str, Any]
    input_template: str | None
    functions: Functions
    calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self, events: list[dict[str, Any]]) -> None:
        bodies = [apply_template(self.input_template, e, self.pipe_name) for e in events]
        service = self.arn.split(":")[2]
        with self._lock:
            self.calls += 1
        if service == "states":
            client("stepfunctions").start_execution(
                stateMachineArn=self.arn, name=f"{self.pipe_name}-{uuid.uuid4().hex}"[-80:], input=json.dumps(bodies)
            )
        elif service == "events":
            self._put_events(bodies)
        elif service == "sqs":
            url = client("sqs").get_queue_url(QueueName=self.arn.rsplit(":", 1)[1])["QueueUrl"]
            for body in bodies:
                client("sqs").send_message(QueueUrl=url, MessageBody=_text(body))
        elif service == "lambda":
            # No API call reaches moto (the handler is called here): the pipe's Invoke, made with its role, is told
            # to whoever records calls, as a worker's calls are (sam_emulator.principal).
            report_call(AwsCall(current_principal(), "lambda", "lambda", "Invoke", {"FunctionName": self.arn}))
            function = self.functions.by_name(self.arn)
            if (durable := self.functions.durable.get(function.logical_id)) is not None:
                durable.start(bodies)  # the invoke of a durable function starts an execution (sam_emulator.durable)
            else:
                function.invoke(bodies)
        else:
            raise PipeError(f"{self.pipe_name}: target {self.arn} is not run locally")

    def _put_events(self, bodies: list[Any]) -> None:
        p = self.parameters.get("EventBridgeEventBusParameters", {})
        inputs = [
            {
                "EventBusName": self.arn,
                "Source": p.get("Source", f"Pipe {self.pipe_name}"),
                "DetailType": p.get("DetailType", "Event from aws:pipes"),
                "Detail": _text(c),
                **({"Resources": p["Resources"]} if "Resources" in p else {}),
            }
            for c in bodies
        ]
        for i in range(0, len(inputs), 10):
            response = client("events").put_events(Entries=inputs[i : i + 10])
            if response.get("FailedEntryCount"):
                raise PipeError(f"{self.pipe_name}: PutEvents rejected {response['FailedEntryCount']} entries")


def _epoch_s(value: Any) -> float:
    return value.timestamp()


def _text(body: Any) -> str:
    return body if isinstance(body, str) else json.dumps(body)


class _TargetAsFunction:
    """Lets a :class:`EventSourceMapping` poll an SQS source for a pipe: the 'function' is the target."""

    def __init__(self, target: Target, logical_id: str | None) -> None:
        self.target = target
        self.logical_id = logical_id  # the pipe's: its role makes the calls (sam_emulator.principal)
        self.errors = 0

    def invoke(self, event: dict[str, Any]) -> None:
        try:
            self.target.send(event["Records"])
        except Exception:
            self.errors += 1
            raise


@dataclass
class PipeStream(BackgroundPart):
    """A DynamoDB stream → target pipe: shard readers with retry and a DLQ for a failed batch."""

    name: str
    stream_arn: str
    target: Target
    filters: list[Any]
    batch_size: int = 10
    max_retries: int = 0
    dlq_arn: str | None = None
    starting_position: str = "TRIM_HORIZON"
    sweeper: TtlSweeper | None = None
    logical_id: str | None = None  # the pipe's: its role reads the stream and calls the target
    read_count: int = 0
    sent: int = 0
    to_dlq: int = 0
    errors: list[str] = field(default_factory=list)  # reads lost to an API error (the next poll retries)
    _thread: BackgroundThread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._thread = BackgroundThread(f"pipe-{self.name}", self._read)

    def _read(self, stop: threading.Event) -> None:
        with acting_as(self.logical_id):
            self._poll(stop)

    def _poll(self, stop: threading.Event) -> None:
        streams = client("dynamodbstreams")
        iterators: dict[str, str] = {}
        while not stop.is_set():
            try:
                iterators = iterators or self._iterators(streams)
                for shard, iterator in list(iterators.items()):
                    response = streams.get_records(ShardIterator=iterator, Limit=self.batch_size)
                    iterators[shard] = response["NextShardIterator"]
                    if response["Records"]:
                        self._deliver([self._complete(r) for r in response["Records"]])
            except Exception as exc:  # Pipes keeps polling after an API error; the same iterator reads again
                self.errors.append(f"{type(exc).__name__}: {exc}")
            stop.wait(STREAM_WAIT_S)

    def _iterators(self, streams: Any) -> dict[str, str]:
        return {
            s["ShardId"]: streams.get_shard_iterator(
                StreamArn=self.stream_arn, ShardId=s["ShardId"], ShardIteratorType=self.starting_position
            )["ShardIterator"]
            for s in streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        }

    def _complete(self, record: dict[str, Any]) -> dict[str, Any]:
        # boto3 parses ApproximateCreationDateTime; Pipes hands the target epoch seconds (JSON).
        record = json.loads(json.dumps({**record, "eventSourceARN": self.stream_arn}, default=_epoch_s))
        if self.sweeper is not None and self.sweeper.was_ttl(record):
            record["userIdentity"] = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
        return record

    def _deliver(self, records: list[dict[str, Any]]) -> None:
        from moto.events.models import EventPattern

        self.read_count += len(records)
        patterns = [EventPattern.load(json.dumps(f)) for f in self.filters]
        chosen = [r for r in records if not patterns or any(p.matches_event(r) for p in patterns)]
        if not chosen:
            return
        for attempt in range(self.max_retries + 1):
            try:
                self.target.send(chosen)
                self.sent += len(chosen)
                return
            except Exception as exc:
                if attempt == self.max_retries:
                    self._to_dlq(chosen, exc)

    def _to_dlq(self, records: list[dict[str, Any]], exc: Exception) -> None:
        if self.dlq_arn is None:
            return
        url = client("sqs").get_queue_url(QueueName=self.dlq_arn.rsplit(":", 1)[1])["QueueUrl"]
        client("sqs").send_message(QueueUrl=url, MessageBody=json.dumps({"error": str(exc), "registros": records}))
        self.to_dlq += len(records)


def pipes_from_template(
    template: Template,
    functions: Functions,
    sweeper: TtlSweeper | None = None,
    compression: float = 1.0,
    unit_path: str = "",
) -> list[EventSourceMapping | PipeStream]:
    """Every ``AWS::Pipes::Pipe`` of the template, ready to start; a unit's (``unit_path`` as ``Template.walk()``
    gives it) acts as ``<unit>/<logical id>``, as the least-privilege check names its role."""
    result: list[EventSourceMapping | PipeStream] = []
    for lid in template.of_type("AWS::Pipes::Pipe"):
        props = template.properties(lid)
        name = props.get("Name", lid)
        target = Target(
            pipe_name=name,
            arn=props["Target"],
            parameters=props.get("TargetParameters", {}),
            input_template=props.get("TargetParameters", {}).get("InputTemplate"),
            functions=functions,
        )
        source = props.get("SourceParameters", {})
        filters = [json.loads(f["Pattern"]) for f in source.get("FilterCriteria", {}).get("Filters", [])]
        if props["Source"].startswith("arn:aws:sqs:"):
            result.append(sqs_pipe(name, props["Source"], target, source, filters, compression, f"{unit_path}{lid}"))
        else:
            result.append(_pipe_stream(name, props["Source"], target, source, filters, sweeper, f"{unit_path}{lid}"))
    return result


def sqs_pipe(
    name: str,
    arn: str,
    target: Target,
    source: dict[str, Any],
    filters: list[Any],
    compression: float,
    logical_id: str | None = None,
) -> EventSourceMapping:
    url, visibility_s = queue_of(arn, compression)
    parameters = source.get("SqsQueueParameters", {})
    return EventSourceMapping(
        name=f"pipe:{name}",
        function=_TargetAsFunction(target, logical_id),  # type: ignore[arg-type]
        queue_url=url,
        queue_arn=arn,
        batch_size=int(parameters.get("BatchSize", 10)),
        concurrency=POLLERS_SQS,
        visibility_s=visibility_s,
        filters=filters,
    )


def _pipe_stream(
    name: str,
    arn: str,
    target: Target,
    source: dict[str, Any],
    filters: list[Any],
    sweeper: TtlSweeper | None,
    logical_id: str | None = None,
) -> PipeStream:
    parameters = source.get("DynamoDBStreamParameters", {})
    retries = int(parameters.get("MaximumRetryAttempts", 0))
    return PipeStream(
        name=name,
        stream_arn=arn,
        target=target,
        filters=filters,
        batch_size=int(parameters.get("BatchSize", 10)),
        max_retries=max(0, retries),
        dlq_arn=parameters.get("DeadLetterConfig", {}).get("Arn"),
        starting_position=parameters.get("StartingPosition", "TRIM_HORIZON"),
        sweeper=sweeper,
        logical_id=logical_id,
    )
