"""The bridge to the evaluator: one Node process running ``iam-simulate/evaluar.mjs`` (``@cloud-copilot/iam-simulate``).

A run asks for thousands of decisions; Node starts once per process and answers batches over a pipe
(one JSON line each way), so a decision costs a fraction of a millisecond. Policies are sent once,
under a name derived from their content (two documents never share a name), and queries refer to them.

The package is installed by ``make iam-evaluator`` (``npm ci`` in ``iam-simulate/``, from its
``package-lock.json``); without Node or without that install, :class:`EvaluadorNoDisponibleError`
says what to run. docs/decisions/0111-iam-evaluator.md says why the evaluator is iam-simulate.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["CARPETA", "EvaluadorNoDisponibleError", "Simulador", "compartido", "nombre_de_politica"]

CARPETA = Path(__file__).resolve().parent / "iam-simulate"
_PAQUETE = "@cloud-copilot/iam-simulate"
_INSTALAR = (
    "run `make iam-evaluator` (npm ci in tools/levels/least_privilege/iam-simulate); it needs Node.js 18+ and npm "
    "(Debian: `apt-get install nodejs npm` as root; elsewhere https://nodejs.org)"
)


class EvaluadorNoDisponibleError(RuntimeError):
    """Node, or the pinned iam-simulate, is not installed: the check cannot run (it never passes unevaluated)."""


def nombre_de_politica(etiqueta: str, documento: Mapping[str, Any]) -> str:
    """``etiqueta`` plus a digest of the document: the name a policy is known by in the evaluator."""
    digest = hashlib.sha256(json.dumps(documento, sort_keys=True).encode()).hexdigest()[:16]
    return f"{etiqueta}#{digest}"


def _version_fijada() -> str:
    bloqueo = json.loads((CARPETA / "package-lock.json").read_text(encoding="utf-8"))
    return bloqueo["packages"][f"node_modules/{_PAQUETE}"]["version"]


def _version_instalada() -> str | None:
    paquete = CARPETA / "node_modules" / _PAQUETE / "package.json"
    return json.loads(paquete.read_text(encoding="utf-8"))["version"] if paquete.is_file() else None


class Simulador:
    """One evaluator process; thread-safe (one batch at a time), restarted if it died."""

    def __init__(self) -> None:
        self._proceso: subprocess.Popen[str] | None = None
        self._enviadas: set[str] = set()
        self._cerrojo = threading.Lock()

    def _arrancar(self) -> subprocess.Popen[str]:
        node = shutil.which("node")
        if node is None:
            raise EvaluadorNoDisponibleError(f"Node.js is not on PATH: {_INSTALAR}")
        instalada, fijada = _version_instalada(), _version_fijada()
        if instalada != fijada:
            raise EvaluadorNoDisponibleError(f"{_PAQUETE} {fijada} is not installed (found {instalada}): {_INSTALAR}")
        self._enviadas.clear()
        return subprocess.Popen(
            [node, str(CARPETA / "evaluar.mjs")],
            cwd=CARPETA,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def _intercambiar(self, mensaje: dict[str, Any]) -> dict[str, Any]:
        if self._proceso is None or self._proceso.poll() is not None:
            self._proceso = self._arrancar()
        assert self._proceso.stdin is not None and self._proceso.stdout is not None
        self._proceso.stdin.write(json.dumps(mensaje) + "\n")
        self._proceso.stdin.flush()
        linea = self._proceso.stdout.readline()
        if not linea:
            codigo = self._proceso.wait()
            self._proceso = None
            raise RuntimeError(f"the IAM evaluator (node {CARPETA / 'evaluar.mjs'}) exited with code {codigo}")
        respuesta = json.loads(linea)
        if "fallo" in respuesta:
            raise RuntimeError(f"the IAM evaluator failed: {respuesta['fallo']}")
        return respuesta

    def evaluar(
        self,
        identidad: Mapping[str, Mapping[str, Any]],
        recurso: Mapping[str, Mapping[str, Any]],
        consultas: Sequence[Mapping[str, Any]],
    ) -> list[dict[str, Any]]:
        """Register the policies not sent yet (by name), then answer ``consultas`` in order."""
        with self._cerrojo:
            if self._proceso is None or self._proceso.poll() is not None:
                self._proceso = self._arrancar()
            nuevas_i = {n: d for n, d in identidad.items() if n not in self._enviadas}
            nuevas_r = {n: d for n, d in recurso.items() if n not in self._enviadas}
            if nuevas_i or nuevas_r:
                self._intercambiar({"identidad": nuevas_i, "recurso": nuevas_r})
                self._enviadas.update(nuevas_i, nuevas_r)
            if not consultas:
                return []
            return self._intercambiar({"consultas": list(consultas)})["resultados"]

    def cerrar(self) -> None:
        with self._cerrojo:
            if self._proceso is not None:
                assert self._proceso.stdin is not None
                self._proceso.stdin.close()  # Node ends when its input does
                self._proceso.wait()
                self._proceso = None

    def __enter__(self) -> Simulador:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cerrar()


_COMPARTIDO: Simulador | None = None
_COMPARTIDO_CERROJO = threading.Lock()


def compartido() -> Simulador:
    """This process's evaluator (started on first use, closed at exit)."""
    global _COMPARTIDO
    with _COMPARTIDO_CERROJO:
        if _COMPARTIDO is None:
            _COMPARTIDO = Simulador()
            atexit.register(_COMPARTIDO.cerrar)
        return _COMPARTIDO
