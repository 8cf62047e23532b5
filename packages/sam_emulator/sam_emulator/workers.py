"""One process per function: Lambda's execution environments as worker processes.

In Lambda each function runs in execution environments of its own: its own process, its own
environment variables, its own imported handler (a cold start per environment), one invocation
at a time per environment, and a timeout that stops the process. :class:`WorkerPool` gives a
:class:`~sam_emulator.functions.Function` exactly that:

- a :class:`Worker` is one process (``multiprocessing``'s *forkserver*: a clean server process
  forks each worker, so nothing of the parent's threads, locks or moto state is inherited, and
  the heavy SDK imports listed in :data:`PRELOAD` are paid once instead of per cold start);
- its ``os.environ`` is the parent's at the worker's start plus the function's variables (two
  functions may give one variable different values; neither sees the other's);
- it imports the handler once (the cold start, reported by :attr:`Worker.cold_start_s`) and
  serves one invocation at a time; the pool starts another worker when every one is busy, up
  to :data:`MAX_WORKERS` per function: past it an invocation waits for a free worker, and its
  ``Timeout`` counts from when it has one (Lambda's Init phase and scaling are not the
  invocation's either);
- past the invocation's deadline the parent kills the worker (SIGKILL): a handler stuck in pure
  code or on a socket is stopped, as Lambda stops it; a worker that dies is replaced by a new
  one (and a new cold start) on the next invocation.

What stays in the parent: admission (throttling, the chaos plan's decision, the record of
deaths: :data:`sam_emulator.deaths.CONTROL`), moto, the event sources and the HTTP stand-ins.
The planned death (a :class:`~sam_emulator.deaths.Cut`) travels with the request; the worker's
own boundary hooks apply it and the worker then exits, its environment gone as on AWS.

What comes back with each answer, besides the result or the error:

- what the handler wrote on stdout or stderr (both are the function's log in Lambda: Python's
  warnings too), written to the parent's ``sys.stdout``, where
  :class:`~sam_emulator.log_capture.OutputCapture` reads logs and EMF metrics as CloudWatch
  would; a killed worker's output of that invocation is lost;
- every AWS call the worker made (:class:`~sam_emulator.principal.AwsCall`), which
  :class:`~sam_emulator.functions.Function` hands to :func:`sam_emulator.principal.report_call`
  under the function's name (an IAM request recorder listens there).

Cost, and why :class:`~sam_emulator.runtime.LocalRuntime` runs functions in workers by default
(``SAM_EMULATOR_WORKERS=0``, or ``isolated_functions=False``, imports them into its own process):
handlers import little (about 50 ms of CPU) but build their clients, loggers and connections on
first use, once per worker instead of once per process, and a worker holds about 70 MB. Each
function's first worker is started, its handler imported, before any poller runs; the cap keeps
a run from growing as many workers as it has concurrent invocations. Uncapped, the e2e
``normal`` scenario (20 orders) peaked at about 40 workers and 1.9-2.9 GB and took 1.5-2x the
in-process time on two shared cores. With two per function it peaks at 19 processes and about
960 MB (proportional set size of the whole tree; 350 MB in process) and takes about the
in-process time: 0.96x over three interleaved pairs on a quiet machine (71.8 s against 74.9 s),
1.04x over three with two or three busy loops beside it (load 3-6; pairs 0.81x to 1.49x). The
``viernes`` scenario (40 orders, its outage and latencies in real seconds) took 161 s either way.

Errors: an exception is sent pickled; one whose class the parent cannot import (defined in the
handler's own module) arrives as an ``Exception`` subclass of the same name, so callers that
match on the name (Step Functions' ``errorType``) see what Lambda would report.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sam_emulator.platform_faults import LambdaCrashed, LambdaTimeout, PlatformFault

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection

    from sam_emulator.deaths import Cut
    from sam_emulator.principal import AwsCall

__all__ = ["MAX_WORKERS", "PRELOAD", "Answer", "Worker", "WorkerConfig", "WorkerLost", "WorkerPool"]

# Imported once by the fork server, so each worker's cold start does not import them again
# (a module missing here is skipped by multiprocessing). Only libraries: nothing that reads
# a function's environment at import.
PRELOAD = [
    "boto3",
    "botocore.session",
    "urllib3",
    "sam_emulator.deaths",
    "sam_emulator.moto_lambda",
    "sam_emulator.principal",
    "aws_lambda_powertools",
]

# A worker's cold start (process + handler import) is bounded like Lambda's Init phase, with room
# for a loaded laptop: past it the worker is killed and the invocation fails as a crash.
COLD_START_LIMIT_S = 120.0

# A function's workers at most: one more concurrent invocation waits for one of them to be free
# (Lambda would start another environment; a laptop pays a cold start and ~70 MB for each).
MAX_WORKERS = 2

_CONTEXT: Any = None
_CONTEXT_LOCK = threading.Lock()


def _context() -> Any:
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            lambda_context = multiprocessing.get_context("forkserver")
            lambda_context.set_forkserver_preload(PRELOAD)
            _CONTEXT = lambda_context
        return _CONTEXT


class WorkerLost(Exception):
    """The worker process is gone mid-invocation: killed at its deadline, or crashed."""

    def __init__(self, fault: type[PlatformFault], where: str) -> None:
        super().__init__(f"{fault.error_type} at {where}")
        self.fault = fault
        self.where = where


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to become one execution environment of a function."""

    logical_id: str
    name: str
    file: str  # the handler's module file
    attribute: str  # the handler's name in it
    environ: dict[str, str]  # the worker's whole os.environ


