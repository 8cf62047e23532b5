"""Schedules that invoke functions (the outbox relay's), run locally at a compressed rate.

Reads ``AWS::Scheduler::Schedule`` resources, ``AWS::Events::Rule`` resources with a
``ScheduleExpression``, and SAM ``Events`` of ``Type: Schedule``/``ScheduleV2``, whose
target is a function of the template. ``rate(N unit)`` becomes a period of N units divided
by the run's time-compression factor; ``cron(...)`` expressions (the daily clean-up) are
not run locally. Each schedule calls its function from one thread with the target's
``Input``, as EventBridge Scheduler does (an invocation that overlaps the next tick is
not started twice: the next one waits).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.background import BackgroundPart, BackgroundThread

if TYPE_CHECKING:
    from sam_emulator.functions import Funcion, Funciones
    from sam_emulator.template import Plantilla

_RATE = re.compile(r"rate\((\d+)\s+(second|minute|hour|day)s?\)")
_SEGUNDOS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def periodo_s(expresion: str) -> float | None:
    """Seconds between runs of a ``rate(...)`` expression; None for ``cron``/``at``."""
    m = _RATE.fullmatch(expresion.strip())
    return int(m.group(1)) * _SEGUNDOS[m.group(2)] if m else None


@dataclass
class Programa(BackgroundPart):
    """One schedule: call ``funcion`` with ``entrada`` every ``periodo_s`` seconds."""

    nombre: str
    funcion: Funcion
    periodo_s: float
    entrada: Any = field(default_factory=dict)
    ejecuciones: int = 0
    errores: int = 0
    _hilo: BackgroundThread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # The first run is at start-up (the deployed schedule has been ticking for a while).
        self._hilo = BackgroundThread.every(f"schedule-{self.nombre}", self.periodo_s, self.disparar, immediately=True)

    def disparar(self) -> None:
        self.ejecuciones += 1
        try:
            self.funcion.invocar(self.entrada)
        except Exception:  # Scheduler retries per its policy; the next tick is the local retry
            self.errores += 1


def programas_de_plantilla(
    plantilla: Plantilla, funciones: Funciones, compresion: float = 1.0, periodo_min_s: float = 0.2
) -> list[Programa]:
    """Every rate schedule whose target is one of the template's functions."""
    programas = []
    for lid, expresion, destino in _horarios(plantilla):
        periodo = periodo_s(expresion)
        if periodo is None:
            continue
        try:
            funcion = funciones.por_nombre(destino["Arn"])
        except KeyError:
            continue
        entrada = json.loads(destino["Input"]) if isinstance(destino.get("Input"), str) else destino.get("Input", {})
        programas.append(Programa(lid, funcion, max(periodo_min_s, periodo / compresion), entrada))
    return programas


def _horarios(plantilla: Plantilla) -> list[tuple[str, str, dict[str, Any]]]:
    horarios = []
    for lid in plantilla.de_tipo("AWS::Scheduler::Schedule"):
        props = plantilla.propiedades(lid)
        horarios.append((lid, props["ScheduleExpression"], props["Target"]))
    for lid in plantilla.de_tipo("AWS::Events::Rule"):
        props = plantilla.propiedades(lid)
        if "ScheduleExpression" in props:
            horarios.extend((lid, props["ScheduleExpression"], t) for t in props.get("Targets", []))
    for lid, recurso in plantilla.de_tipo("AWS::Serverless::Function").items():
        for nombre, evento in plantilla.resolver(recurso.get("Properties", {}).get("Events", {})).items():
            if evento.get("Type") in ("Schedule", "ScheduleV2"):
                props = evento["Properties"]
                destino = {"Arn": plantilla.get_att(lid, "Arn"), "Input": props.get("Input", "{}")}
                horarios.append((f"{lid}.{nombre}", props.get("Schedule") or props["ScheduleExpression"], destino))
    return horarios
