"""The template's time bounds: each function's Timeout and idempotency lease, each workflow's limits.

Read as the template writes them (rule E9114 of the rule pack checks how they relate): a function's
``Timeout`` (with ``Globals``, from ``Mappings`` when written as ``!FindInMap``) and its
``IDEMPOTENCY_LEASE_S`` variable; a state machine's ``TimeoutSeconds``, its ``Wait`` seconds (a JSONata
``"{% ${X} %}"`` reads the ``DefinitionSubstitutions`` value ``X``) and what its ``Metadata`` says they
relate to (``Mensajeria.Tiempos``: ``Reclamo``, ``EsperasTrasBloqueo``); a durable function's
``DurableConfig.ExecutionTimeout`` and the environment variables its ``Metadata`` names the same way (the
saga's claim lease and re-ask waits live in the function, decision 0140). Every bound a relation ties is
declared once in a ``Mappings`` entry, ``Plazos`` in this project (:data:`BOUNDS_MAPPING`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from template_model.asl import definition_of, walk
from template_model.wiring import (
    FUNCTIONS,
    STATE_MACHINES,
    as_int,
    find_in_map,
    function_env,
    function_props,
    function_timeout_s,
    props,
    resources,
)

LEASE_VARIABLE = "IDEMPOTENCY_LEASE_S"
BOUNDS_MAPPING = "Plazos"  # the Mappings entry that declares every bound (its stored name)
# The Metadata a state machine declares its relations under (stored names, read as written).
METADATA_KEY, BOUNDS_KEY, CLAIM_KEY, WAITS_KEY = "Mensajeria", "Tiempos", "Reclamo", "EsperasTrasBloqueo"
DURABLE_CONFIG, EXECUTION_TIMEOUT_KEY = "DurableConfig", "ExecutionTimeout"
# A JSONata Seconds that is one DefinitionSubstitutions placeholder: "{% ${EsperarFinBloqueoS} %}"
SUBSTITUTION = re.compile(r"^\{%\s*\$\{(\w+)\}\s*%\}$")


@dataclass(frozen=True)
class WorkflowBounds:
    """One state machine's bounds: its TimeoutSeconds, its Waits and what they relate to."""

    timeout_s: int | None
    waits_s: dict[str, int | None]
    claim_function: str | None = None  # the function whose lease must outlive TimeoutSeconds
    waits_after_lease: dict[str, str] = field(default_factory=dict)  # Wait -> the function it asks again
    # Waits whose Seconds is a substitution placeholder: Wait -> the DefinitionSubstitutions value as written
    substituted_waits: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DurableBounds:
    """A durable function's saga: its execution's bound and the variables it claims and waits with."""

    timeout_s: int | None  # DurableConfig.ExecutionTimeout
    claim_variable: str | None  # the variable holding the order claim's lease (Tiempos.Reclamo)
    claim_lease_s: int | None
    waits_s: dict[str, int | None]  # re-ask wait variable -> seconds
    waits_after_lease: dict[str, str]  # re-ask wait variable -> the function whose lease it must outlast
    written: dict[str, Any]  # ExecutionTimeout and each variable named, as the template writes them


@dataclass(frozen=True)
class TimeBounds:
    """Every bound of a template, by logical id."""

    timeouts_s: dict[str, int]
    leases_s: dict[str, int]
    workflows: dict[str, WorkflowBounds]
    declared: dict[str, dict[str, Any]] = field(default_factory=dict)  # the bounds mapping as written
    # bounded functions whose Timeout or lease is written outside the bounds mapping: id -> property names
    literals: dict[str, list[str]] = field(default_factory=dict)
    durables: dict[str, DurableBounds] = field(default_factory=dict)


