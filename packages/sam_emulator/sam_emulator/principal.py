"""Who the current thread works for: a function's invocation, or the poller of its event source.

In Lambda every AWS call a function makes is signed with its role; here every function shares one
set of credentials, so the emulator says, per thread, whose call it is. Whoever wants to know (an
IAM request recorder, say) reads :func:`current_principal` when a call is made in this process, and
listens with :func:`add_call_listener` for the calls functions make in their worker processes
(:mod:`sam_emulator.workers`), which no hook of this process sees. What AWS itself does for the
account, with no code of the stack calling, is heard apart (:func:`add_service_listener`): an
invocation starting (:func:`report_invocation`: Lambda then writes the function's logs with its
role), a schedule invoking its target (with the schedule's role), a delivery a service makes as
itself (SNS to a subscribed queue, a rule to its target: ``source_arn`` is the topic or rule, see
:func:`sam_emulator.moto_patches.report_service_messages`).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "PLATFORM_INVOCATION",
    "AwsCall",
    "CallRecorder",
    "acting_as",
    "add_call_listener",
    "add_service_listener",
    "current_principal",
    "record_calls",
    "remove_call_listener",
    "remove_service_listener",
    "report_call",
    "report_invocation",
    "report_service_call",
]

_THREAD = threading.local()


@contextmanager
def acting_as(principal: str | None) -> Iterator[None]:
    """Calls made by this thread inside the block are ``principal``'s (``None``: nobody's; nesting restores)."""
    previous = getattr(_THREAD, "principal", None)
    _THREAD.principal = principal
    try:
        yield
    finally:
        _THREAD.principal = previous


def current_principal() -> str | None:
    return getattr(_THREAD, "principal", None)


# ---------------------------------------------------------------- calls made in another process
@dataclass(frozen=True)
class AwsCall:
    """One AWS API call as botocore saw it, before signing (retries are not new calls)."""

    principal: str | None
    service: str  # the service's name in botocore (``cloudwatch``)
    signing_name: str  # the name IAM actions use (``monitoring``)
    operation: str
    params: dict[str, Any]
    source_arn: str | None = None  # a service principal's call: the resource it acts for (aws:SourceArn)


# Not an API operation: an invocation began, and Lambda acts for it with the function's role.
PLATFORM_INVOCATION = "Invocation"

_LISTENERS: list[Callable[[AwsCall], None]] = []
_LISTENERS_LOCK = threading.Lock()


def add_call_listener(listener: Callable[[AwsCall], None]) -> None:
    """Hear every call a function made in a worker process (:mod:`sam_emulator.workers`).

    Calls made in THIS process are botocore's to hook (its ``before-call`` event); calls made in a
    function's worker process never reach this process's hooks, so the worker records them and the
    function reports them here, in the invoking thread, under the function's name, once its
    invocation has answered (a killed invocation's calls are lost with its process).
    """
    with _LISTENERS_LOCK:
        _LISTENERS.append(listener)


def remove_call_listener(listener: Callable[[AwsCall], None]) -> None:
    with _LISTENERS_LOCK:
        if listener in _LISTENERS:
            _LISTENERS.remove(listener)


def report_call(call: AwsCall) -> None:
    with _LISTENERS_LOCK:
        listeners = list(_LISTENERS)
    for listener in listeners:
        listener(call)


_SERVICE_LISTENERS: list[Callable[[AwsCall], None]] = []


def add_service_listener(listener: Callable[[AwsCall], None]) -> None:
    """Hear what AWS itself does for the account, no code of the stack calling (module docstring)."""
    with _LISTENERS_LOCK:
        _SERVICE_LISTENERS.append(listener)


def remove_service_listener(listener: Callable[[AwsCall], None]) -> None:
    with _LISTENERS_LOCK:
        if listener in _SERVICE_LISTENERS:
            _SERVICE_LISTENERS.remove(listener)


def report_service_call(call: AwsCall) -> None:
    with _LISTENERS_LOCK:
        listeners = list(_SERVICE_LISTENERS)
    for listener in listeners:
        listener(call)


def report_invocation(logical_id: str, name: str) -> None:
    """An invocation of ``logical_id`` began (admitted): Lambda writes its logs and traces with its role."""
    report_service_call(AwsCall(logical_id, "lambda", "lambda", PLATFORM_INVOCATION, {"FunctionName": name}))


class CallRecorder:
    """botocore hooks on boto3's default session keeping every call of this process (a worker's)."""

    def __init__(self) -> None:
        self._calls: list[AwsCall] = []
        self._lock = threading.Lock()

    def take(self) -> list[AwsCall]:
        with self._lock:
            calls, self._calls = self._calls, []
        return calls

    def _params(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context[_PARAMS_KEY] = dict(params)

    def _call(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        call = AwsCall(
            current_principal(),
            model.service_model.service_name,
            model.service_model.signing_name,
            model.name,
            context.get(_PARAMS_KEY, {}),
        )
        with self._lock:
            self._calls.append(call)

    def _url_call(self, request: Any, **_: Any) -> None:
        call = AwsCall(current_principal(), "lambda", "lambda", "InvokeFunctionUrl", {"FunctionUrl": request.url})
        with self._lock:
            self._calls.append(call)


_PARAMS_KEY = "sam_emulator.principal.params"


def record_calls() -> CallRecorder:
    """Record every call of this process's default boto3 session (clients created from now on)."""
    import boto3

    recorder = CallRecorder()
    session = boto3._get_default_session()
    session.events.register("before-parameter-build", recorder._params, unique_id="sam-emulator-calls-p")
    session.events.register("before-call", recorder._call, unique_id="sam-emulator-calls-c")
    # A SigV4-signed call to a Lambda function URL is no API call: botocore's signer announces it.
    session.events.register(
        "before-sign.lambda.InvokeFunctionUrl", recorder._url_call, unique_id="sam-emulator-calls-u"
    )
    return recorder
