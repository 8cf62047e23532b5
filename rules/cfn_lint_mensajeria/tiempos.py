"""The template's time bounds and the relations between them (rule E9114), standalone.

Each bound a relation ties is declared once, in the template's ``Mappings.Plazos``: a bounded
function reads its ``Timeout`` and its idempotency lease ``IDEMPOTENCY_LEASE_S`` (environment) from
there with ``Fn::FindInMap``, keyed by its logical id (``TimeoutS``, ``LeaseS``); a function in a unit
reads them as parameters its parent passes from there, and the unit is judged as each parent nests it. A state machine's
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

The template model reads them all (:func:`template_model.bounds.time_bounds`, one reader of the template,
issue 40; :func:`limites` as the rule gets them); :func:`problemas` lists the broken relations:

- lease > Timeout, for every function with a lease (a claim that lapses while its function still
  runs lets a second consumer repeat the side effect);
- re-ask ``Wait`` > that function's lease (asking before the lease lapsed only meets ``OperacionEnCurso``);
- claim lease > ``TimeoutSeconds`` (a live execution must never lose its order's claim);
- the same two on a durable function (decision 0140), whose ``Metadata`` names its own variables::

    Metadata:
      Mensajeria:
        Tiempos:
          Reclamo: RECLAMO_LEASE_S            # must exceed DurableConfig.ExecutionTimeout
          EsperasTrasBloqueo:
            RECONSULTA_WAIT_S: PedidoDurableFunction  # must outlast that function's lease
- a bounded function's ``Timeout`` and lease come from ``Plazos``, a related ``Wait`` that reads a
  substitution reads it from its own ``Plazos`` key, and the ASL's numbers equal their declaration
  (a literal beside the declaration is a second place that drifts).
"""

from __future__ import annotations

import re
from copy import deepcopy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from template_model import read
from template_model.bounds import BOUNDS_MAPPING, LEASE_VARIABLE, time_bounds
from template_model.bounds import from_bounds_mapping as _de_plazos
from template_model.document import FIND_IN_MAP, FOREACH_PREFIX, LANGUAGE_EXTENSIONS
from template_model.wiring import as_int

from cfn_lint_mensajeria.recursos import as_nestings

if TYPE_CHECKING:
    from collections.abc import Iterator

    from template_model.bounds import DurableBounds, TimeBounds

TIMEOUT_KEY, LEASE_KEY, TIMEOUT_SECONDS_KEY = "TimeoutS", "LeaseS", "TimeoutSeconds"


def limites(cfn: Any) -> list[tuple[str, TimeBounds]]:
    """The bounds of the template a cfn-lint rule checks, as the template writes them: (``""``, bounds) for a
    template that stands alone, (its stack path, bounds) for each place a stack nests it (a unit).

    cfn-lint lints a unit alone, but a unit's bounded function reads its ``Timeout`` and lease as parameters
    its parent hands it from ``Mappings.Plazos``: each nesting is read with what its parent passes
    (:func:`cfn_lint_mensajeria.recursos.as_nestings`), so the relations are checked on the numbers the deploy uses.

    In a template with ``AWS::LanguageExtensions`` (loops, decision 0130) cfn-lint's transform resolves every
    ``Fn::FindInMap`` it can before the rules run, so a bound read from ``Mappings.Plazos`` would reach the rule
    as a literal beside its declaration; the template model reads the file keeping them as written.
    """
    archivo = getattr(cfn, "filename", None)
    carpeta = Path(archivo).parent if archivo else Path()
    antes = getattr(cfn, "transform_pre", {})
    if LANGUAGE_EXTENSIONS not in (antes.get("Transform") or []):
        documento = cfn.template
    elif archivo and Path(archivo).is_file():
        documento = read(archivo)
    else:
        # No file (``sam validate --lint`` lints the template's text): the bounds' FindInMaps cfn-lint recorded
        # before its transform are put back where it resolved them.
        documento = _con_plazos_escritos(cfn.template, antes)
    return [(anidada, time_bounds(doc, carpeta)) for anidada, doc in as_nestings(cfn, documento)]


