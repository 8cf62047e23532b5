"""Every change the emulator makes to moto, in one place, each undone when its context ends.

moto is pinned (``pyproject.toml``) because what is patched here are its internals: a new
release may move them. :data:`TARGETS` names each one, and ``tests/test_moto_patches.py`` checks
that every target still exists, so an upgrade fails there, by name, instead of deep inside a run.

- :func:`atomic_dynamodb_writes`: DynamoDB's conditional writes are atomic; moto 5.2.5 checks a
  ``ConditionExpression`` and then writes with no lock between, so two threads of this process
  could both "win" an ``attribute_not_exists`` claim. One lock around each write closes it.
- :func:`moto_server_patches`: what :class:`~sam_emulator.moto_server.MotoServer` needs for the
  run: Step Functions really executing (its Lambda tasks calling back into the server), the
  interpreter's ``Retry`` sleeps and the execution's ``TimeoutSeconds`` divided by the run's
  compression factor, optionally ``Wait`` states too, and moto's host -> backend routing cached.
- :func:`lambda_invoke_patches`: moto's Lambda invoke routed to in-process handlers
  (:mod:`sam_emulator.moto_lambda`).
- :func:`report_service_messages` (part of :func:`moto_server_patches`): every message moto's SNS puts on a
  subscribed queue, and every event a rule sends to a queue, reported as that service's own call
  (``sns.amazonaws.com`` / ``events.amazonaws.com``, ``source_arn`` the topic or rule) through
  :func:`sam_emulator.principal.report_service_call`: in AWS each is authorised by the queue's policy (and the
  queue key's policy), so an IAM check must see them. Nothing about the delivery changes.
- :func:`jsonata_evaluator`: moto 5.2.5 parses ``Assign`` variables, ``QueryLanguage: JSONata`` and
  ``{% %}`` expressions but evaluates every one of them (a JSONPath-mode ``$var`` reference too)
  through a JVM bridge to jsonata-java that it does not ship: ``_eval_jsonata`` stays ``None`` and
  each evaluation is ``TypeError: 'NoneType' object is not callable``. jsonata-python, a pure-Python
  port of that same jsonata-java, takes the bridge's place; the rest is moto's own interpreter. It also
  gives each ASL parse its own ``QueryLanguage`` scope stack: moto 5.2.5 keeps it in a class attribute
  of its ``Preprocessor``, shared by the threads that parse concurrent executions' definitions, so a
  state with its own ``QueryLanguage: JSONata`` was now and then parsed in another parse's JSONPath
  scope (``ValueError: Unsupported declaration in QueryLanguage=JSONata block``).
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack, contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any
from unittest import mock

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "TARGETS",
    "atomic_dynamodb_writes",
    "jsonata_evaluator",
    "lambda_invoke_patches",
    "moto_server_patches",
    "report_service_messages",
]

_DYNAMODB = "moto.dynamodb.models.DynamoDBBackend"
_DYNAMODB_WRITES = ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item")
_RETRY_CLOCK = "moto.stepfunctions.parser.asl.component.common.retry.retrier_decl.time"
_PROGRAM_THREADING = "moto.stepfunctions.parser.asl.component.program.program.threading"
_WAIT_INTERVAL = (
    "moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function.WaitFunction._wait_interval"
)
_ROUTING = "moto.moto_server.werkzeug_app.DomainDispatcherApplication.get_backend_for_host"
_LAMBDA_INVOKE = "moto.awslambda.models.LambdaFunction._invoke_lambda"
_LAMBDA_SIMPLE_INVOKE = "moto.awslambda_simple.models.LambdaSimpleBackend.invoke"
_USER_CONFIG = "moto.core.config.default_user_config"
_JSONATA_BRIDGE = "moto.stepfunctions.parser.asl.jsonata.jsonata._eval_jsonata"
_ASL_PREPROCESSOR_INIT = "moto.stepfunctions.parser.asl.parse.preprocessor.Preprocessor.__init__"
_SNS_TO_SUBSCRIBER = "moto.sns.models.Subscription.publish"
_RULE_TO_TARGETS = "moto.events.models.Rule.send_to_targets"
_SQS_SEND = "moto.sqs.models.SQSBackend.send_message"

# Every moto attribute this module replaces, as ``module.attribute[.attribute]``.
TARGETS = (
    *(f"{_DYNAMODB}.{name}" for name in _DYNAMODB_WRITES),
    _RETRY_CLOCK,
    _PROGRAM_THREADING,
    _WAIT_INTERVAL,
    _ROUTING,
    _LAMBDA_INVOKE,
    _LAMBDA_SIMPLE_INVOKE,
    _USER_CONFIG,
    _JSONATA_BRIDGE,
    _ASL_PREPROCESSOR_INIT,
    _SNS_TO_SUBSCRIBER,
    _RULE_TO_TARGETS,
    _SQS_SEND,
)

_DYNAMODB_WRITE_LOCK = threading.RLock()
_DELIVERING = threading.local()  # (service principal, source ARN) while moto delivers for a topic or a rule


def _resolve(target: str) -> Any:
    """The object at ``module.attribute[.attribute]`` (the import machinery mock.patch uses)."""
    from pkgutil import resolve_name

    module, _, attribute_name = target.rpartition(".")
    return getattr(resolve_name(module), attribute_name)


def _patch(stack: ExitStack, target: str, new: Callable[[Any], Any]) -> None:
    """Replace ``target`` with ``new(original)`` until ``stack`` closes."""
    stack.enter_context(mock.patch(target, new(_resolve(target))))


@contextmanager
def atomic_dynamodb_writes() -> Iterator[None]:
    """moto's DynamoDB writes atomic, as DynamoDB's conditional writes are (re-entrant: nesting is harmless)."""
    with ExitStack() as stack:
        for name in _DYNAMODB_WRITES:
            _patch(stack, f"{_DYNAMODB}.{name}", _atomic)
        yield


def _atomic(original: Any) -> Any:
    def atomic(*args: Any, **kwargs: Any) -> Any:
        with _DYNAMODB_WRITE_LOCK:
            return original(*args, **kwargs)

    return atomic


@contextmanager
def moto_server_patches(compression: float, *, compress_waits: bool = False) -> Iterator[None]:
    """What the emulator's moto server runs with (see the module's docstring)."""
    from moto.core.config import default_user_config

    with ExitStack() as stack:
        stack.enter_context(atomic_dynamodb_writes())
        stack.enter_context(mock.patch.dict(default_user_config["stepfunctions"], execute_state_machine=True))
        stack.enter_context(mock.patch.dict(default_user_config["lambda"], use_docker=False))
        # A Retry's wait is the interpreter's time.sleep (moto 5.2.5).
        _patch(stack, _RETRY_CLOCK, lambda _time: _compressed_clock(compression))
        # TimeoutSeconds: Program.eval joins the execution's worker thread with that timeout.
        _patch(stack, _PROGRAM_THREADING, lambda _threading: _compressed_threading(compression))
        if compress_waits:
            _patch(stack, _WAIT_INTERVAL, lambda _original: _compressed_wait(compression))
        _patch(stack, _ROUTING, _cached_routing)
        stack.enter_context(jsonata_evaluator())
        stack.enter_context(report_service_messages())
        yield


@contextmanager
def report_service_messages() -> Iterator[None]:
    """Each queue delivery moto makes for a topic or a rule reported as the service's call (module docstring)."""
    with ExitStack() as stack:
        _patch(stack, _SNS_TO_SUBSCRIBER, lambda original: _delivering("sns.amazonaws.com", original, "topic_arn"))
        _patch(stack, _RULE_TO_TARGETS, lambda original: _delivering("events.amazonaws.com", original, "arn"))
        _patch(stack, _SQS_SEND, _reported_send)
        yield


