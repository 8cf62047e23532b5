"""What the handlers print, read the way CloudWatch would: logs to a file, EMF metrics counted.

In Lambda, stdout goes to CloudWatch Logs, and Powertools' EMF lines become metrics there.
Locally the handlers share the demo's process, so :class:`CapturaSalida` takes
``sys.stdout`` for the run: each JSON line with an ``_aws`` block is summed as metrics by
(name, ``dependencia`` dimension), everything else is appended to a log file, and the
report prints on the real terminal (``sys.__stdout__``). Install it before the handlers
are imported: Powertools' logger binds to the ``sys.stdout`` of its creation.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from pathlib import Path


class CapturaSalida(io.TextIOBase):
    """A thread-safe stand-in for ``sys.stdout`` that files logs and counts EMF metrics."""

    def __init__(self, registro: Path) -> None:
        self.registro = registro
        self.metricas: Counter[tuple[str, str]] = Counter()
        self.lineas_registro = 0
        self._pendiente = ""
        self._cerrojo = threading.Lock()
        self._archivo: TextIO | None = None
        self._anterior: Any = None

    def instalar(self) -> CapturaSalida:
        self.registro.parent.mkdir(parents=True, exist_ok=True)
        self._archivo = self.registro.open("w", encoding="utf-8")
        self._anterior = sys.stdout
        sys.stdout = self  # type: ignore[assignment]
        return self

    def desinstalar(self) -> None:
        if self._anterior is not None:
            sys.stdout = self._anterior
            self._anterior = None
        if self._archivo is not None:
            self._archivo.close()
            self._archivo = None

    def writable(self) -> bool:
        return True

    def write(self, texto: str) -> int:
        with self._cerrojo:
            self._pendiente += texto
            *lineas, self._pendiente = self._pendiente.split("\n")
            for linea in lineas:
                self._linea(linea)
        return len(texto)

    def flush(self) -> None:
        if self._archivo is not None:
            self._archivo.flush()

    def metrica(self, nombre: str, dependencia: str | None = None) -> float:
        """The sum of one metric (for one ``dependencia``, or over all)."""
        with self._cerrojo:
            return sum(v for (n, d), v in self.metricas.items() if n == nombre and dependencia in (None, d))

    def por_dependencia(self, nombre: str) -> dict[str, float]:
        with self._cerrojo:
            return {d: v for (n, d), v in self.metricas.items() if n == nombre}

    def _linea(self, linea: str) -> None:
        if linea.startswith("{") and '"_aws"' in linea:
            try:
                self._contar(json.loads(linea))
                return
            except ValueError:
                pass
        if self._archivo is not None and linea:
            self._archivo.write(linea + "\n")
            self.lineas_registro += 1

    def _contar(self, emf: dict[str, Any]) -> None:
        for directiva in emf["_aws"].get("CloudWatchMetrics", []):
            dimensiones = [d for grupo in directiva.get("Dimensions", []) for d in grupo]
            dependencia = str(emf.get("dependencia", "")) if "dependencia" in dimensiones else ""
            for metrica in directiva.get("Metrics", []):
                valor = emf.get(metrica["Name"], 0)
                total = sum(valor) if isinstance(valor, list) else valor
                self.metricas[(metrica["Name"], dependencia)] += float(total)
