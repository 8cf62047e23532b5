"""The template's functions as in-process handlers, loaded the way Lambda loads them.

Each ``AWS::Serverless::Function`` becomes a :class:`Function`: ``functions/<CodeUri>/app.py``
imported under a unique module name with its folder first on ``sys.path``, after its
environment (``Globals`` merged with the function's own ``Environment``, resolved, then the
local run's overrides such as the stand-ins' URLs) has been put in ``os.environ``.

Two ways to run it:

- ``isolated=True`` (:class:`~sam_emulator.runtime.LocalRuntime`'s default): every invocation runs
  in a worker process of the function's own (:mod:`sam_emulator.workers`), as Lambda's execution
  environments: its own ``os.environ``, its own cold start, one invocation per worker, killed at
  its ``Timeout``. Admission (throttling, the chaos plan) stays in this process.
- ``isolated=False`` (a bare ``Function``'s default, and ``LocalRuntime(isolated_functions=False)``,
  for tests that reach into the handler module: in-process
  ``mock_aws``, injected clocks): the handler is imported into this process. Every such function
  shares ``os.environ``: a variable two functions set to different values keeps the last one
  loaded. Handlers read their configuration at import (the project's rule), which is when each
  function's own values are in place.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sam_emulator import deaths
from sam_emulator.moto_lambda import LambdaContext, import_handler
from sam_emulator.principal import acting_as, report_call, report_invocation
from sam_emulator.workers import MAX_WORKERS, WorkerConfig, WorkerLost, WorkerPool

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from sam_emulator.durable import DurableService

_IMPORT_LOCK = threading.RLock()  # re-entered by a first invocation (which loads the module)
_SET_VARIABLES: dict[str, str | None] = {}  # variables a cold start set -> the process's own value before
_THREAD_LOCAL = threading.local()  # per invoking thread: the CPU seconds its last worker invocation used


def _text(value: object) -> str:
    return str.__str__(value) if isinstance(value, str) else str(value)


def worker_cpu_s() -> float:
    """CPU seconds of the last invocation this thread ran in a worker (0 if none): ``time.thread_time`` there."""
    return float(getattr(_THREAD_LOCAL, "cpu_s", 0.0))


def _environment_of(environment: dict[str, str]) -> None:
    """``os.environ`` = the process's own variables + exactly this function's (none left from another)."""
    for key in [c for c in _SET_VARIABLES if c not in environment]:
        previous_value = _SET_VARIABLES.pop(key)
        if previous_value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = previous_value
    for key, value in environment.items():
        _SET_VARIABLES.setdefault(key, os.environ.get(key))
        os.environ[key] = value


def restore_environment() -> None:
    """``os.environ`` as the process had it before any cold start of this run set a variable."""
    _environment_of({})


def shared_environment(functions: list[Function]) -> None:
    """After the cold starts: keep only the variables every function sets to the same value.

    Code that reads its configuration on first use rather than at import (lazy clients) then
    finds its own default instead of the value of whichever function was loaded last (the
    reclamo's 7500 s lease is not the ERP's).
    """
    common = {
        c: v
        for c, v in (functions[0].environment.items() if functions else [])
        if all(f.environment.get(c) == v for f in functions)
    }
    _environment_of(common)


@dataclass
class Function:
    """One function of the template, runnable in this process."""

    logical_id: str
    name: str
    code: Path
    handler: str = "app.lambda_handler"
    environment: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 30.0
    memory_mb: int = 512
    reserved_concurrency: int | None = None  # ReservedConcurrentExecutions: beyond it, throttled
    # DurableConfig.ExecutionTimeout of a durable function (sam_emulator.durable); None: not durable
    durable_timeout_s: int | None = None
    isolated: bool = False  # each invocation in a worker process of this function (sam_emulator.workers)
    max_workers: int = MAX_WORKERS  # isolated: its workers at most; more concurrent invocations wait for one
    invocations: int = 0
    errors: int = 0
    _workers: WorkerPool | None = None
    _module: ModuleType | None = None
    _started: bool = False  # a first invocation has completed (lazy initialisation done)
    _counter: threading.Lock = field(default_factory=threading.Lock)

    @property
    def handler_fn(self) -> Callable[[Any, Any], Any]:
        module = self.load()
        return getattr(module, self.handler.rsplit(".", 1)[1])

    def load(self) -> ModuleType:
        """Import the handler module once (a cold start), with this function's environment."""
        with _IMPORT_LOCK:
            if self._module is None:
                _environment_of(self.environment)
                file_path = self.code / f"{self.handler.rsplit('.', 1)[0]}.py"
                name = f"mf_local_{self.logical_id}_{uuid.uuid4().hex[:6]}"
                self._module = import_handler(file_path, name)
            return self._module

    # ------------------------------------------------------------ worker processes
    def start_workers(self) -> WorkerPool:
        """Start this function's first execution environment (its cold start runs meanwhile)."""
        with self._counter:  # pollers may invoke a function that was never started
            if self._workers is None:
                self._workers = WorkerPool(self._worker_config, self.max_workers)
                self._workers.warm()
            return self._workers

    def wait_workers(self) -> None:
        """Wait for the cold starts :meth:`start_workers` began; raise the handler's import error."""
        if self._workers is not None:
            self._workers.ready_all()

    def stop_workers(self) -> None:
        if self._workers is not None:
            self._workers.close()
            self._workers = None

    def worker_pids(self) -> list[int]:
        return self._workers.pids() if self._workers is not None else []

    @property
    def cold_starts(self) -> int:
        return self._workers.cold_starts if self._workers is not None else int(self._module is not None)

    def _worker_config(self) -> WorkerConfig:
        module, attribute_name = _text(self.handler).rsplit(".", 1)
        # this process's variables at the worker's start + the function's; plain str (the template's
        # strings are cfn-lint's str subclasses, which do not pickle)
        environment = {_text(c): _text(v) for c, v in {**os.environ, **self.environment}.items()}
        return WorkerConfig(
            logical_id=_text(self.logical_id),
            name=_text(self.name),
            file=str(self.code / f"{module}.py"),
            attribute=attribute_name,
            environ=environment,
        )

    def invoke(self, event: Any, lambda_context: Any = None) -> Any:
        """Call the handler as Lambda would; exceptions propagate (Lambda reports them as errors).

        Platform faults surface as :mod:`sam_emulator.platform_faults` exceptions: throttled
        beyond ``reserved_concurrency``, ``Sandbox.Timedout`` past ``timeout_s``, ``Lambda.Unknown``
        for a planned crash (:data:`sam_emulator.deaths.CONTROL`).
        """
        lambda_context = lambda_context or LambdaContext(
            function_name=self.name,
            invoked_function_arn=f"arn:aws:lambda:::function:{self.name}",
            timeout_s=self.timeout_s,
            memory_limit_in_mb=self.memory_mb,
        )
        with self._counter:
            self.invocations += 1
        if self.isolated:
            return self._invoke(event, lambda_context)
        if not self._started:
            # Handlers that build their clients/configuration on first use (not at import) must read
            # THIS function's environment: first invocations run one at a time, like cold starts.
            with _IMPORT_LOCK:
                _environment_of(self.environment)
                result = self._invoke(event, lambda_context)
                self._started = True
                return result
        return self._invoke(event, lambda_context)

    def _invoke(self, event: Any, lambda_context: Any) -> Any:
        try:
            # The platform's own faults (throttling, Timeout, a planned crash): see sam_emulator.deaths.
            # acting_as(): the AWS calls made inside are this function's role's (sam_emulator.principal).
            with (
                acting_as(self.logical_id),
                deaths.CONTROL.invocation(self.name, event, self.timeout_s, self.reserved_concurrency) as invocation,
            ):
                report_invocation(self.logical_id, self.name)
                if self.isolated:
                    return self._in_worker(event, lambda_context, invocation)
                return self.handler_fn(event, lambda_context)
        except Exception:
            with self._counter:
                self.errors += 1
            raise

    def _in_worker(self, event: Any, lambda_context: Any, invocation: deaths.Invocation) -> Any:
        """One invocation in an idle (or new) worker; a death is marked on ``invocation`` for CONTROL to report."""
        pool = self.start_workers()
        worker = pool.acquire()
        # Timeout counts from now: the wait for a free worker and its cold start are not the invocation's
        invocation.deadline = time.monotonic() + self.timeout_s
        context_data = {
            "function_name": getattr(lambda_context, "function_name", self.name),
            "invoked_function_arn": getattr(lambda_context, "invoked_function_arn", ""),
            "memory_limit_in_mb": getattr(lambda_context, "memory_limit_in_mb", self.memory_mb),
            "aws_request_id": getattr(lambda_context, "aws_request_id", None) or str(uuid.uuid4()),
        }
        _THREAD_LOCAL.cpu_s = 0.0
        try:
            response = worker.invoke(event, context_data, invocation.cut, invocation.deadline)
        except WorkerLost as lost:
            pool.discard(worker)
            invocation._die(lost.fault, lost.where)
            return None
        if response.log:
            sys.stdout.write(response.log)  # the function's log: OutputCapture's, when the run installed it
        _THREAD_LOCAL.cpu_s = response.cpu_s
        for call in response.calls:
            report_call(replace(call, principal=self.logical_id))  # the worker's calls are all this function's
        if response.kind == "died":
            pool.discard(worker)
            assert response.fault is not None
            invocation._die(response.fault, response.where)
            return None
        pool.release(worker)
        if response.kind == "error":
            assert response.error is not None
            raise response.error
        return response.result


