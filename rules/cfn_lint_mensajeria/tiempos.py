"""The template's time bounds and the relations between them (rule E9114), standalone.

Each bound a relation ties is declared once, in the template's ``Mappings.Plazos``: a bounded
function reads its ``Timeout`` and its idempotency lease ``IDEMPOTENCY_LEASE_S`` (environment) from
there with ``Fn::FindInMap``, keyed by its logical id (``TimeoutS``, ``LeaseS``). A state machine's
``Plazos`` entry is keyed by its logical id: ``TimeoutSeconds`` and one key per related ``Wait``. A
JSONata-mode ``Wait`` reads its entry: ``"Seconds": "{% ${X} %}"`` with the ``DefinitionSubstitutions``
value ``X: !FindInMap [Plazos, <machine>, <Wait>]`` (the substitution lands as text, the expression
turns it into the number). ``TimeoutSeconds`` (and a JSONPath ``Wait``) is a JSON number in the ASL,
the only form Step Functions takes, so it must equal its declaration. What ties them is declared on
the state machine::

    Metadata:
      Mensajeria:
        Tiempos:
          Reclamo: ReclamoFunction            # its lease must outlive the execution (TimeoutSeconds)
          EsperasTrasBloqueo:                 # each Wait must outlast the lease of the function it asks again
            EsperarFinBloqueo: CobroFunction

:func:`tiempos` reads them all; :func:`problemas` lists the broken relations:

- lease > Timeout, for every function with a lease (a claim that lapses while its function still
  runs lets a second consumer repeat the side effect);
- re-ask ``Wait`` > that function's lease (asking before the lease lapsed only meets ``OperacionEnCurso``);
- claim lease > ``TimeoutSeconds`` (a live execution must never lose its order's claim);
- a bounded function's ``Timeout`` and lease come from ``Plazos``, a related ``Wait`` that reads a
  substitution reads it from its own ``Plazos`` key, and the ASL's numbers equal their declaration
  (a literal beside the declaration is a second place that drifts).

Tests, the local run and the tools read the values from here instead of copying them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfn_lint_mensajeria.asl import definition_of, walk
from cfn_lint_mensajeria.recursos import (
    FUNCTIONS,
    STATE_MACHINES,
    as_int,
    function_env,
    function_props,
    function_timeout_s,
    props,
    resources,
)

ENV_LEASE = "IDEMPOTENCY_LEASE_S"
PLAZOS = "Plazos"  # the Mappings entry that declares every bound
TIMEOUT_KEY, LEASE_KEY, TIMEOUT_SECONDS_KEY = "TimeoutS", "LeaseS", "TimeoutSeconds"
# A JSONata Seconds that is one DefinitionSubstitutions placeholder: "{% ${EsperarFinBloqueoS} %}"
SUSTITUCION = re.compile(r"^\{%\s*\$\{(\w+)\}\s*%\}$")


@dataclass(frozen=True)
class Flujo:
    """One state machine's bounds: its TimeoutSeconds, its Waits and what they relate to."""

    timeout_s: int | None
    esperas_s: dict[str, int]
    reclamo: str | None = None
    esperas_tras_bloqueo: dict[str, str] = field(default_factory=dict)
    # Waits whose Seconds is a substitution placeholder: Wait -> the DefinitionSubstitutions value as written
    esperas_sustituidas: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Tiempos:
    """Every bound of a template, by logical id."""

    timeouts_s: dict[str, int]
    leases_s: dict[str, int]
    flujos: dict[str, Flujo]
    # Mappings.Plazos as written: logical id -> bound name -> seconds
    declarados: dict[str, dict[str, Any]] = field(default_factory=dict)
    # bounded functions whose Timeout or lease is written outside Plazos: logical id -> property names
    literales: dict[str, list[str]] = field(default_factory=dict)


