"""What the operator commands know of the deployment, read from ``template.yaml``, never listed again.

A new consumer is its handler, its template resources, its events and its tests: ``mf-dlq`` and
``mf-smoke`` find its queue, its DLQ and its log group here. The reading is the template model's
(``template_model``: one reader of the template for every tool, issue 40), so the on-call's commands
never load the emulator that plays AWS locally:

- a DLQ is a queue something names as its dead-letter target (:func:`template_model.messaging.dead_letter_queues`);
- a DLQ's source queues are the queues whose ``RedrivePolicy`` points at it;
- a source queue's log group is its consumer's (the function's declared one, else
  ``/aws/lambda/<FunctionName>``), or the state machine's its pipe starts;
- the dependency whose breaker stands behind a source queue is the one provider the functions behind
  it call (their ``<DEPENDENCY>_URL`` variable, ``PASARELA_URL`` -> ``pasarela``); a consumer with a
  second provider (the e-mail's secondary) falls back instead of waiting, so no single breaker stands
  behind its queue.

Physical names are the template's with the stack's ``NameSuffix``.

``mf-retenidos`` reads here the resources a ``sam delete`` leaves behind (``DeletionPolicy: Retain`` or
``RetainExceptOnCreate``, their ``Condition`` holding for the deploy's parameters), each one's
definition as a CloudFormation import takes it (:meth:`Topologia.definicion_para_importar`) and the
declarations those definitions use (:meth:`Topologia.declaraciones_para`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from template_model import Template
from template_model import messaging as m

if TYPE_CHECKING:
    from collections.abc import Iterable

PLANTILLA = Path(__file__).resolve().parents[2] / "template.yaml"
SUFIJO = "NameSuffix"
RETENCIONES = m.RETAINED  # what a stack delete leaves in the account
_MARCA = "\x00"  # a suffix no name holds
_REFERENCIA_SUB = re.compile(r"\$\{([^}!]+)\}")


@dataclass
class Topologia:
    """The template's queues, DLQs and consumers, with physical names for one ``NameSuffix``."""

    sufijo: str = ""
    ruta: Path = PLANTILLA
    parametros: dict[str, str] = field(default_factory=dict)  # the deploy's other parameter values
    plantilla: Template = field(init=False)

    def __post_init__(self) -> None:
        self.plantilla = Template(path=self.ruta, parameters={**self.parametros, SUFIJO: self.sufijo})

    # A resource is named by its path, as Template.walk() names it: ``ColaPedidos`` in the root,
    # ``Tienda/ColaProyeccion`` in a unit. A queue and its consumer live in one unit, its DLQ in the root,
    # which keeps what a stack delete retains (decision 0130).
    def nombre(self, ruta: str, propiedad: str) -> str:
        """A resource's physical name (its ``QueueName``, ``FunctionName``...) with this suffix."""
        return m.physical_name(*self.plantilla.locate(ruta), propiedad)

    def tipo(self, ruta: str) -> str:
        unidad, lid = self.plantilla.locate(ruta)
        return str(unidad.resources[lid]["Type"])

    @cached_property
    def colas(self) -> tuple[str, ...]:
        """Paths of every queue, in template order."""
        return self.plantilla.paths(m.queues)

    @cached_property
    def dlqs(self) -> tuple[str, ...]:
        """Paths of the queues named as a dead-letter target, in template order."""
        return self.plantilla.paths(m.dead_letter_queues)

    def nombres_dlq(self) -> tuple[str, ...]:
        return tuple(self.nombre(ruta, "QueueName") for ruta in self.dlqs)

    def origenes(self, dlq: str) -> list[str]:
        """The queues whose ``RedrivePolicy`` sends their dead letters to ``dlq`` (a path)."""
        return [
            f"{prefijo}{cola}"
            for prefijo, plantilla in self.plantilla.walk()
            for cola in m.queues(plantilla)
            if m.dead_letter_queue_path(plantilla, cola) == dlq
        ]

    def registros_del_consumidor(self, cola: str) -> str | None:
        """The log group of whatever consumes ``cola`` (a path), or None if nothing does."""
        return m.log_group_name(*self.plantilla.locate(cola))

    def dependencias_de_cola(self, cola: str) -> set[str]:
        """The providers the functions behind ``cola`` call (``PASARELA_URL`` -> ``pasarela``), by breaker name."""
        unidad, lid = self.plantilla.locate(cola)
        return {
            proveedor.dependency
            for funcion in m.functions_behind(unidad, lid)
            for proveedor in m.providers(unidad, funcion)
        }

    def dependencia_de_cola(self, cola: str) -> str | None:
        """The breaker name behind ``cola`` (a path), or None (no provider, or a fallback one)."""
        dependencias = self.dependencias_de_cola(cola)
        return dependencias.pop() if len(dependencias) == 1 else None

    def retenidos(self) -> tuple[str, ...]:
        """Logical ids of the resources a stack delete keeps, for these parameters, in template order."""
        return m.retained(self.plantilla)

    def definicion_para_importar(self, logical_id: str, importados: Iterable[str]) -> dict[str, Any]:
        """The resource as an IMPORT change set's template holds it, next to ``importados`` and nothing else.

        As written in the template (so the ``sam deploy`` that follows finds it unchanged), except
        where it names a resource left out of the import: an ``Fn::If`` with such a branch is
        resolved to the branch this deploy's parameters take, and ``DependsOn`` keeps only imported
        resources. A reference to another resource that is not imported raises ``ValueError``: the
        import could not hold it.
        """
        recurso = self.plantilla.resources[logical_id]
        parcial = _Parcial(self.plantilla, frozenset(importados), logical_id)
        definicion = {k: v for k, v in recurso.items() if k not in ("Properties", "DependsOn")}
        definicion["Properties"] = parcial.resolver(recurso.get("Properties", {}))
        depende = recurso.get("DependsOn", [])
        if depende := [d for d in ([depende] if isinstance(depende, str) else depende) if d in importados]:
            definicion["DependsOn"] = depende
        return definicion

    def declaraciones_para(self, recursos: dict[str, Any]) -> dict[str, Any]:
        """The ``Parameters``, ``Conditions`` and ``Mappings`` that ``recursos`` (definitions) use, and nothing else."""
        doc = self.plantilla.doc
        condiciones: dict[str, Any] = {}
        pendientes = [n for n in _nombres(recursos, "Condition") if n in doc.get("Conditions", {})]
        while pendientes:
            nombre = pendientes.pop()
            if nombre not in condiciones:
                condiciones[nombre] = doc["Conditions"][nombre]
                pendientes += _nombres(condiciones[nombre], "Condition")
        usados = _nombres([recursos, condiciones], "Ref")
        declaraciones = {
            "Parameters": {n: d for n, d in doc.get("Parameters", {}).items() if n in usados},
            "Conditions": dict(sorted(condiciones.items())),
            "Mappings": {n: d for n, d in doc.get("Mappings", {}).items() if n in _nombres(recursos, "Fn::FindInMap")},
        }
        return {k: v for k, v in declaraciones.items() if v}

    def valores_de(self, parametros: Iterable[str]) -> dict[str, str]:
        """This deploy's value of each of ``parametros`` it gives (the others keep their template default)."""
        valores = {**self.parametros, SUFIJO: self.sufijo}
        return {n: valores[n] for n in parametros if n in valores}

    @cached_property
    def _con_marca(self) -> Template:
        """The template with a marker for a suffix (:meth:`patron`)."""
        return Template(path=self.ruta, parameters={SUFIJO: _MARCA})

    def patron(self, ruta: str, propiedad: str) -> re.Pattern[str]:
        """A physical name of the resource (a path), whatever the suffix (group ``sufijo``)."""
        texto = m.physical_name(*self._con_marca.locate(ruta), propiedad)
        return re.compile(re.escape(texto).replace(re.escape(_MARCA), "(?P<sufijo>.*?)"))