def _delivering(service: str, original: Any, source_attribute: str) -> Callable[..., Any]:
    def deliver(self: Any, *args: Any, **kwargs: Any) -> Any:
        previous = getattr(_DELIVERING, "by", None)
        _DELIVERING.by = (service, getattr(self, source_attribute))
        try:
            return original(self, *args, **kwargs)
        finally:
            _DELIVERING.by = previous

    return deliver


def _reported_send(original: Any) -> Callable[..., Any]:
    def send_message(self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
        message = original(self, queue_name, *args, **kwargs)
        if (by := getattr(_DELIVERING, "by", None)) is not None:
            from sam_emulator.principal import AwsCall, report_service_call

            queue = f"arn:aws:sqs:{self.region_name}:{self.account_id}:{queue_name}"
            report_service_call(AwsCall(by[0], "sqs", "sqs", "SendMessage", {"QueueArn": queue}, source_arn=by[1]))
        return message

    return send_message


@contextmanager
def jsonata_evaluator() -> Iterator[None]:
    """moto's Step Functions interpreter evaluating JSONata and variables (see the module's docstring)."""
    with ExitStack() as stack:
        _patch(stack, _JSONATA_BRIDGE, lambda _none: _evaluate_jsonata)
        _patch(stack, _ASL_PREPROCESSOR_INIT, _own_query_language_scopes)
        yield


def _own_query_language_scopes(original: Any) -> Callable[..., None]:
    """``Preprocessor()`` with its own ``_query_language_per_scope`` list instead of the class's."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._query_language_per_scope = []

    return __init__


def _evaluate_jsonata(expression: str) -> Any:
    """What moto's JVM bridge returns: the expression's value as plain JSON (moto composes the
    expression itself, with the state's input and the variables bound inside it)."""
    import json

    from jsonata import Jsonata

    return json.loads(json.dumps(Jsonata(expression).evaluate(None)))


def _compressed_clock(compression: float) -> SimpleNamespace:
    """A stand-in for the ``time`` module whose ``sleep`` lasts ``1/compression`` of the asked time."""
    clock = SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if not n.startswith("_")})
    clock.sleep = lambda s: time.sleep(max(0.0, float(s)) / compression)
    return clock


