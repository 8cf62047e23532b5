"""Lambda durable functions, run locally: a function with ``DurableConfig`` started as the durable service would.

An asynchronous invoke of a durable function (a pipe's ``FIRE_AND_FORGET`` target) starts a durable
execution; the service then invokes the function, checkpoints each step, and invokes it again after a wait,
a retry or a failed invocation, until the execution ends or its ``ExecutionTimeout`` passes. Nothing
emulates that service but the SDK's own local runner (``aws-durable-execution-sdk-python-testing``), so each
durable function gets one :class:`DurableService` around it, whose invocations are the function's own
(:meth:`sam_emulator.functions.Function.invoke`: its role, its ``Timeout``, the platform's faults).

The runner hands the handler an in-memory client of its checkpoints, which cannot cross into a worker
process: a durable function runs in this process (``LocalRuntime`` loads it there). The SDK runs the
handler's body in a thread of its own (``dex-handler``), which here would lose what the invoking thread
carries: whose calls they are (:mod:`sam_emulator.principal`) and the invocation the platform may cut
(:mod:`sam_emulator.deaths`). While a service runs, the SDK's thread pool is one that hands both on
(:class:`_CarryingExecutor`): a Lambda execution environment is one process, whichever thread calls.

Time: with ``compression`` the runner's timers (a durable ``Wait``, a step's retry delay, the execution's
timeout) fire after ``1/compression`` of their modelled time, as the state machine's ``Wait`` states do in
the same run (:class:`CompressedClock`).
"""

from __future__ import annotations

import contextvars
import datetime
import json
import logging
import sys
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from sam_emulator.principal import acting_as, current_principal

#: DurableConfig.ExecutionTimeout when the template does not say (the service's default: one day).
DEFAULT_EXECUTION_TIMEOUT_S = 86_400


class DurableFunction(Protocol):
    """What the service needs of a function (:class:`sam_emulator.functions.Function`): its name, its invoke."""

    name: str

    def invoke(self, event: Any, lambda_context: Any = None) -> Any: ...


class CompressedClock:
    """The runner's clock: time since its start runs ``compression`` times faster than the wall clock.

    The runner decides a timer is due by comparing its "now" with the moment the timer was set for, so a
    compressed wait needs a compressed "now", not only a shorter sleep. Only the runner reads this clock (its
    timestamps, its timers); the handlers' leases keep the wall clock, compressed where the run compresses them.
    """

    def __init__(self, compression: float) -> None:
        self.compression = compression
        self._origin = datetime.datetime.now(datetime.UTC)

    def now(self) -> datetime.datetime:
        return self._origin + (datetime.datetime.now(datetime.UTC) - self._origin) * self.compression

    def arm(self, wake: datetime.datetime) -> float:
        return max((wake - self.now()).total_seconds(), 0.0) / self.compression


@dataclass(frozen=True)
class DurableExecution:
    """One durable execution as the service reports it."""

    arn: str
    name: str
    input: str | None
    status: str  # RUNNING / SUCCEEDED / FAILED / TIMED_OUT / STOPPED
    result: str | None = None  # the handler's JSON output, when it succeeded
    error_type: str | None = None  # the error that ended it, when it failed
    last_operation: str | None = None  # the name of the last step or wait it started (where a cut one stopped)


