"""The template's time bounds and the relations between them (rule E9114), standalone.

Each bound is declared once, where the platform reads it: a function's ``Timeout`` (with SAM
``Globals``), its idempotency lease ``IDEMPOTENCY_LEASE_S`` (environment), a state machine's
``TimeoutSeconds`` and ``Wait`` seconds (its ASL). What ties them is declared on the state machine::

    Metadata:
      Mensajeria:
        Tiempos:
          Reclamo: ReclamoFunction            # its lease must outlive the execution (TimeoutSeconds)
          EsperasTrasBloqueo:                 # each Wait must outlast the lease of the function it asks again
            EsperarFinBloqueoCobro: CobroFunction

:func:`tiempos` reads them all; :func:`problemas` lists the broken relations:

- lease > Timeout, for every function with a lease (a claim that lapses while its function still
  runs lets a second consumer repeat the side effect);
- re-ask ``Wait`` > that function's lease (asking before the lease lapsed only meets ``OperacionEnCurso``);
- claim lease > ``TimeoutSeconds`` (a live execution must never lose its order's claim).

Tests, the local run and the docs read the values from here instead of copying them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfn_lint_mensajeria.asl import definition_of, walk
from cfn_lint_mensajeria.recursos import (
    FUNCTIONS,
    STATE_MACHINES,
    as_int,
    function_env,
    function_timeout_s,
    resources,
)

ENV_LEASE = "IDEMPOTENCY_LEASE_S"


@dataclass(frozen=True)
class Flujo:
    """One state machine's bounds: its TimeoutSeconds, its Waits and what they relate to."""

    timeout_s: int | None
    esperas_s: dict[str, int]
    reclamo: str | None = None
    esperas_tras_bloqueo: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Tiempos:
    """Every bound of a template, by logical id."""

    timeouts_s: dict[str, int]
    leases_s: dict[str, int]
    flujos: dict[str, Flujo]


def tiempos(template: dict, base_dir: str | Path) -> Tiempos:
    """Read the bounds (``base_dir``: where ``DefinitionUri`` paths are relative to)."""
    timeouts, leases = {}, {}
    for fid in resources(template, *FUNCTIONS):
        if (t := function_timeout_s(template, fid)) is not None:
            timeouts[fid] = t
        if (lease := as_int(function_env(template, fid).get(ENV_LEASE))) is not None:
            leases[fid] = lease
    flujos = {}
    for mid, res in resources(template, *STATE_MACHINES).items():
        definition, _ = definition_of(res, Path(base_dir))
        if definition is None:
            continue
        esperas = {
            e.name: e.body["Seconds"] for e in walk(definition) if e.body.get("Type") == "Wait" and "Seconds" in e.body
        }
        meta = ((res.get("Metadata") or {}).get("Mensajeria") or {}).get("Tiempos") or {}
        flujos[mid] = Flujo(
            as_int(definition.get("TimeoutSeconds")),
            esperas,
            meta.get("Reclamo"),
            dict(meta.get("EsperasTrasBloqueo") or {}),
        )
    return Tiempos(timeouts, leases, flujos)


def problemas(t: Tiempos) -> list[tuple[list[Any], str]]:
    """(RuleMatch path, message) for every broken relation."""
    encontrados = []
    for fid, lease in t.leases_s.items():
        timeout = t.timeouts_s.get(fid)
        if timeout is not None and lease <= timeout:
            encontrados.append(
                (
                    ["Resources", fid, "Properties", "Timeout"],
                    f"{fid}: Timeout {timeout} s is not below its {ENV_LEASE} {lease} s: raise the lease with the "
                    f"Timeout (timeout + margin), or a claim lapses while the function still runs and a second "
                    f"consumer repeats the side effect",
                )
            )
    for mid, flujo in t.flujos.items():
        for espera, fid in flujo.esperas_tras_bloqueo.items():
            segundos, lease = flujo.esperas_s.get(espera), t.leases_s.get(fid)
            if segundos is None or lease is None:
                encontrados.append(
                    (
                        ["Resources", mid, "Metadata"],
                        f"{mid}: Tiempos.EsperasTrasBloqueo names Wait {espera!r} and {fid}, but the Wait has no "
                        f"Seconds or the function no {ENV_LEASE}",
                    )
                )
            elif segundos <= lease:
                encontrados.append(
                    (
                        ["Resources", mid, "Properties"],
                        f"{mid}: Wait {espera} ({segundos} s) does not outlast {fid}'s {ENV_LEASE} ({lease} s): "
                        f"asking again before the lease lapsed only meets OperacionEnCurso",
                    )
                )
        if flujo.reclamo is not None:
            lease = t.leases_s.get(flujo.reclamo)
            if lease is None or flujo.timeout_s is None or lease <= flujo.timeout_s:
                encontrados.append(
                    (
                        ["Resources", mid, "Properties"],
                        f"{mid}: the claim's lease ({flujo.reclamo} {ENV_LEASE} {lease}) must exceed the workflow's "
                        f"TimeoutSeconds ({flujo.timeout_s}): a live execution would lose its order's claim",
                    )
                )
    return encontrados