@dataclass
class Functions:
    """Every function of the template, by logical id and by physical name."""

    by_id: dict[str, Function] = field(default_factory=dict)
    # The durable functions' services, by logical id: an asynchronous invoke of one starts an execution
    durable: dict[str, DurableService] = field(default_factory=dict)

    def add(self, function: Function) -> None:
        self.by_id[function.logical_id] = function

    def by_name(self, name_or_arn: str) -> Function:
        name = name_or_arn.rsplit(":function:", 1)[-1].split(":", 1)[0]
        for function in self.by_id.values():
            if name in (function.name, function.logical_id):
                return function
        raise KeyError(f"no local function named {name_or_arn!r}")

    def handlers(self) -> dict[str, Callable[[Any, Any], Any]]:
        """Physical name -> a callable(event, context), for the moto Lambda patch."""
        return {f.name: _deferred_handler(f) for f in self.by_id.values()}


def _deferred_handler(function: Function) -> Callable[[Any, Any], Any]:
    def handle_event(event: Any, lambda_context: Any = None) -> Any:
        return function.invoke(event, lambda_context)

    return handle_event


def code_path(code_uri: str, folder: Path | None = None) -> Path:
    """A CodeUri resolved against the template's folder (the current directory by default)."""
    return ((folder or Path.cwd()) / code_uri).resolve()