def _nombres(nodo: Any, clave: str) -> set[str]:
    """The names ``nodo`` gives under ``clave``: ``Ref``'s (and ``${}``'s), a ``Condition``'s or an ``Fn::If``'s
    condition, an ``Fn::FindInMap``'s map."""
    nombres: set[str] = set()
    if isinstance(nodo, list):
        for x in nodo:
            nombres |= _nombres(x, clave)
    elif isinstance(nodo, dict):
        for k, v in nodo.items():
            if k == clave and isinstance(v, str):
                nombres.add(v)
            elif (k, clave) in (("Fn::If", "Condition"), ("Fn::FindInMap", "Fn::FindInMap")):
                nombres.add(v[0])
            elif k == "Fn::Sub" and clave == "Ref":
                texto, propias = (v, {}) if isinstance(v, str) else (v[0], v[1])  # a Sub's own variables name nothing
                nombres |= {n.split(".", 1)[0] for n in _REFERENCIA_SUB.findall(texto)} - set(propias)
            nombres |= _nombres(v, clave)
    return nombres


@dataclass(frozen=True)
class _Parcial:
    """A definition kept as written, but for the ``Fn::If`` branches that name resources outside the import."""

    plantilla: Template
    importados: frozenset[str]
    recurso: str

    def _fuera(self, nodo: Any) -> set[str]:
        """The resources ``nodo`` references that are neither imported nor parameters nor pseudo parameters."""
        nombres = _nombres(nodo, "Ref") | {
            (n if isinstance(n, str) else n[0]).split(".", 1)[0] for n in _valores_de(nodo, "Fn::GetAtt")
        }
        parametros = self.plantilla.doc.get("Parameters", {})
        return {n for n in nombres if not n.startswith("AWS::") and n not in parametros and n not in self.importados}

    def resolver(self, nodo: Any) -> Any:
        if isinstance(nodo, list):
            return [self.resolver(x) for x in nodo]
        if not isinstance(nodo, dict):
            return nodo
        if set(nodo) == {"Fn::If"}:
            condicion, si, no = nodo["Fn::If"]
            if self._fuera(si) or self._fuera(no):
                return self.resolver(si if self.plantilla.condition(condicion) else no)
            return {"Fn::If": [condicion, self.resolver(si), self.resolver(no)]}
        referencia = len(nodo) == 1 and next(iter(nodo)) in ("Ref", "Fn::GetAtt", "Fn::Sub")
        if referencia and (fuera := self._fuera(nodo)):
            raise ValueError(f"{self.recurso} references {', '.join(sorted(fuera))}, which is not imported with it")
        return {k: self.resolver(v) for k, v in nodo.items()}