@dataclass
class Answer:
    """A worker's answer to one invocation."""

    kind: str  # "ok", "error" or "died"
    result: Any = None
    error: BaseException | None = None
    fault: type[PlatformFault] | None = None  # "died": LambdaCrashed or LambdaTimeout
    where: str = ""  # "died": the boundary it died at
    log: str = ""  # what the invocation wrote on stdout and stderr
    calls: list[AwsCall] = field(default_factory=list)
    cpu_s: float = 0.0


# ------------------------------------------------------------------ parent side
class Worker:
    """One worker process of one function; one invocation at a time."""

    def __init__(self, config: WorkerConfig) -> None:
        lambda_context = _context()
        self.config = config
        self._connection, child = lambda_context.Pipe()
        self.proc = lambda_context.Process(
            target=_main, args=(child, config), daemon=True, name=f"lambda-{config.logical_id}"
        )
        self._start = time.monotonic()
        self.proc.start()
        child.close()
        self.cold_start_s: float | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid

    def ready(self) -> None:
        """Wait for the cold start to end (once); its output goes to ``sys.stdout``. Raise its import error."""
        if self.cold_start_s is not None:
            return
        if not self._connection.poll(COLD_START_LIMIT_S):
            self.kill()
            raise WorkerLost(LambdaCrashed, "init (cold start too long)")
        try:
            type_name, payload, log = self._connection.recv()
        except (EOFError, OSError):
            self.kill()
            raise WorkerLost(LambdaCrashed, "init") from None
        self.cold_start_s = time.monotonic() - self._start
        if log:
            sys.stdout.write(log)
        if type_name == "error":
            self.kill()
            raise _exception(payload)

    def invoke(self, event: Any, context: dict[str, Any], cut: Cut | None, deadline: float) -> Answer:
        """Run one invocation; past ``deadline`` (``time.monotonic()``, shared by every process) kill the worker."""
        try:
            self._connection.send((event, context, cut, deadline))
        except (OSError, ValueError) as error:  # broken pipe: the worker died between invocations
            self.kill()
            raise WorkerLost(LambdaCrashed, "send") from error
        if not self._connection.poll(max(0.0, deadline - time.monotonic())):
            self.kill()
            raise WorkerLost(LambdaTimeout, "timeout (killed)")
        try:
            response: Answer = self._connection.recv()
        except (EOFError, OSError):
            self.kill()
            raise WorkerLost(LambdaCrashed, "process exited") from None
        if response.kind == "error":
            response.error = _exception(response.error)
        return response

    def alive(self) -> bool:
        return self.proc.is_alive()

    def kill(self) -> None:
        """SIGKILL, as Lambda stops an environment: no cleanup runs in it."""
        if self.proc.pid is not None and self.proc.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.join(timeout=10)
        self._connection.close()


class WorkerPool:
    """A function's execution environments: idle workers are reused, a new one starts when all are busy.

    At most ``max_workers``: past them an invocation waits for a worker to be released or discarded.
    """

    def __init__(self, config: Callable[[], WorkerConfig], max_workers: int = MAX_WORKERS) -> None:
        self._config = config
        self._free: list[Worker] = []
        self._everyone: set[Worker] = set()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a worker was released or discarded
        self._max_workers = max(1, max_workers)
        self._starting = 0  # workers being started outside the lock (their slots are taken)
        self._closed = False
        self.cold_starts = 0
        self.waiting = 0  # invocations waiting for a worker now

    def warm(self) -> Worker:
        """Start one worker now, idle (wait for its cold start with :meth:`Worker.ready`)."""
        worker = self._new()
        with self._lock:
            self._free.append(worker)
        return worker

    def ready_all(self) -> None:
        """Wait for the idle workers' cold starts (raise the first import error)."""
        with self._lock:
            free = list(self._free)
        for worker in free:
            try:
                worker.ready()
            except BaseException:
                self.discard(worker)
                raise

    def acquire(self) -> Worker:
        """An idle worker, or a new one (a cold start) while under ``max_workers``, else wait; ready to invoke."""
        worker: Worker | None = None
        with self._lock:
            while worker is None:
                if self._closed:
                    raise RuntimeError("the function's workers are stopped")
                while self._free and worker is None:
                    worker = self._free.pop()
                    if not worker.alive():
                        self._everyone.discard(worker)
                        worker = None
                if worker is None:
                    if len(self._everyone) + self._starting < self._max_workers:
                        break
                    self.waiting += 1
                    try:
                        self._changed.wait()
                    finally:
                        self.waiting -= 1
            if worker is None:
                self._starting += 1
        worker = worker or self._new(reserved=True)
        try:
            worker.ready()
        except BaseException:
            self.discard(worker)
            raise
        return worker

    def release(self, worker: Worker) -> None:
        with self._lock:
            self._changed.notify()
            if not self._closed and worker.alive():
                self._free.append(worker)
                return
            self._everyone.discard(worker)
        worker.kill()

    def discard(self, worker: Worker) -> None:
        with self._lock:
            self._everyone.discard(worker)
            self._changed.notify()
        worker.kill()

    def pids(self) -> list[int]:
        with self._lock:
            return [t.pid for t in self._everyone if t.pid is not None]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            everyone, self._everyone, self._free = list(self._everyone), set(), []
            self._changed.notify_all()
        for worker in everyone:
            worker.kill()

    def _new(self, reserved: bool = False) -> Worker:
        """A new worker; ``reserved``: :meth:`acquire` took its slot (``_starting``), given back here."""
        worker: Worker | None = None
        try:
            worker = Worker(self._config())
            return worker
        finally:
            with self._lock:
                self._starting -= int(reserved)
                if worker is None:  # it failed to start: its slot is free for a waiting invocation
                    self._changed.notify()
                else:
                    self._everyone.add(worker)
                    self.cold_starts += 1


