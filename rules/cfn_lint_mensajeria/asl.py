"""Step Functions definitions (ASL) as the rules need them: load, walk, check structure.

cfn-lint checks the structure of an ASL document only on a native
``AWS::StepFunctions::StateMachine`` (rule E3601), never on a SAM state machine's
``DefinitionUri`` file, and it never checks that ``Next`` targets exist or that every
state is reachable. This module does both, standalone (no project imports), so any
project — or a local runner — can call it::

    from cfn_lint_mensajeria import asl
    problems = asl.structure_problems(asl.load_file("statemachines/x.asl.json"))
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from template_model.asl import AslLoadError, State, definition_of, load_file, state_machines, walk

from cfn_lint_mensajeria.recursos import (
    STATE_MACHINES,
    base_dir,
    definition_path,
    resources,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

TERMINAL_TYPES = ("Succeed", "Fail")
# A Lambda task whose retrier lists only these errors is retried before the function's
# code ran: such retries never reach the function's dependency.
LAMBDA_SERVICE_ERRORS = frozenset(
    {
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
        "Lambda.TooManyRequestsException",
        "Lambda.ClientExecutionTimeoutException",
    }
)


# Reading a definition is the template model's (one reader, issue 40); the checks below are the pack's.
Estado = State
__all__ = [
    "AslLoadError",
    "Estado",
    "definition_of",
    "load_file",
    "readable_definitions",
    "retriers",
    "schema_problems",
    "state_machines",
    "structure_problems",
    "walk",
]


def readable_definitions(cfn: Any) -> Iterator[tuple[str, dict, list[str | int]]]:
    """(logical id, definition, RuleMatch path) for every state machine whose definition could be read."""
    machines = resources(cfn.template, *STATE_MACHINES)
    for mid, definition, _ in state_machines(cfn.template, base_dir(cfn)):
        if definition is not None:
            yield mid, definition, definition_path(mid, machines[mid])


def _targets(body: dict) -> list[tuple[str, Any]]:
    """(field, target name) pairs a state can transition to."""
    out = [("Next", body["Next"])] if "Next" in body else []
    if "Default" in body:
        out.append(("Default", body["Default"]))
    for i, choice in enumerate(body.get("Choices") or []):
        if isinstance(choice, dict) and "Next" in choice:
            out.append((f"Choices[{i}].Next", choice["Next"]))
    for i, catcher in enumerate(body.get("Catch") or []):
        if isinstance(catcher, dict) and "Next" in catcher:
            out.append((f"Catch[{i}].Next", catcher["Next"]))
    return out


def _scope_problems(definition: dict, where: str) -> list[str]:
    """Problems inside one States block (targets, reachability, dead ends)."""
    states = definition.get("States")
    if not isinstance(states, dict) or not states:
        return [f"{where}: no States"]
    problems = []
    start = definition.get("StartAt")
    if start not in states:
        problems.append(f"{where}: StartAt '{start}' is not a state")
    for name, body in states.items():
        if not isinstance(body, dict):
            continue
        for fieldname, target in _targets(body):
            if target not in states:
                problems.append(f"{where}{name}: {fieldname} '{target}' is not a state in this scope")
        stype = body.get("Type")
        if stype not in (*TERMINAL_TYPES, "Choice") and not body.get("End") and "Next" not in body:
            problems.append(f"{where}{name}: neither Next nor End")
    seen, todo = set(), [start] if start in states else []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(t for _, t in _targets(states[name]) if t in states and t not in seen)
    problems.extend(f"{where}{name}: unreachable from StartAt" for name in states if name not in seen)
    return problems


def structure_problems(definition: dict) -> list[str]:
    """Missing targets, dead ends and unreachable states, in every scope of a definition."""
    problems = _scope_problems(definition, "")
    for estado in walk(definition):
        for i, branch in enumerate(estado.body.get("Branches") or []):
            if isinstance(branch, dict):
                problems.extend(_scope_problems(branch, f"{estado.label}[{i}]/"))
        processor = estado.body.get("ItemProcessor") or estado.body.get("Iterator")
        if isinstance(processor, dict):
            problems.extend(_scope_problems(processor, f"{estado.label}/"))
    return problems


@functools.cache
def _default_rules():
    from cfnlint.core import get_rules

    return get_rules([], [], [])


def schema_problems(definition: dict) -> list[str]:
    """cfn-lint's own ASL checks (E3601), run by wrapping the definition in a native
    ``AWS::StepFunctions::StateMachine`` — the only place cfn-lint applies them.

    cfn-lint 1.58's schema reads ``QueryLanguage`` only at the top of a definition: in a JSONPath
    definition it holds a state with its own ``QueryLanguage: JSONata`` to the JSONPath forms (a
    ``Wait``'s ``"Seconds": "{% ... %}"`` is "not of type 'number'"). Such a state is checked alone,
    in a JSONata definition, and what the whole definition's check says inside it is replaced by that.
    """
    propios = {
        _schema_path(e): e.body
        for e in walk(definition)
        if e.body.get("QueryLanguage") == "JSONata" and definition.get("QueryLanguage") != "JSONata"
    }
    problems = [
        p for p in _schema_check(definition) if not any(p.startswith((f"{ruta}/", f"{ruta}:")) for ruta in propios)
    ]
    for ruta, body in propios.items():
        solo = {"QueryLanguage": "JSONata", "StartAt": "S", "States": {"S": body}}
        problems.extend(ruta + p.removeprefix("States/S") for p in _schema_check(solo))
    return problems


def _schema_path(estado: Estado) -> str:
    """Where a state sits in a definition, as cfn-lint's E3601 paths spell it (Map: ItemProcessor)."""
    partes = []
    for nombre in estado.scope:
        base, corchete, indice = nombre.partition("[")
        partes += ["States", base, "Branches", indice.rstrip("]")] if corchete else ["States", nombre, "ItemProcessor"]
    return "/".join([*partes, "States", estado.name])


def _schema_check(definition: dict) -> list[str]:
    from cfnlint.api import lint

    wrapper = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {"RoleArn": "arn:aws:iam::123456789012:role/asl-check", "Definition": definition},
            }
        },
    }
    matches = lint(json.dumps(wrapper), rules=_default_rules())
    return [f"{'/'.join(map(str, m.path[4:]))}: {m.message}" for m in matches if m.rule.id == "E3601"]


def retriers(definition: dict) -> Iterator[tuple[Estado, int, dict]]:
    """(state, index, retrier) for every Retry entry in the definition."""
    for estado in walk(definition):
        for i, retrier in enumerate(estado.body.get("Retry") or []):
            if isinstance(retrier, dict):
                yield estado, i, retrier