def _valores_de(nodo: Any, clave: str) -> list[Any]:
    """Every value ``nodo`` holds under ``clave``, at any depth."""
    if isinstance(nodo, list):
        return [v for x in nodo for v in _valores_de(x, clave)]
    if isinstance(nodo, dict):
        return [v for k, x in nodo.items() for v in ([x] if k == clave else []) + _valores_de(x, clave)]
    return []


@cache
def de_plantilla(sufijo: str = "") -> Topologia:
    """The deployment's topology for one ``NameSuffix`` (the template is read once per process)."""
    return Topologia(sufijo=sufijo)


def _cola_de(nombre: str, candidatas: Iterable[str]) -> tuple[str, str] | None:
    """(path, suffix) of the queue named ``nombre``; the shortest suffix wins, so ``<cola>-fallidos`` is the
    DLQ of ``<cola>``, not ``<cola>`` deployed with a ``-fallidos`` stage."""
    base = de_plantilla()
    encontradas = [
        (ruta, encontrado.group("sufijo"))
        for ruta in candidatas
        if (encontrado := base.patron(ruta, "QueueName").fullmatch(nombre))
    ]
    return min(encontradas, key=lambda par: len(par[1]), default=None)


def registros_de_dlq(cola: str) -> str | None:
    """The log group whose errors explain the dead letters of ``cola`` (a physical name, any suffix)."""
    encontrada = _cola_de(cola, de_plantilla().dlqs)
    if encontrada is None:
        return None
    dlq, sufijo = encontrada
    topologia = de_plantilla(sufijo)
    return next(filter(None, map(topologia.registros_del_consumidor, topologia.origenes(dlq))), None)


def dependencia_de_origen(cola: str) -> str | None:
    """The breaker behind the source queue ``cola`` (a physical name, any suffix), or None."""
    base = de_plantilla()
    encontrada = _cola_de(cola, base.colas)
    return None if encontrada is None else base.dependencia_de_cola(encontrada[0])
