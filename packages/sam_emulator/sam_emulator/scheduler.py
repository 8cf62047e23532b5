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
from sam_emulator.principal import AwsCall, report_service_call

if TYPE_CHECKING:
    from sam_emulator.functions import Function, Functions
    from sam_emulator.template import Template

_RATE = re.compile(r"rate\((\d+)\s+(second|minute|hour|day)s?\)")
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def period_s(expression: str) -> float | None:
    """Seconds between runs of a ``rate(...)`` expression; None for ``cron``/``at``."""
    m = _RATE.fullmatch(expression.strip())
    return int(m.group(1)) * _SECONDS[m.group(2)] if m else None


@dataclass
class Schedule(BackgroundPart):
    """One schedule: call ``function`` with ``event_input`` every ``period_s`` seconds."""

    name: str
    function: Function
    period_s: float
    event_input: Any = field(default_factory=dict)
    executions: int = 0
    errors: int = 0
    _thread: BackgroundThread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # The first run is at start-up (the deployed schedule has been ticking for a while).
        self._thread = BackgroundThread.every(f"schedule-{self.name}", self.period_s, self.fire, immediately=True)

    def fire(self) -> None:
        self.executions += 1
        # The schedule invokes its target with its own role (sam_emulator.principal).
        report_service_call(AwsCall(self.name, "lambda", "lambda", "Invoke", {"FunctionName": self.function.name}))
        try:
            self.function.invoke(self.event_input)
        except Exception:  # Scheduler retries per its policy; the next tick is the local retry
            self.errors += 1


def schedules_from_template(
    template: Template, functions: Functions, compression: float = 1.0, min_period_s: float = 0.2, unit_path: str = ""
) -> list[Schedule]:
    """Every rate schedule whose target is one of the template's functions; a unit's (``unit_path`` as
    ``Template.walk()`` gives it) acts as ``<unit>/<logical id>``, as the least-privilege check names its role."""
    schedules = []
    for lid, expression, target in _schedules(template):
        period = period_s(expression)
        if period is None:
            continue
        try:
            function = functions.by_name(target["Arn"])
        except KeyError:
            continue
        event_input = json.loads(target["Input"]) if isinstance(target.get("Input"), str) else target.get("Input", {})
        schedules.append(Schedule(f"{unit_path}{lid}", function, max(min_period_s, period / compression), event_input))
    return schedules


def _schedules(template: Template) -> list[tuple[str, str, dict[str, Any]]]:
    schedules = []
    for lid in template.of_type("AWS::Scheduler::Schedule"):
        props = template.properties(lid)
        schedules.append((lid, props["ScheduleExpression"], props["Target"]))
    for lid in template.of_type("AWS::Events::Rule"):
        props = template.properties(lid)
        if "ScheduleExpression" in props:
            schedules.extend((lid, props["ScheduleExpression"], t) for t in props.get("Targets", []))
    for lid, resource in template.of_type("AWS::Serverless::Function").items():
        for name, event in template.resolve(resource.get("Properties", {}).get("Events", {})).items():
            if event.get("Type") in ("Schedule", "ScheduleV2"):
                props = event["Properties"]
                target = {"Arn": template.get_att(lid, "Arn"), "Input": props.get("Input", "{}")}
                schedules.append((f"{lid}.{name}", props.get("Schedule") or props["ScheduleExpression"], target))
    return schedules