def _con_plazos_escritos(plantilla: dict[str, Any], antes: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``plantilla`` with each ``Fn::FindInMap [Plazos, ...]`` as written in place of the literal the
    transform left there (``antes``: cfn-lint's ``transform_pre``, every ``Fn::FindInMap`` and ``Fn::ForEach``
    found before the transform, by path)."""
    bucles = {tuple(ruta[:-1]): ruta[-1] for ruta in antes.get("Fn::ForEach") or []}
    copia = deepcopy(plantilla)
    for ruta in antes.get(FIND_IN_MAP) or []:
        *donde, _funcion, argumentos = ruta
        if not (isinstance(argumentos, list) and argumentos and argumentos[0] == BOUNDS_MAPPING):
            continue
        for padre, clave in _lugares(copia, donde, bucles):
            if not isinstance(padre[clave], dict):
                padre[clave] = {FIND_IN_MAP: argumentos}
    return copia


def _lugares(
    nodo: Any, ruta: list[Any], bucles: dict[tuple[Any, ...], Any], hecho: tuple[Any, ...] = (), valores: Any = None
) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every node the written ``ruta`` became once its loops were expanded: a
    ``Fn::ForEach::*`` step binds its identifier to each value of its collection (any key, when the collection
    is not a literal list) and a key with ``${Identifier}`` is that key with the value substituted."""
    valores = valores or {}
    if not ruta:
        return
    paso, *resto = ruta
    if isinstance(paso, str) and paso.startswith(FOREACH_PREFIX):
        bucle = bucles.get((*hecho, paso))
        if not (isinstance(bucle, list) and len(bucle) == 3 and resto and resto[0] == 2):
            return
        identificador, coleccion = bucle[0], bucle[1]
        literal = isinstance(coleccion, list) and all(isinstance(v, str) for v in coleccion)
        for valor in coleccion if literal else [None]:
            yield from _lugares(nodo, resto[1:], bucles, (*hecho, paso, 2), {**valores, identificador: valor})
        return
    if isinstance(nodo, dict) and isinstance(paso, str):
        patron = re.escape(paso)
        for identificador, valor in valores.items():
            marca = re.escape("${" + identificador + "}")
            patron = patron.replace(marca, ".+" if valor is None else re.escape(valor))
        claves = [k for k in nodo if isinstance(k, str) and re.fullmatch(patron, k)]
    elif isinstance(nodo, list) and isinstance(paso, int) and paso < len(nodo):
        claves = [paso]
    else:
        return
    for clave in claves:
        if resto:
            yield from _lugares(nodo[clave], resto, bucles, (*hecho, paso), valores)
        else:
            yield nodo, clave


def problemas(t: TimeBounds) -> list[tuple[list[Any], str]]:
    """(RuleMatch path, message) for every broken relation."""
    encontrados = []
    for fid, nombres in t.literals.items():
        encontrados.append(
            (
                ["Resources", fid, "Properties"],
                f"{fid}: {' and '.join(nombres)} written outside Mappings.{BOUNDS_MAPPING}: read them with "
                f"!FindInMap [{BOUNDS_MAPPING}, {fid}, {TIMEOUT_KEY}|{LEASE_KEY}], where the bounds they relate to "
                f"are declared",
            )
        )
    for fid, lease in t.leases_s.items():
        timeout = t.timeouts_s.get(fid)
        if timeout is not None and lease <= timeout:
            encontrados.append(
                (
                    ["Resources", fid, "Properties", "Timeout"],
                    f"{fid}: Timeout {timeout} s is not below its {LEASE_VARIABLE} {lease} s: raise the lease with the "
                    f"Timeout (timeout + margin), or a claim lapses while the function still runs and a second "
                    f"consumer repeats the side effect",
                )
            )
    for mid, flujo in t.workflows.items():
        encontrados += _esperas_tras_bloqueo(t, mid, flujo.waits_after_lease, flujo.waits_s, "Wait ")
        if flujo.claim_function is not None or flujo.waits_after_lease:
            declarado = t.declared.get(mid) or {}
            en_asl = {TIMEOUT_SECONDS_KEY: flujo.timeout_s}
            en_asl |= {espera: flujo.waits_s.get(espera) for espera in flujo.waits_after_lease}
            for nombre, segundos in en_asl.items():
                if nombre in flujo.substituted_waits:
                    valor = flujo.substituted_waits[nombre]
                    if not (_de_plazos(valor) and valor["Fn::FindInMap"] == [BOUNDS_MAPPING, mid, nombre]):
                        encontrados.append(
                            (
                                ["Resources", mid, "Properties", "DefinitionSubstitutions"],
                                f"{mid}: Wait {nombre} reads the substitution {valor!r}, not its declaration: "
                                f"substitute !FindInMap [{BOUNDS_MAPPING}, {mid}, {nombre}]",
                            )
                        )
                elif as_int(declarado.get(nombre)) != segundos:
                    encontrados.append(
                        (
                            ["Resources", mid, "Properties"],
                            f"{mid}: the ASL's {nombre} ({segundos}) differs from its declaration "
                            f"Mappings.{BOUNDS_MAPPING}.{mid}.{nombre} ({declarado.get(nombre)}): change both "
                            f"(Step Functions reads the ASL)",
                        )
                    )
        if flujo.claim_function is not None:
            lease = t.leases_s.get(flujo.claim_function)
            if lease is None or flujo.timeout_s is None or lease <= flujo.timeout_s:
                encontrados.append(
                    (
                        ["Resources", mid, "Properties"],
                        f"{mid}: the claim's lease ({flujo.claim_function} {LEASE_VARIABLE} {lease}) must exceed the "
                        f"workflow's TimeoutSeconds ({flujo.timeout_s}): a live execution would lose its order's claim",
                    )
                )
    for fid, saga in t.durables.items():
        encontrados.extend(_problemas_de_la_saga(t, fid, saga))
    return encontrados


def _problemas_de_la_saga(t: TimeBounds, fid: str, saga: DurableBounds) -> list[tuple[list[Any], str]]:
    """A durable function's relations: the claim outlives the execution, each re-ask outlasts its lease."""
    if saga.claim_variable is None and not saga.waits_after_lease:
        return []  # a durable function that declares no relation: nothing to relate
    ruta = ["Resources", fid, "Properties"]
    encontrados = []
    if fuera := [nombre for nombre, valor in saga.written.items() if not _de_plazos(valor)]:
        encontrados.append(
            (
                ruta,
                f"{fid}: {' and '.join(fuera)} written outside Mappings.{BOUNDS_MAPPING}: read them with "
                f"!FindInMap [{BOUNDS_MAPPING}, ...], where the bounds they relate to are declared",
            )
        )
    if saga.claim_variable is not None and (
        saga.claim_lease_s is None or saga.timeout_s is None or saga.claim_lease_s <= saga.timeout_s
    ):
        encontrados.append(
            (
                ruta,
                f"{fid}: the claim's lease ({saga.claim_variable} {saga.claim_lease_s}) must exceed "
                f"DurableConfig.ExecutionTimeout ({saga.timeout_s}): a live execution would lose its order's claim",
            )
        )
    return encontrados + _esperas_tras_bloqueo(t, fid, saga.waits_after_lease, saga.waits_s, "")


def _esperas_tras_bloqueo(
    t: TimeBounds, rid: str, esperas: dict[str, str], segundos_de: dict[str, int | None], clase: str
) -> list[tuple[list[Any], str]]:
    """Each wait of ``rid`` (a workflow's Wait state, a durable function's variable) that asks again after another
    function's claim (``Tiempos.EsperasTrasBloqueo``: wait -> that function) outlasts that function's lease."""
    encontrados = []
    for espera, fid in esperas.items():
        segundos, lease = segundos_de.get(espera), t.leases_s.get(fid)
        if segundos is None or lease is None:
            encontrados.append(
                (
                    ["Resources", rid, "Metadata"],
                    f"{rid}: Tiempos.EsperasTrasBloqueo names {clase}{espera!r} and {fid}, but the wait has no "
                    f"seconds or the function no {LEASE_VARIABLE}",
                )
            )
        elif segundos <= lease:
            encontrados.append(
                (
                    ["Resources", rid, "Properties"],
                    f"{rid}: {clase}{espera} ({segundos} s) does not outlast {fid}'s {LEASE_VARIABLE} ({lease} s): "
                    f"asking again before the lease lapsed only meets OperacionEnCurso",
                )
            )
    return encontrados
