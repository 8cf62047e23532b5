"""One process per function: Lambda's execution environments as worker processes.

In Lambda each function runs in execution environments of its own: its own process, its own
environment variables, its own imported handler (a cold start per environment), one invocation
at a time per environment, and a timeout that stops the process. :class:`WorkerPool` gives a
:class:`~sam_emulator.functions.Funcion` exactly that:

- a :class:`Worker` is one process (``multiprocessing``'s *forkserver*: a clean server process
  forks each worker, so nothing of the parent's threads, locks or moto state is inherited, and
  the heavy SDK imports listed in :data:`PRELOAD` are paid once instead of per cold start);
- its ``os.environ`` is the parent's at the worker's start plus the function's variables (two
  functions may give one variable different values; neither sees the other's);
- it imports the handler once (the cold start, reported by :attr:`Worker.cold_start_s`) and
  serves one invocation at a time; the pool starts another worker when every one is busy;
- past the invocation's deadline the parent kills the worker (SIGKILL): a handler stuck in pure
  code or on a socket is stopped, as Lambda stops it; a worker that dies is replaced by a new
  one (and a new cold start) on the next invocation.

What stays in the parent: admission (throttling, the chaos plan's decision, the record of
deaths: :data:`sam_emulator.deaths.CONTROL`), moto, the event sources and the HTTP stand-ins.
The planned death (a :class:`~sam_emulator.deaths.Corte`) travels with the request; the worker's
own boundary hooks apply it and the worker then exits, its environment gone as on AWS.

What comes back with each answer, besides the result or the error:

- what the handler wrote on stdout or stderr (both are the function's log in Lambda: Python's
  warnings too), written to the parent's ``sys.stdout``, where
  :class:`~sam_emulator.log_capture.CapturaSalida` reads logs and EMF metrics as CloudWatch
  would; a killed worker's output of that invocation is lost;
- every AWS call the worker made (:class:`~sam_emulator.principal.AwsCall`), which
  :class:`~sam_emulator.functions.Funcion` hands to :func:`sam_emulator.principal.report_call`
  under the function's name (an IAM request recorder listens there).

Cost, and why :class:`~sam_emulator.runtime.RuntimeLocal` uses workers only with
``SAM_EMULATOR_WORKERS=1`` for now: handlers import little (about 50 ms of CPU) but build their
clients, loggers and connections on first use, once per worker instead of once per process; a
worker holds about 70 MB; and a run keeps as many workers per function as it had concurrent
invocations. The e2e ``normal`` scenario (20 orders) peaked at about 40 workers and 2.9 GB, and
on two shared cores took about twice as long: 63-75 s with workers, 31-35 s in process (three
interleaved pairs at load 3-6; one in-process outlier at 63 s). The ``viernes`` demo passed
with workers. The next step to make workers the default is to make
a new worker cheaper (fork each one from a per-function process that has done the lazy
initialisation without any connection open, or cap the pool and queue invocations).

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

    from sam_emulator.deaths import Corte
    from sam_emulator.principal import AwsCall

__all__ = ["PRELOAD", "Answer", "Worker", "WorkerConfig", "WorkerLost", "WorkerPool"]

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

_CONTEXT: Any = None
_CONTEXT_LOCK = threading.Lock()


def _context() -> Any:
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            contexto = multiprocessing.get_context("forkserver")
            contexto.set_forkserver_preload(PRELOAD)
            _CONTEXT = contexto
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
        contexto = _context()
        self.config = config
        self._conexion, hijo = contexto.Pipe()
        self.proceso = contexto.Process(
            target=_main, args=(hijo, config), daemon=True, name=f"lambda-{config.logical_id}"
        )
        self._inicio = time.monotonic()
        self.proceso.start()
        hijo.close()
        self.cold_start_s: float | None = None

    @property
    def pid(self) -> int | None:
        return self.proceso.pid

    def ready(self) -> None:
        """Wait for the cold start to end (once); its output goes to ``sys.stdout``. Raise its import error."""
        if self.cold_start_s is not None:
            return
        if not self._conexion.poll(COLD_START_LIMIT_S):
            self.kill()
            raise WorkerLost(LambdaCrashed, "init (cold start too long)")
        try:
            tipo, carga, log = self._conexion.recv()
        except (EOFError, OSError):
            self.kill()
            raise WorkerLost(LambdaCrashed, "init") from None
        self.cold_start_s = time.monotonic() - self._inicio
        if log:
            sys.stdout.write(log)
        if tipo == "error":
            self.kill()
            raise _excepcion(carga)

    def invoke(self, event: Any, context: dict[str, Any], corte: Corte | None, deadline: float) -> Answer:
        """Run one invocation; past ``deadline`` (``time.monotonic()``, shared by every process) kill the worker."""
        try:
            self._conexion.send((event, context, corte, deadline))
        except (OSError, ValueError) as error:  # broken pipe: the worker died between invocations
            self.kill()
            raise WorkerLost(LambdaCrashed, "send") from error
        if not self._conexion.poll(max(0.0, deadline - time.monotonic())):
            self.kill()
            raise WorkerLost(LambdaTimeout, "timeout (killed)")
        try:
            respuesta: Answer = self._conexion.recv()
        except (EOFError, OSError):
            self.kill()
            raise WorkerLost(LambdaCrashed, "process exited") from None
        if respuesta.kind == "error":
            respuesta.error = _excepcion(respuesta.error)
        return respuesta

    def alive(self) -> bool:
        return self.proceso.is_alive()

    def kill(self) -> None:
        """SIGKILL, as Lambda stops an environment: no cleanup runs in it."""
        if self.proceso.pid is not None and self.proceso.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proceso.pid, signal.SIGKILL)
        self.proceso.join(timeout=10)
        self._conexion.close()


class WorkerPool:
    """A function's execution environments: idle workers are reused, a new one starts when all are busy."""

    def __init__(self, config: Callable[[], WorkerConfig]) -> None:
        self._config = config
        self._libres: list[Worker] = []
        self._todos: set[Worker] = set()
        self._cerrojo = threading.Lock()
        self._cerrado = False
        self.cold_starts = 0

    def warm(self) -> Worker:
        """Start one worker now, idle (wait for its cold start with :meth:`Worker.ready`)."""
        trabajador = self._nuevo()
        with self._cerrojo:
            self._libres.append(trabajador)
        return trabajador

    def ready_all(self) -> None:
        """Wait for the idle workers' cold starts (raise the first import error)."""
        with self._cerrojo:
            libres = list(self._libres)
        for trabajador in libres:
            try:
                trabajador.ready()
            except BaseException:
                self.discard(trabajador)
                raise

    def acquire(self) -> Worker:
        """An idle worker, or a new one (a cold start); ready to invoke."""
        trabajador: Worker | None = None
        with self._cerrojo:
            if self._cerrado:
                raise RuntimeError("the function's workers are stopped")
            while self._libres and trabajador is None:
                trabajador = self._libres.pop()
                if not trabajador.alive():
                    self._todos.discard(trabajador)
                    trabajador = None
        trabajador = trabajador or self._nuevo()
        try:
            trabajador.ready()
        except BaseException:
            self.discard(trabajador)
            raise
        return trabajador

    def release(self, worker: Worker) -> None:
        with self._cerrojo:
            if not self._cerrado and worker.alive():
                self._libres.append(worker)
                return
            self._todos.discard(worker)
        worker.kill()

    def discard(self, worker: Worker) -> None:
        with self._cerrojo:
            self._todos.discard(worker)
        worker.kill()

    def pids(self) -> list[int]:
        with self._cerrojo:
            return [t.pid for t in self._todos if t.pid is not None]

    def close(self) -> None:
        with self._cerrojo:
            self._cerrado = True
            todos, self._todos, self._libres = list(self._todos), set(), []
        for trabajador in todos:
            trabajador.kill()

    def _nuevo(self) -> Worker:
        trabajador = Worker(self._config())
        with self._cerrojo:
            self._todos.add(trabajador)
            self.cold_starts += 1
        return trabajador