@dataclass
class DurableService:
    """The durable executions of one function: started by :meth:`start`, listed by :meth:`executions`."""

    function: DurableFunction
    execution_timeout_s: int = DEFAULT_EXECUTION_TIMEOUT_S
    compression: float = 1.0
    _runner: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, payload: Any, name: str | None = None) -> str:
        """An asynchronous invoke: start an execution with ``payload`` as its input; return its ARN.

        ``name`` is ``DurableExecutionName``; a pipe passes none, so every start is a new execution
        (as in AWS) and the function's own first step must tell a redelivery from a new order.
        """
        runner = self._started()
        return str(
            runner.run_async(
                input=json.dumps(payload),
                execution_timeout=self.execution_timeout_s,
                function_name=self.function.name,
                execution_name=name or uuid.uuid4().hex,
            )
        )

    def executions(self) -> list[DurableExecution]:
        """Every execution started so far, running or ended."""
        if self._runner is None:
            return []
        return [_described(e) for e in self._runner._store.list_all()]

    def running(self) -> int:
        return sum(1 for e in self.executions() if e.status == "RUNNING")

    def stop(self) -> None:
        with self._lock:
            runner, self._runner = self._runner, None
        if runner is not None:
            runner.close()
            _carry_context(on=False)

    def _started(self) -> Any:
        with self._lock:
            if self._runner is None:
                from unittest import mock

                _logs_to_stdout()
                _carry_context(on=True)

                from aws_durable_execution_sdk_python_testing import runner as runner_module

                # The runner builds its clock from skip_time and hands it to every part it builds: ours is
                # put in its place for the construction (the contract suite swaps SkipClock the same way).
                clock = CompressedClock(self.compression)
                with _CONSTRUCTION, mock.patch.object(runner_module, "RealClock", lambda: clock):
                    self._runner = runner_module.DurableFunctionTestRunner(
                        handler=self.function.invoke, skip_time=False
                    )
            return self._runner


_CONSTRUCTION = threading.Lock()  # the patched name is the module's: one construction at a time


class _CarryingExecutor(ThreadPoolExecutor):
    """The SDK's thread pool, each task run with the submitting thread's context and principal."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        context, principal = contextvars.copy_context(), current_principal()

        def carried() -> Any:
            with acting_as(principal):
                return context.run(fn, *args, **kwargs)

        return super().submit(carried)


@dataclass
class _Carrying:
    """The SDK's pool is patched while any service runs: one patch, the running services counted."""

    services: int = 0
    patch: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)


_CARRYING = _Carrying()


def _carry_context(on: bool) -> None:
    from unittest import mock

    from aws_durable_execution_sdk_python import execution

    with _CARRYING.lock:
        if on and _CARRYING.services == 0:
            _CARRYING.patch = mock.patch.object(execution, "ThreadPoolExecutor", _CarryingExecutor)
            _CARRYING.patch.start()
        _CARRYING.services += 1 if on else -1
        if not on and _CARRYING.services == 0:
            _CARRYING.patch.stop()
            _CARRYING.patch = None


#: The SDK's loggers (a failed step, a replay) and the runner's (a failed invocation).
SDK_LOGGERS = ("aws_durable_execution_sdk_python", "aws_durable_execution_sdk_python_testing")


class _CurrentStdout(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stdout`` is when a record is emitted: the run's log capture, as Lambda sends a
    function's log records to its log, not to the terminal of whoever runs it."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stdout

    @stream.setter
    def stream(self, _value: Any) -> None:
        return None


def _logs_to_stdout() -> None:
    for name in SDK_LOGGERS:
        sdk_logger = logging.getLogger(name)
        if not any(isinstance(h, _CurrentStdout) for h in sdk_logger.handlers):
            sdk_logger.addHandler(_CurrentStdout())
            sdk_logger.propagate = False


def _described(execution: Any) -> DurableExecution:
    status = "RUNNING"
    result = error_type = None
    if execution.is_complete:
        status = execution.close_status.value if execution.close_status else "FAILED"
        output = execution.result
        result = getattr(output, "result", None)
        error = getattr(output, "error", None)
        if error is not None:
            error_type = (getattr(error, "type", None) or "").rsplit(".", 1)[-1] or None
    start = execution.start_input
    named = [operation.name for operation in execution.operations if getattr(operation, "name", None)]
    return DurableExecution(
        arn=execution.durable_execution_arn,
        name=start.execution_name,
        input=start.input,
        status=status,
        result=result,
        error_type=error_type,
        last_operation=named[-1] if named else None,
    )