def time_bounds(template: dict, base_dir: str | Path) -> TimeBounds:
    """Read the bounds of a decoded template (``base_dir``: where ``DefinitionUri`` paths are relative to)."""
    timeouts, leases, literals = {}, {}, {}
    for fid in resources(template, *FUNCTIONS):
        if (timeout := function_timeout_s(template, fid)) is not None:
            timeouts[fid] = timeout
        env = function_env(template, fid)
        if LEASE_VARIABLE in env:  # bounded, even when its lease is not a number here (a parameter: a literal)
            if (lease := as_int(env[LEASE_VARIABLE])) is not None:
                leases[fid] = lease
            p = function_props(template, fid) or {}
            variables = (p.get("Environment") or {}).get("Variables") or {}
            written = {"Timeout": p.get("Timeout"), LEASE_VARIABLE: variables.get(LEASE_VARIABLE)}
            if outside := [name for name, value in written.items() if not from_bounds_mapping(value)]:
                literals[fid] = outside
    declared = (template.get("Mappings") or {}).get(BOUNDS_MAPPING) or {}
    declared = declared if isinstance(declared, dict) else {}
    workflows = {}
    for mid, res in resources(template, *STATE_MACHINES).items():
        definition, _ = definition_of(res, Path(base_dir))
        if definition is None:
            continue
        substitutions = props(res).get("DefinitionSubstitutions") or {}
        waits, substituted = {}, {}
        for state in walk(definition):
            if state.body.get("Type") != "Wait" or "Seconds" not in state.body:
                continue
            seconds = state.body["Seconds"]
            if isinstance(seconds, str) and (placeholder := SUBSTITUTION.match(seconds)):
                seconds = substituted[state.name] = substitutions.get(placeholder[1])
                if from_bounds_mapping(seconds):
                    seconds = _declared(declared, seconds["Fn::FindInMap"])
            waits[state.name] = as_int(seconds)
        meta = _relations(res)
        workflows[mid] = WorkflowBounds(
            as_int(definition.get("TimeoutSeconds")),
            waits,
            meta.get(CLAIM_KEY),
            dict(meta.get(WAITS_KEY) or {}),
            substituted,
        )
    durables = {fid: d for fid, res in resources(template, *FUNCTIONS).items() if (d := _durable(template, fid, res))}
    return TimeBounds(timeouts, leases, workflows, declared, literals, durables)


def _relations(resource: dict) -> dict[str, Any]:
    """What a resource's ``Metadata.Mensajeria.Tiempos`` declares."""
    meta = ((resource.get("Metadata") or {}).get(METADATA_KEY) or {}).get(BOUNDS_KEY)
    return meta if isinstance(meta, dict) else {}


def _durable(template: dict, fid: str, resource: dict) -> DurableBounds | None:
    """A durable function's bounds (None for any other function)."""
    p = function_props(template, fid) or {}
    config = p.get(DURABLE_CONFIG)
    if not isinstance(config, dict):
        return None
    meta = _relations(resource)
    claim = meta.get(CLAIM_KEY) if isinstance(meta.get(CLAIM_KEY), str) else None
    waits = {str(k): str(v) for k, v in (meta.get(WAITS_KEY) or {}).items()}
    variables = (p.get("Environment") or {}).get("Variables") or {}
    env = function_env(template, fid)
    written = {EXECUTION_TIMEOUT_KEY: config.get(EXECUTION_TIMEOUT_KEY)}
    written |= {name: variables.get(name) for name in [*([claim] if claim else []), *waits]}
    return DurableBounds(
        as_int(find_in_map(template, config.get(EXECUTION_TIMEOUT_KEY))),
        claim,
        as_int(env.get(claim)) if claim else None,
        {name: as_int(env.get(name)) for name in waits},
        waits,
        written,
    )


def _declared(declared: dict[str, Any], keys: list[Any]) -> Any:
    """The value ``Fn::FindInMap [Plazos, id, name]`` reads, or None."""
    return (declared.get(keys[1]) or {}).get(keys[2]) if len(keys) == 3 else None


def from_bounds_mapping(value: Any) -> bool:
    """Whether a property value is a ``Fn::FindInMap`` into the bounds mapping."""
    keys = value.get("Fn::FindInMap") if isinstance(value, dict) and len(value) == 1 else None
    return isinstance(keys, list) and bool(keys) and keys[0] == BOUNDS_MAPPING