def _exception(payload: Any) -> BaseException:
    """The worker's exception: itself when the parent can unpickle it, else one of the same class name."""
    data, module, name, message, stack_trace = payload
    try:
        exception = pickle.loads(data) if data is not None else None
    except Exception:
        exception = None
    if not isinstance(exception, BaseException):
        error_class = type(name, (Exception,), {"__module__": module})
        exception = error_class(message)
    exception.remote_traceback = stack_trace  # type: ignore[attr-defined]
    return exception


# ------------------------------------------------------------------ worker side
class _Output(io.TextIOBase):
    """The worker's stdout and stderr: kept until the answer carries it to the parent."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            self._parts.append(text)
        return len(text)

    def take(self) -> str:
        with self._lock:
            text, self._parts = "".join(self._parts), []
        return text


def _payload(exc: BaseException) -> tuple[bytes | None, str, str, str, list[str]]:
    try:
        data: bytes | None = pickle.dumps(exc)
    except Exception:
        data = None
    type_name = type(exc)
    return data, type_name.__module__, type_name.__name__, str(exc), traceback.format_exception(exc)[-5:]


def _main(connection: Connection, config: WorkerConfig) -> None:
    """The worker process: environment, hooks, cold start, then one invocation per request."""
    os.environ.clear()
    os.environ.update(config.environ)
    output = _Output()  # one log, as Lambda's: stderr (warnings included) goes with stdout
    sys.stdout = sys.stderr = output  # type: ignore[assignment]

    from sam_emulator import deaths
    from sam_emulator.moto_lambda import LambdaContext, import_handler
    from sam_emulator.principal import acting_as, record_calls

    deaths.install()  # the boundary hooks, before the handler builds any client
    calls = record_calls()
    try:
        module = import_handler(Path(config.file), f"lambda_{config.logical_id}")
        handler_fn = getattr(module, config.attribute)
    except BaseException as exc:
        connection.send(("error", _payload(exc), output.take()))
        return
    calls.take()  # calls of the cold start are the role's too, but were never reported: keep it so
    connection.send(("ready", None, output.take()))
    control = deaths.PlatformControl()
    while True:
        try:
            event, context_data, cut, deadline = connection.recv()
        except (EOFError, OSError):
            return
        control.set_plan(lambda _inv, cut=cut: cut)
        lambda_context = LambdaContext(**{**context_data, "timeout_s": max(0.0, deadline - time.monotonic())})
        cpu = time.thread_time()
        response = Answer("ok")
        try:
            with (
                acting_as(config.logical_id),
                control.invocation(config.name, event, deadline - time.monotonic(), None),
            ):
                response.result = handler_fn(event, lambda_context)
        except PlatformFault as failure:  # the planned death, or a boundary past the deadline
            response = Answer("died", fault=type(failure), where=control.deaths[-1][2] if control.deaths else "?")
        except Exception as exc:
            response = Answer("error", error=_payload(exc))  # type: ignore[arg-type]
        except BaseException as exc:  # SystemExit and the like: the runtime process ends
            response = Answer("died", fault=LambdaCrashed, where=type(exc).__name__)
        response.cpu_s = time.thread_time() - cpu
        response.log, response.calls = output.take(), calls.take()
        try:
            connection.send(response)
        except Exception as exc:  # an unpicklable result: Lambda fails to serialise it too
            connection.send(Answer("error", error=_payload(TypeError(f"result not serialisable: {exc}"))))  # type: ignore[arg-type]
        if response.kind == "died":
            os._exit(1)  # the environment is gone: the next invocation gets a new one
