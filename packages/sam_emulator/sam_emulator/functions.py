"""The template's functions as in-process handlers, loaded the way Lambda loads them.

Each ``AWS::Serverless::Function`` becomes a :class:`Funcion`: ``functions/<CodeUri>/app.py``
imported under a unique module name with its folder first on ``sys.path``, after its
environment (``Globals`` merged with the function's own ``Environment``, resolved, then the
local run's overrides such as the stand-ins' URLs) has been put in ``os.environ``.

Two ways to run it:

- ``isolated=True`` (:class:`~sam_emulator.runtime.RuntimeLocal` with ``SAM_EMULATOR_WORKERS=1``): every invocation runs
  in a worker process of the function's own (:mod:`sam_emulator.workers`), as Lambda's execution
  environments: its own ``os.environ``, its own cold start, one invocation per worker, killed at
  its ``Timeout``. Admission (throttling, the chaos plan) stays in this process.
- ``isolated=False`` (the default, for tests that reach into the handler module: in-process
  ``mock_aws``, injected clocks): the handler is imported into this process. Every such function
  shares ``os.environ``: a variable two functions set to different values keeps the last one
  loaded. Handlers read their configuration at import (the project's rule), which is when each
  function's own values are in place.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sam_emulator import deaths
from sam_emulator.moto_lambda import ContextoLambda, importar_handler
from sam_emulator.principal import acting_as, report_call
from sam_emulator.workers import WorkerConfig, WorkerLost, WorkerPool

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

_IMPORTAR = threading.RLock()  # re-entered by a first invocation (which loads the module)
_PUESTAS: dict[str, str | None] = {}  # variables a cold start set -> the process's own value before
_HILO = threading.local()  # per invoking thread: the CPU seconds its last worker invocation used


def _texto(valor: object) -> str:
    return str.__str__(valor) if isinstance(valor, str) else str(valor)


def worker_cpu_s() -> float:
    """CPU seconds of the last invocation this thread ran in a worker (0 if none): ``time.thread_time`` there."""
    return float(getattr(_HILO, "cpu_s", 0.0))


def _entorno_de(entorno: dict[str, str]) -> None:
    """``os.environ`` = the process's own variables + exactly this function's (none left from another)."""
    for clave in [c for c in _PUESTAS if c not in entorno]:
        previo = _PUESTAS.pop(clave)
        if previo is None:
            os.environ.pop(clave, None)
        else:
            os.environ[clave] = previo
    for clave, valor in entorno.items():
        _PUESTAS.setdefault(clave, os.environ.get(clave))
        os.environ[clave] = valor


def restaurar_entorno() -> None:
    """``os.environ`` as the process had it before any cold start of this run set a variable."""
    _entorno_de({})


def entorno_comun(funciones: list[Funcion]) -> None:
    """After the cold starts: keep only the variables every function sets to the same value.

    Code that reads its configuration on first use rather than at import (lazy clients) then
    finds its own default instead of the value of whichever function was loaded last (the
    reclamo's 7500 s lease is not the ERP's).
    """
    comunes = {
        c: v
        for c, v in (funciones[0].entorno.items() if funciones else [])
        if all(f.entorno.get(c) == v for f in funciones)
    }
    _entorno_de(comunes)


@dataclass
class Funcion:
    """One function of the template, runnable in this process."""

    logical_id: str
    nombre: str
    codigo: Path
    handler: str = "app.lambda_handler"
    entorno: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 30.0
    memoria_mb: int = 512
    concurrencia_reservada: int | None = None  # ReservedConcurrentExecutions: beyond it, throttled
    isolated: bool = False  # each invocation in a worker process of this function (sam_emulator.workers)
    invocaciones: int = 0
    errores: int = 0
    _workers: WorkerPool | None = None
    _modulo: ModuleType | None = None
    _iniciada: bool = False  # a first invocation has completed (lazy initialisation done)
    _contador: threading.Lock = field(default_factory=threading.Lock)

    @property
    def manejador(self) -> Callable[[Any, Any], Any]:
        modulo = self.cargar()
        return getattr(modulo, self.handler.rsplit(".", 1)[1])

    def cargar(self) -> ModuleType:
        """Import the handler module once (a cold start), with this function's environment."""
        with _IMPORTAR:
            if self._modulo is None:
                _entorno_de(self.entorno)
                archivo = self.codigo / f"{self.handler.rsplit('.', 1)[0]}.py"
                nombre = f"mf_local_{self.logical_id}_{uuid.uuid4().hex[:6]}"
                self._modulo = importar_handler(archivo, nombre)
            return self._modulo

    # ------------------------------------------------------------ worker processes
    def start_workers(self) -> WorkerPool:
        """Start this function's first execution environment (its cold start runs meanwhile)."""
        with self._contador:  # pollers may invoke a function that was never started
            if self._workers is None:
                self._workers = WorkerPool(self._worker_config)
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
        return self._workers.cold_starts if self._workers is not None else int(self._modulo is not None)

    def _worker_config(self) -> WorkerConfig:
        modulo, atributo = _texto(self.handler).rsplit(".", 1)
        # this process's variables at the worker's start + the function's; plain str (the template's
        # strings are cfn-lint's str subclasses, which do not pickle)
        entorno = {_texto(c): _texto(v) for c, v in {**os.environ, **self.entorno}.items()}
        return WorkerConfig(
            logical_id=_texto(self.logical_id),
            name=_texto(self.nombre),
            file=str(self.codigo / f"{modulo}.py"),
            attribute=atributo,
            environ=entorno,
        )

    def invocar(self, evento: Any, contexto: Any = None) -> Any:
        """Call the handler as Lambda would; exceptions propagate (Lambda reports them as errors).

        Platform faults surface as :mod:`sam_emulator.platform_faults` exceptions: throttled
        beyond ``concurrencia_reservada``, ``Sandbox.Timedout`` past ``timeout_s``, ``Lambda.Unknown``
        for a planned crash (:data:`sam_emulator.deaths.CONTROL`).
        """
        contexto = contexto or ContextoLambda(
            function_name=self.nombre,
            invoked_function_arn=f"arn:aws:lambda:::function:{self.nombre}",
            timeout_s=self.timeout_s,
            memory_limit_in_mb=self.memoria_mb,
        )
        with self._contador:
            self.invocaciones += 1
        if self.isolated:
            return self._invocar(evento, contexto)
        if not self._iniciada:
            # Handlers that build their clients/configuration on first use (not at import) must read
            # THIS function's environment: first invocations run one at a time, like cold starts.
            with _IMPORTAR:
                _entorno_de(self.entorno)
                resultado = self._invocar(evento, contexto)
                self._iniciada = True
                return resultado
        return self._invocar(evento, contexto)

    def _invocar(self, evento: Any, contexto: Any) -> Any:
        try:
            # The platform's own faults (throttling, Timeout, a planned crash): see sam_emulator.deaths.
            # acting_as(): the AWS calls made inside are this function's role's (sam_emulator.principal).
            with (
                acting_as(self.logical_id),
                deaths.CONTROL.invocacion(
                    self.nombre, evento, self.timeout_s, self.concurrencia_reservada
                ) as invocacion,
            ):
                if self.isolated:
                    return self._en_worker(evento, contexto, invocacion)
                return self.manejador(evento, contexto)
        except Exception:
            with self._contador:
                self.errores += 1
            raise

    def _en_worker(self, evento: Any, contexto: Any, invocacion: deaths.Invocacion) -> Any:
        """One invocation in an idle (or new) worker; a death is marked on ``invocacion`` for CONTROL to report."""
        pool = self.start_workers()
        worker = pool.acquire()
        datos_contexto = {
            "function_name": getattr(contexto, "function_name", self.nombre),
            "invoked_function_arn": getattr(contexto, "invoked_function_arn", ""),
            "memory_limit_in_mb": getattr(contexto, "memory_limit_in_mb", self.memoria_mb),
            "aws_request_id": getattr(contexto, "aws_request_id", None) or str(uuid.uuid4()),
        }
        _HILO.cpu_s = 0.0
        try:
            respuesta = worker.invoke(evento, datos_contexto, invocacion.corte, invocacion.plazo)
        except WorkerLost as perdido:
            pool.discard(worker)
            invocacion._morir(perdido.fault, perdido.where)
            return None
        if respuesta.log:
            sys.stdout.write(respuesta.log)  # the function's log: CapturaSalida's, when the run installed it
        _HILO.cpu_s = respuesta.cpu_s
        for llamada in respuesta.calls:
            report_call(replace(llamada, principal=self.logical_id))  # the worker's calls are all this function's
        if respuesta.kind == "died":
            pool.discard(worker)
            assert respuesta.fault is not None
            invocacion._morir(respuesta.fault, respuesta.where)
            return None
        pool.release(worker)
        if respuesta.kind == "error":
            assert respuesta.error is not None
            raise respuesta.error
        return respuesta.result