def _compressed_threading(compression: float) -> SimpleNamespace:
    """A stand-in for the ``threading`` module whose ``Thread.join(timeout)`` waits ``1/compression`` of it."""

    class CompressedThread(threading.Thread):
        def join(self, timeout: float | None = None) -> None:
            super().join(None if timeout is None else max(0.0, float(timeout)) / compression)

    threads = SimpleNamespace(**{n: getattr(threading, n) for n in dir(threading) if not n.startswith("_")})
    threads.Thread = CompressedThread
    return threads


def _compressed_wait(compression: float) -> Callable[..., None]:
    """A Wait state waits ``Seconds / compression`` (moto 5.2.5: ``WaitFunction._wait_interval``)."""

    def _wait_interval(_self: Any, env: Any, wait_seconds: int) -> None:
        if wait_seconds > 0:  # the execution stopping sets the event and ends the wait early
            env.program_state_event.wait(wait_seconds / compression)

    return _wait_interval


def _cached_routing(original: Any) -> Callable[[Any, str | None], Any]:
    """Cache moto's host -> backend routing (moto 5.2.5 lists its package directory per request).

    ``DomainDispatcherApplication.get_backend_for_host`` runs under a server-wide lock and calls
    ``os.listdir``/``isdir`` on ~250 folders for every request; with a few hundred requests a
    second that lock, not the emulation, was the local run's bottleneck. The answer depends only
    on the host string, so a cache changes nothing but the cost.
    """
    cache: dict[str | None, Any] = {}

    def get_backend_for_host(app: Any, host: str | None) -> Any:
        if host not in cache:
            cache[host] = original(app, host)
        return cache[host]

    return get_backend_for_host


@contextmanager
def lambda_invoke_patches(invoke_lambda: Callable[..., Any], invoke_simple: Callable[..., Any]) -> Iterator[None]:
    """moto's Lambda invoke (full and simple backends) through the given functions.

    Each receives the original method first: ``invoke_lambda(original, function, event)`` and
    ``invoke_simple(original, backend, function_name, qualifier, *args)``.
    """
    with ExitStack() as stack:
        _patch(stack, _LAMBDA_INVOKE, lambda original: lambda self, event=None: invoke_lambda(original, self, event))
        _patch(
            stack,
            _LAMBDA_SIMPLE_INVOKE,
            lambda original: lambda self, name, qualifier, *args: invoke_simple(original, self, name, qualifier, *args),
        )
        yield
