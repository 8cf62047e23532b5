"""The template's functions as in-process handlers, loaded the way Lambda loads them.

Each ``AWS::Serverless::Function`` becomes a :class:`Funcion`: ``functions/<CodeUri>/app.py``
imported under a unique module name with its folder first on ``sys.path``, after its
environment (``Globals`` merged with the function's own ``Environment``, resolved, then the
local run's overrides such as the stand-ins' URLs) has been put in ``os.environ``.

One process holds every function, so ``os.environ`` is shared: a variable two functions
set to different values keeps the last one loaded. Handlers read their configuration at
import (the project's rule), which is when each function's own values are in place.
"""

from __future__ import annotations

import os
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sam_emulator import deaths
from sam_emulator.moto_lambda import ContextoLambda, importar_handler
from sam_emulator.principal import acting_as

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

_IMPORTAR = threading.RLock()  # re-entered by a first invocation (which loads the module)
_PUESTAS: dict[str, str | None] = {}  # variables a cold start set -> the process's own value before


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
    invocaciones: int = 0
    errores: int = 0
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
            with acting_as(self.logical_id), deaths.CONTROL.invocacion(
                self.nombre, evento, self.timeout_s, self.concurrencia_reservada
            ):
                return self.manejador(evento, contexto)
        except Exception:
            with self._contador:
                self.errores += 1
            raise


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
