"""A campaign split across child processes: each a whole independent session, merged into one report.

The seeds are split round-robin across N children (``mf-demo --procesos N``), each appending one
JSON line per finished seed; the parent merges them. A seed a child did not report (it crashed,
was killed, hung) is a failed seed in that report, with the command that replays it.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mercadofresco_caos.informe import ResultadoSemilla, rango
from mercadofresco_caos.juicio import Violacion
from mercadofresco_caos.local import DRENAJE_MAX_S

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

# A child that reports no seed for this long is hung (a seed is bounded by two drains plus its
# checks; a session starts in well under a minute): stopped, its seeds failed.
SIN_AVANCE_MAX_S = 4 * DRENAJE_MAX_S


def comando_hijo(
    semillas: list[int],
    pedidos: int,
    ritmo: float,
    resultados: Path,
    registro: Path,
    compresion: float | None,
    motor: str | None = None,
) -> list[str]:
    """A child of a parallel campaign: ``mf-demo`` on its share of the seeds, recording its requests (:mod:`.hijo`);
    ``motor``: the order workflow's engine (the template's WorkflowEngine; its default when None)."""
    comando = [sys.executable, "-m", "mercadofresco_caos.hijo", "--escenario", "caos"]
    comando += ["--lista-semillas", ",".join(map(str, semillas)), "--pedidos", str(pedidos), "--ritmo", f"{ritmo:g}"]
    comando += ["--resultados", str(resultados), "--registro", str(registro)]
    comando += ["--motor", motor] if motor else []
    return comando + (["--compresion", f"{compresion:g}"] if compresion else [])


@dataclass
class Hijo:
    numero: int
    semillas: list[int]
    directorio: Path
    proceso: subprocess.Popen[bytes]
    atascado: bool = False  # stopped by the campaign: no seed reported for SIN_AVANCE_MAX_S

    @property
    def resultados(self) -> Path:
        return self.directorio / "resultados.jsonl"

    @property
    def salida(self) -> Path:
        return self.directorio / "salida.log"

    def leidos(self) -> list[ResultadoSemilla]:
        if not self.resultados.exists():
            return []
        lineas = self.resultados.read_text().splitlines()
        return [ResultadoSemilla.desde_json(json.loads(linea)) for linea in lineas if linea.strip()]


def correr_en_paralelo(
    semillas: list[int],
    procesos: int,
    pedidos: int,
    ritmo: float,
    directorio: Path,
    compresion: float | None = None,
    avance: Callable[[int], None] | None = None,
    comando: Callable[..., list[str]] = comando_hijo,
) -> tuple[list[ResultadoSemilla], list[str]]:
    """The seeds split round-robin across ``procesos`` children; their results merged, in seed order.

    Returns the results and notes for the report. Every seed is in the results: one its child
    did not report (the child crashed, was killed, or could not start its session) is a failed
    seed whose violation names the child, its exit code and its output file.
    """
    avance = avance or (lambda hechas: None)
    directorio.mkdir(parents=True, exist_ok=True)
    hijos: list[Hijo] = []
    for numero in range(1, procesos + 1):
        lote = semillas[numero - 1 :: procesos]
        if not lote:
            continue
        destino = directorio / f"caos-hijo-{numero}"
        destino.mkdir(parents=True, exist_ok=True)
        (destino / "resultados.jsonl").unlink(missing_ok=True)
        with (destino / "salida.log").open("wb") as salida:  # the child keeps its own copy of the descriptor
            proceso = subprocess.Popen(
                comando(lote, pedidos, ritmo, destino / "resultados.jsonl", destino, compresion),
                stdout=salida,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        hijos.append(Hijo(numero, lote, destino, proceso))
    try:
        pendientes = list(hijos)
        avances = {h.numero: (0, time.monotonic()) for h in hijos}  # seeds reported, when the count last grew
        while pendientes:
            for h in pendientes:
                hechas, desde = avances[h.numero]
                if (ahora := len(h.leidos())) != hechas:
                    avances[h.numero] = (ahora, time.monotonic())
                elif time.monotonic() - desde > SIN_AVANCE_MAX_S:  # hung: its seeds become failures
                    h.atascado = True
                    _detener(h)
            avance(sum(n for n, _ in avances.values()))
            with contextlib.suppress(subprocess.TimeoutExpired):  # wakes at its end, or in 2 s for the progress
                pendientes[0].proceso.wait(timeout=2.0)
            pendientes = [h for h in pendientes if h.proceso.poll() is None]
    finally:
        for h in hijos:  # interrupted: children do not outlive the campaign
            _detener(h)
    resultados: dict[int, ResultadoSemilla] = {}
    notas: list[str] = []
    for h in hijos:
        codigo = h.proceso.returncode
        leidos = {r.semilla: r for r in h.leidos()}
        resultados.update(leidos)
        faltan = [s for s in h.semillas if s not in leidos]
        if codigo not in (0, 1):
            notas.append(f"proceso {h.numero} (semillas {rango(h.semillas)}) salió con código {codigo}: {h.salida}")
        for semilla in faltan:
            motivo = (
                f"detenido tras {SIN_AVANCE_MAX_S:.0f} s sin avance" if h.atascado else f"salió con código {codigo}"
            )
            detalle = f"su proceso {h.numero} {motivo} sin informarla; salida: {h.salida}"
            ultima = _ultima_linea(h.salida)
            resultados[semilla] = ResultadoSemilla(
                semilla=semilla,
                pedidos=0,
                faltas=0,
                muertes=0,
                estrangulados=0,
                violaciones=[Violacion("la semilla terminó", "-", detalle + (f" («{ultima}»)" if ultima else ""))],
                informe_invariantes=[],
                reembolsos=0,
                notas=[],
            )
    return [resultados[s] for s in semillas], notas


def _detener(hijo: Hijo) -> None:
    if hijo.proceso.poll() is not None:
        return
    hijo.proceso.send_signal(signal.SIGINT)  # as Ctrl-C: the child stops its own servers
    try:
        hijo.proceso.wait(timeout=60)
    except subprocess.TimeoutExpired:
        hijo.proceso.kill()
        hijo.proceso.wait()


def _ultima_linea(ruta: Path) -> str:
    try:
        lineas = [linea.strip() for linea in ruta.read_text(errors="replace").splitlines() if linea.strip()]
    except OSError:
        return ""
    return lineas[-1][-200:] if lineas else ""