@dataclass
class Funciones:
    """Every function of the template, by logical id and by physical name."""

    por_id: dict[str, Funcion] = field(default_factory=dict)

    def agregar(self, funcion: Funcion) -> None:
        self.por_id[funcion.logical_id] = funcion

    def por_nombre(self, nombre_o_arn: str) -> Funcion:
        nombre = nombre_o_arn.rsplit(":function:", 1)[-1].split(":", 1)[0]
        for funcion in self.por_id.values():
            if nombre in (funcion.nombre, funcion.logical_id):
                return funcion
        raise KeyError(f"no local function named {nombre_o_arn!r}")

    def handlers(self) -> dict[str, Callable[[Any, Any], Any]]:
        """Physical name -> a callable(event, context), for the moto Lambda patch."""
        return {f.nombre: _manejador_diferido(f) for f in self.por_id.values()}


def _manejador_diferido(funcion: Funcion) -> Callable[[Any, Any], Any]:
    def manejar(evento: Any, contexto: Any = None) -> Any:
        return funcion.invocar(evento, contexto)

    return manejar


def ruta_codigo(code_uri: str, carpeta: Path | None = None) -> Path:
    """A CodeUri resolved against the template's folder (the current directory by default)."""
    return ((carpeta or Path.cwd()) / code_uri).resolve()
