"""moto's Lambda running an application's real handlers, in this process.

Why it exists: moto's Step Functions interpreter runs Lambda tasks through moto's Lambda,
which wants Docker; with ``{"lambda": {"use_docker": False}}`` it only echoes the payload.
While :func:`in_process` is active, invoking a function whose *name* was registered runs the
registered handler here instead, with Lambda's contract:

- the event is the invoke payload (JSON), the context a small :class:`LambdaContext`;
- a return value is the JSON result;
- an exception becomes an *errored* result ``{"errorType": <class name>, "errorMessage": ...}``
  (what the Python runtime sends), which Step Functions turns into the error named by
  ``errorType``: the ASL's ``Retry``/``Catch`` match it exactly as on AWS. An exception with an
  ``error_type`` attribute (the platform faults of :mod:`sam_emulator.platform_faults`:
  ``Sandbox.Timedout``, ``Lambda.Unknown``, ``Lambda.TooManyRequestsException``) reports that name.

What is patched (moto 5.2.5, pinned; applied by :func:`sam_emulator.moto_patches.lambda_invoke_patches`):

- ``moto.awslambda.models.LambdaFunction._invoke_lambda(self, event=None)``: returns
  ``(result_json, errored, logs)``; registered functions run in process, others keep moto's code.
- ``moto.awslambda_simple.models.LambdaSimpleBackend.invoke``: the Docker-less backend never calls
  ``_invoke_lambda``; for registered functions it now takes the regular backend's path.

Functions not registered behave exactly as moto makes them. Usable with ``mock_aws`` and with
``ThreadedMotoServer`` (both run the backend in this process). Example::

    with in_process({"my-function": app.lambda_handler}) as record:
        ...  # start executions; record.invocations["my-function"] counts calls
"""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time
import traceback
import uuid
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.moto_patches import lambda_invoke_patches

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path
    from types import ModuleType

    Handler = Callable[[Any, Any], Any]


def import_handler(file_path: Path, name: str) -> ModuleType:
    """Import a handler file as Lambda's runtime does: a fresh module (a cold start), its folder first on ``sys.path``.

    ``name`` must be unique per load, so several functions' ``app`` modules (and several cold
    starts of one) coexist. The one loader the local run and the tests share. A nested unit's function names
    itself by its path (``Unidad/Funcion``): the path's ``/`` is no module name's.
    """
    name = name.replace("/", "_")
    spec = importlib.util.spec_from_file_location(name, file_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no handler module at {file_path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if str(file_path.parent) not in sys.path:
        sys.path.insert(0, str(file_path.parent))  # the function's own modules (functions/<name>/*.py)
    spec.loader.exec_module(module)
    return module


@dataclass
class LambdaContext:
    """What handlers read from Lambda's context object (remaining time counts down from the timeout)."""

    function_name: str
    invoked_function_arn: str
    timeout_s: float = 30.0
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    # Seconds; tests pass their injected clock so "time left" moves only when the test moves it.
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    _start: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._start = self.clock()

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_s - (self.clock() - self._start)) * 1000))

    def next_invocation(self) -> LambdaContext:
        """The context of the next invocation of the same function: a new request id, the full timeout again."""
        return LambdaContext(
            self.function_name, self.invoked_function_arn, self.timeout_s, self.memory_limit_in_mb, clock=self.clock
        )


@dataclass
class Registry:
    """Registered handlers and what happened to them (thread-safe: Map states invoke in parallel)."""

    handlers: dict[str, Handler] = field(default_factory=dict)
    invocations: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    events: list[tuple[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def register_handler(self, function_name: str, handler_fn: Handler) -> None:
        with self._lock:
            self.handlers[function_name] = handler_fn

    def handler_fn(self, function_name: str) -> Handler | None:
        with self._lock:
            return self.handlers.get(function_name)

    def invoke(self, function: Any, event: Any) -> tuple[str, bool, str]:
        """Run the handler registered for moto's ``function`` the way Lambda would."""
        name = function.function_name
        handler_fn = self.handler_fn(name)
        assert handler_fn is not None, name
        lambda_context = LambdaContext(name, function.function_arn, float(function.timeout or 30))
        with self._lock:
            self.invocations[name] += 1
            self.events.append((name, event))
        try:
            result = handler_fn(event, lambda_context)
        except Exception as exc:
            with self._lock:
                self.errors[name] += 1
            # Platform faults (sam_emulator.platform_faults) carry AWS's own error name.
            type_name = getattr(exc, "error_type", None) or type(exc).__name__
            error = {
                "errorType": type_name,
                "errorMessage": str(exc),
                "requestId": lambda_context.aws_request_id,
                "stackTrace": traceback.format_exception(exc)[-5:],
            }
            return json.dumps(error), True, f"{type_name}: {exc}"
        return json.dumps(result, default=str), False, ""


_ACTIVE: Registry | None = None
_LOCK = threading.Lock()


@contextmanager
def in_process(handlers: Mapping[str, Handler] | None = None) -> Iterator[Registry]:
    """Run the given handlers (function name -> ``handler(event, context)``) for moto's invokes.

    Not re-entrant: one registry at a time (a second activation raises), so two tests or
    two local runs in one process cannot silently share handlers.
    """
    global _ACTIVE
    from moto.awslambda.models import LambdaBackend

    record = Registry()
    for name, handler_fn in (handlers or {}).items():
        record.register_handler(name, handler_fn)
    with _LOCK:
        if _ACTIVE is not None:
            raise RuntimeError("moto_lambda.en_proceso is already active in this process")
        _ACTIVE = record

    def invoke_lambda(original: Any, function: Any, event: Any) -> tuple[str, bool, str]:
        if record.handler_fn(function.function_name) is None:
            return original(function, event)
        return record.invoke(function, event)

    def invoke_simple(original: Any, backend: Any, function_name: str, qualifier: str | None, *args: Any) -> Any:
        function = backend.get_function(function_name, qualifier)
        if record.handler_fn(function.function_name) is None:
            return original(backend, function_name, qualifier, *args)
        return LambdaBackend.invoke(backend, function_name, qualifier, *args)

    try:
        with lambda_invoke_patches(invoke_lambda, invoke_simple):
            yield record
    finally:
        with _LOCK:
            _ACTIVE = None