def _excepcion(carga: Any) -> BaseException:
    """The worker's exception: itself when the parent can unpickle it, else one of the same class name."""
    datos, modulo, nombre, mensaje, pila = carga
    try:
        excepcion = pickle.loads(datos) if datos is not None else None
    except Exception:
        excepcion = None
    if not isinstance(excepcion, BaseException):
        clase = type(nombre, (Exception,), {"__module__": modulo})
        excepcion = clase(mensaje)
    excepcion.remote_traceback = pila  # type: ignore[attr-defined]
    return excepcion


# ------------------------------------------------------------------ worker side
class _Salida(io.TextIOBase):
    """The worker's stdout and stderr: kept until the answer carries it to the parent."""

    def __init__(self) -> None:
        self._partes: list[str] = []
        self._cerrojo = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, texto: str) -> int:
        with self._cerrojo:
            self._partes.append(texto)
        return len(texto)

    def tomar(self) -> str:
        with self._cerrojo:
            texto, self._partes = "".join(self._partes), []
        return texto


def _carga(exc: BaseException) -> tuple[bytes | None, str, str, str, list[str]]:
    try:
        datos: bytes | None = pickle.dumps(exc)
    except Exception:
        datos = None
    tipo = type(exc)
    return datos, tipo.__module__, tipo.__name__, str(exc), traceback.format_exception(exc)[-5:]


