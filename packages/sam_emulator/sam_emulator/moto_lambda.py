"""moto's Lambda running an application's real handlers, in this process.

Why it exists: moto's Step Functions interpreter runs Lambda tasks through moto's Lambda,
which wants Docker; with ``{"lambda": {"use_docker": False}}`` it only echoes the payload.
While :func:`en_proceso` is active, invoking a function whose *name* was registered runs the
registered handler here instead, with Lambda's contract:

- the event is the invoke payload (JSON), the context a small :class:`ContextoLambda`;
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

    with en_proceso({"my-function": app.lambda_handler}) as registro:
        ...  # start executions; registro.invocaciones["my-function"] counts calls
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

    Manejador = Callable[[Any, Any], Any]


def importar_handler(archivo: Path, nombre: str) -> ModuleType:
    """Import a handler file as Lambda's runtime does: a fresh module (a cold start), its folder first on ``sys.path``.

    ``nombre`` must be unique per load, so several functions' ``app`` modules (and several cold
    starts of one) coexist. The one loader the local run and the tests share.
    """
    spec = importlib.util.spec_from_file_location(nombre, archivo)
    if spec is None or spec.loader is None:
        raise ImportError(f"no handler module at {archivo}")
    modulo = importlib.util.module_from_spec(spec)
    sys.modules[nombre] = modulo
    if str(archivo.parent) not in sys.path:
        sys.path.insert(0, str(archivo.parent))  # the function's own modules (functions/<name>/*.py)
    spec.loader.exec_module(modulo)
    return modulo


@dataclass
class ContextoLambda:
    """What handlers read from Lambda's context object (remaining time counts down from the timeout)."""

    function_name: str
    invoked_function_arn: str
    timeout_s: float = 30.0
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    # Seconds; tests pass their injected clock so "time left" moves only when the test moves it.
    reloj: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    _inicio: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._inicio = self.reloj()

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_s - (self.reloj() - self._inicio)) * 1000))

    def otra_invocacion(self) -> ContextoLambda:
        """The context of the next invocation of the same function: a new request id, the full timeout again."""
        return ContextoLambda(
            self.function_name, self.invoked_function_arn, self.timeout_s, self.memory_limit_in_mb, reloj=self.reloj
        )


@dataclass
class Registro:
    """Registered handlers and what happened to them (thread-safe: Map states invoke in parallel)."""

    manejadores: dict[str, Manejador] = field(default_factory=dict)
    invocaciones: Counter[str] = field(default_factory=Counter)
    errores: Counter[str] = field(default_factory=Counter)
    eventos: list[tuple[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def registrar(self, nombre_funcion: str, manejador: Manejador) -> None:
        with self._lock:
            self.manejadores[nombre_funcion] = manejador

    def manejador(self, nombre_funcion: str) -> Manejador | None:
        with self._lock:
            return self.manejadores.get(nombre_funcion)

    def invocar(self, funcion: Any, evento: Any) -> tuple[str, bool, str]:
        """Run the handler registered for moto's ``funcion`` the way Lambda would."""
        nombre = funcion.function_name
        manejador = self.manejador(nombre)
        assert manejador is not None, nombre
        contexto = ContextoLambda(nombre, funcion.function_arn, float(funcion.timeout or 30))
        with self._lock:
            self.invocaciones[nombre] += 1
            self.eventos.append((nombre, evento))
        try:
            resultado = manejador(evento, contexto)
        except Exception as exc:
            with self._lock:
                self.errores[nombre] += 1
            # Platform faults (sam_emulator.platform_faults) carry AWS's own error name.
            tipo = getattr(exc, "error_type", None) or type(exc).__name__
            error = {
                "errorType": tipo,
                "errorMessage": str(exc),
                "requestId": contexto.aws_request_id,
                "stackTrace": traceback.format_exception(exc)[-5:],
            }
            return json.dumps(error), True, f"{tipo}: {exc}"
        return json.dumps(resultado, default=str), False, ""


_ACTIVO: Registro | None = None
_LOCK = threading.Lock()


@contextmanager
def en_proceso(manejadores: Mapping[str, Manejador] | None = None) -> Iterator[Registro]:
    """Run the given handlers (function name -> ``handler(event, context)``) for moto's invokes.

    Not re-entrant: one registry at a time (a second activation raises), so two tests or
    two local runs in one process cannot silently share handlers.
    """
    global _ACTIVO
    from moto.awslambda.models import LambdaBackend

    registro = Registro()
    for nombre, manejador in (manejadores or {}).items():
        registro.registrar(nombre, manejador)
    with _LOCK:
        if _ACTIVO is not None:
            raise RuntimeError("moto_lambda.en_proceso is already active in this process")
        _ACTIVO = registro

    def invoke_lambda(original: Any, funcion: Any, event: Any) -> tuple[str, bool, str]:
        if registro.manejador(funcion.function_name) is None:
            return original(funcion, event)
        return registro.invocar(funcion, event)

    def invoke_simple(original: Any, backend: Any, function_name: str, qualifier: str | None, *args: Any) -> Any:
        funcion = backend.get_function(function_name, qualifier)
        if registro.manejador(funcion.function_name) is None:
            return original(backend, function_name, qualifier, *args)
        return LambdaBackend.invoke(backend, function_name, qualifier, *args)

    try:
        with lambda_invoke_patches(invoke_lambda, invoke_simple):
            yield registro
    finally:
        with _LOCK:
            _ACTIVO = None