def tiempos(template: dict, base_dir: str | Path) -> Tiempos:
    """Read the bounds (``base_dir``: where ``DefinitionUri`` paths are relative to)."""
    timeouts, leases, literales = {}, {}, {}
    for fid in resources(template, *FUNCTIONS):
        if (t := function_timeout_s(template, fid)) is not None:
            timeouts[fid] = t
        if (lease := as_int(function_env(template, fid).get(ENV_LEASE))) is not None:
            leases[fid] = lease
            p = function_props(template, fid) or {}
            variables = (p.get("Environment") or {}).get("Variables") or {}
            escritos = {"Timeout": p.get("Timeout"), ENV_LEASE: variables.get(ENV_LEASE)}
            if fuera := [nombre for nombre, valor in escritos.items() if not _de_plazos(valor)]:
                literales[fid] = fuera
    declarados = (template.get("Mappings") or {}).get(PLAZOS) or {}
    declarados = declarados if isinstance(declarados, dict) else {}
    flujos = {}
    for mid, res in resources(template, *STATE_MACHINES).items():
        definition, _ = definition_of(res, Path(base_dir))
        if definition is None:
            continue
        sustituciones = props(res).get("DefinitionSubstitutions") or {}
        esperas, sustituidas = {}, {}
        for e in walk(definition):
            if e.body.get("Type") != "Wait" or "Seconds" not in e.body:
                continue
            segundos = e.body["Seconds"]
            if isinstance(segundos, str) and (marcador := SUSTITUCION.match(segundos)):
                segundos = sustituidas[e.name] = sustituciones.get(marcador[1])
                if _de_plazos(segundos):
                    segundos = _declarado(declarados, segundos["Fn::FindInMap"])
            esperas[e.name] = as_int(segundos)
        meta = ((res.get("Metadata") or {}).get("Mensajeria") or {}).get("Tiempos") or {}
        flujos[mid] = Flujo(
            as_int(definition.get("TimeoutSeconds")),
            esperas,
            meta.get("Reclamo"),
            dict(meta.get("EsperasTrasBloqueo") or {}),
            sustituidas,
        )
    return Tiempos(timeouts, leases, flujos, declarados, literales)


def _declarado(declarados: dict[str, Any], claves: list[Any]) -> Any:
    """The value ``Fn::FindInMap [Plazos, id, name]`` reads, or None."""
    return (declarados.get(claves[1]) or {}).get(claves[2]) if len(claves) == 3 else None


def _de_plazos(valor: Any) -> bool:
    """Whether a property value is a ``Fn::FindInMap`` into ``Plazos``."""
    claves = valor.get("Fn::FindInMap") if isinstance(valor, dict) and len(valor) == 1 else None
    return isinstance(claves, list) and bool(claves) and claves[0] == PLAZOS


def problemas(t: Tiempos) -> list[tuple[list[Any], str]]:
    """(RuleMatch path, message) for every broken relation."""
    encontrados = []
    for fid, nombres in t.literales.items():
        encontrados.append(
            (
                ["Resources", fid, "Properties"],
                f"{fid}: {' and '.join(nombres)} written outside Mappings.{PLAZOS}: read them with "
                f"!FindInMap [{PLAZOS}, {fid}, {TIMEOUT_KEY}|{LEASE_KEY}], where the bounds they relate to "
                f"are declared",
            )
        )
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
        if flujo.reclamo is not None or flujo.esperas_tras_bloqueo:
            declarado = t.declarados.get(mid) or {}
            en_asl = {TIMEOUT_SECONDS_KEY: flujo.timeout_s}
            en_asl |= {espera: flujo.esperas_s.get(espera) for espera in flujo.esperas_tras_bloqueo}
            for nombre, segundos in en_asl.items():
                if nombre in flujo.esperas_sustituidas:
                    valor = flujo.esperas_sustituidas[nombre]
                    if not (_de_plazos(valor) and valor["Fn::FindInMap"] == [PLAZOS, mid, nombre]):
                        encontrados.append(
                            (
                                ["Resources", mid, "Properties", "DefinitionSubstitutions"],
                                f"{mid}: Wait {nombre} reads the substitution {valor!r}, not its declaration: "
                                f"substitute !FindInMap [{PLAZOS}, {mid}, {nombre}]",
                            )
                        )
                elif as_int(declarado.get(nombre)) != segundos:
                    encontrados.append(
                        (
                            ["Resources", mid, "Properties"],
                            f"{mid}: the ASL's {nombre} ({segundos}) differs from its declaration Mappings.{PLAZOS}."
                            f"{mid}.{nombre} ({declarado.get(nombre)}): change both (Step Functions reads the ASL)",
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