def _main(conexion: Connection, config: WorkerConfig) -> None:
    """The worker process: environment, hooks, cold start, then one invocation per request."""
    os.environ.clear()
    os.environ.update(config.environ)
    salida = _Salida()  # one log, as Lambda's: stderr (warnings included) goes with stdout
    sys.stdout = sys.stderr = salida  # type: ignore[assignment]

    from sam_emulator import deaths
    from sam_emulator.moto_lambda import ContextoLambda, importar_handler
    from sam_emulator.principal import acting_as, record_calls

    deaths.instalar()  # the boundary hooks, before the handler builds any client
    llamadas = record_calls()
    try:
        modulo = importar_handler(Path(config.file), f"lambda_{config.logical_id}")
        manejador = getattr(modulo, config.attribute)
    except BaseException as exc:
        conexion.send(("error", _carga(exc), salida.tomar()))
        return
    llamadas.take()  # calls of the cold start are the role's too, but were never reported: keep it so
    conexion.send(("ready", None, salida.tomar()))
    control = deaths.ControlPlataforma()
    while True:
        try:
            evento, datos_contexto, corte, plazo = conexion.recv()
        except (EOFError, OSError):
            return
        control.planificar(lambda _inv, corte=corte: corte)
        contexto = ContextoLambda(**{**datos_contexto, "timeout_s": max(0.0, plazo - time.monotonic())})
        cpu = time.thread_time()
        respuesta = Answer("ok")
        try:
            with acting_as(config.logical_id), control.invocacion(config.name, evento, plazo - time.monotonic(), None):
                respuesta.result = manejador(evento, contexto)
        except PlatformFault as fallo:  # the planned death, or a boundary past the deadline
            respuesta = Answer("died", fault=type(fallo), where=control.muertes[-1][2] if control.muertes else "?")
        except Exception as exc:
            respuesta = Answer("error", error=_carga(exc))  # type: ignore[arg-type]
        except BaseException as exc:  # SystemExit and the like: the runtime process ends
            respuesta = Answer("died", fault=LambdaCrashed, where=type(exc).__name__)
        respuesta.cpu_s = time.thread_time() - cpu
        respuesta.log, respuesta.calls = salida.tomar(), llamadas.take()
        try:
            conexion.send(respuesta)
        except Exception as exc:  # an unpicklable result: Lambda fails to serialise it too
            conexion.send(Answer("error", error=_carga(TypeError(f"result not serialisable: {exc}"))))  # type: ignore[arg-type]
        if respuesta.kind == "died":
            os._exit(1)  # the environment is gone: the next invocation gets a new one
