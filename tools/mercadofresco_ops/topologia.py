"""What the operator commands know of the deployment, read from ``template.yaml``, never listed again.

A new consumer is its handler, its template resources, its events and its tests: ``mf-dlq`` and
``mf-smoke`` find its queue, its DLQ and its log group here, from the template's own wiring:

- a DLQ is a queue some other resource names as its dead-letter target (an SQS
  ``RedrivePolicy.deadLetterTargetArn``, a target's or a pipe's ``DeadLetterConfig.Arn``);
- a DLQ's source queues are the queues whose ``RedrivePolicy`` points at it;
- a source queue's consumer is the function with an ``SQS`` event on it (its log group: its
  ``LoggingConfig.LogGroup``, else ``/aws/lambda/<FunctionName>``), or the pipe reading it and
  the state machine that pipe starts (its logging destination's log group, and the functions
  its ``DefinitionSubstitutions`` name);
- the dependency whose breaker stands behind a source queue is the one provider its consumer's
  functions call (their ``<DEPENDENCY>_URL`` variable, ``PASARELA_URL`` -> ``pasarela``); a
  consumer with a second provider (the e-mail's secondary) falls back instead of waiting, so
  no single breaker stands behind its queue.

Physical names are the template's ``!Sub`` strings with the stack's ``NameSuffix``.

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

from sam_emulator.template import Template

if TYPE_CHECKING:
    from collections.abc import Iterable

PLANTILLA = Path(__file__).resolve().parents[2] / "template.yaml"
SUFIJO = "NameSuffix"
MAQUINAS = ("AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine")
RETENCIONES = ("Retain", "RetainExceptOnCreate")  # what a stack delete leaves in the account
_REFERENCIA_SUB = re.compile(r"\$\{([^}!]+)\}")


def _id_logico(valor: Any) -> str | None:
    """The logical id a ``!GetAtt X.Arn`` or ``!Ref X`` names, else None."""
    if isinstance(valor, dict):
        if "Fn::GetAtt" in valor:
            objetivo = valor["Fn::GetAtt"]
            return (objetivo if isinstance(objetivo, list) else objetivo.split("."))[0]
        if "Ref" in valor:
            return valor["Ref"]
    return None


def _destinos_dlq(nodo: Any) -> set[str]:
    """Every logical id named as a dead-letter target anywhere inside ``nodo``."""
    encontrados: set[str] = set()
    if isinstance(nodo, dict):
        for clave, valor in nodo.items():
            if clave == "deadLetterTargetArn" or (clave == "DeadLetterConfig" and isinstance(valor, dict)):
                objetivo = _id_logico(valor if clave == "deadLetterTargetArn" else valor.get("Arn"))
                if objetivo:
                    encontrados.add(objetivo)
            encontrados |= _destinos_dlq(valor)
    elif isinstance(nodo, list):
        for valor in nodo:
            encontrados |= _destinos_dlq(valor)
    return encontrados


@dataclass
class Topologia:
    """The template's queues, DLQs and consumers, with physical names for one ``NameSuffix``."""

    sufijo: str = ""
    ruta: Path = PLANTILLA
    parametros: dict[str, str] = field(default_factory=dict)  # the deploy's other parameter values
    _plantilla: Template = field(init=False)

    def __post_init__(self) -> None:
        self._plantilla = Template(path=self.ruta, parameters={**self.parametros, SUFIJO: self.sufijo})

    @property
    def _recursos(self) -> dict[str, dict[str, Any]]:
        return self._plantilla.resources

    def nombre(self, logical_id: str, propiedad: str) -> str:
        """A resource's physical name (its ``QueueName``, ``FunctionName``...) with this suffix."""
        return str(self._plantilla.resolve(self._recursos[logical_id]["Properties"][propiedad]))

    @cached_property
    def dlqs(self) -> tuple[str, ...]:
        """Logical ids of the queues named as a dead-letter target, in template order."""
        destinos = _destinos_dlq(self._recursos)
        return tuple(lid for lid, r in self._recursos.items() if r["Type"] == "AWS::SQS::Queue" and lid in destinos)

    def nombres_dlq(self) -> tuple[str, ...]:
        return tuple(self.nombre(lid, "QueueName") for lid in self.dlqs)

    def origenes(self, dlq: str) -> list[str]:
        """The queues whose ``RedrivePolicy`` sends their dead letters to ``dlq`` (a logical id)."""
        return [
            lid
            for lid, r in self._recursos.items()
            if r["Type"] == "AWS::SQS::Queue"
            and _id_logico(r.get("Properties", {}).get("RedrivePolicy", {}).get("deadLetterTargetArn")) == dlq
        ]

    def registros_del_consumidor(self, cola: str) -> str | None:
        """The log group of whatever consumes ``cola`` (a logical id), or None if nothing does."""
        for lid, r in self._recursos.items():
            props = r.get("Properties", {})
            if r["Type"] == "AWS::Serverless::Function" and any(
                e.get("Type") == "SQS" and _id_logico(e.get("Properties", {}).get("Queue")) == cola
                for e in props.get("Events", {}).values()
            ):
                return self._registros_de_funcion(lid)
            if r["Type"] == "AWS::Pipes::Pipe" and _id_logico(props.get("Source")) == cola:
                return self._registros_de_maquina(_id_logico(props.get("Target")))
        return None

    def reparto(self) -> dict[str, str]:
        """Fan-out queue -> the provider its consumers call, for each queue the SNS topic delivers to.

        The provider is its breaker name's first word (``erp``; ``correo`` for ``correo-principal`` and its
        secondary); a subscriber that calls no provider, or several, is left out (the projection).
        """
        reparto = {}
        for cola in self.colas_suscritas():
            proveedores = {d.split("-")[0] for d in self.dependencias_de_cola(cola)}
            if len(proveedores) == 1:
                reparto[cola] = proveedores.pop()
        return reparto

    def funciones_consumidoras(self, cola: str) -> list[str]:
        """The functions that run for ``cola``'s messages: its SQS consumers, or its pipe's state machine's tasks."""
        funciones = []
        for lid, r in self._recursos.items():
            props = r.get("Properties", {})
            if r["Type"] == "AWS::Serverless::Function" and any(
                e.get("Type") == "SQS" and _id_logico(e.get("Properties", {}).get("Queue")) == cola
                for e in props.get("Events", {}).values()
            ):
                funciones.append(lid)
            if r["Type"] == "AWS::Pipes::Pipe" and _id_logico(props.get("Source")) == cola:
                maquina = self._recursos.get(_id_logico(props.get("Target")) or "", {}).get("Properties", {})
                for valor in maquina.get("DefinitionSubstitutions", {}).values():
                    objetivo = _id_logico(valor)
                    if self._recursos.get(objetivo or "", {}).get("Type") == "AWS::Serverless::Function":
                        funciones.append(objetivo)
        return funciones

    def dependencias_de_cola(self, cola: str) -> set[str]:
        """The providers ``cola``'s consumers call (``ERP_URL`` -> ``erp``), by their breaker names."""
        return {
            variable.removesuffix("_URL").lower().replace("_", "-")
            for funcion in self.funciones_consumidoras(cola)
            for variable in self._recursos[funcion]["Properties"].get("Environment", {}).get("Variables", {})
            if variable.endswith("_URL")
        }

    def dependencia_de_cola(self, cola: str) -> str | None:
        """The breaker name behind ``cola`` (a logical id), or None (no provider, or a fallback one)."""
        dependencias = self.dependencias_de_cola(cola)
        return dependencias.pop() if len(dependencias) == 1 else None

    def dlq_de(self, cola: str) -> str | None:
        """The logical id of ``cola``'s DLQ (its ``RedrivePolicy``), or None."""
        props = self._recursos[cola].get("Properties", {})
        return _id_logico(props.get("RedrivePolicy", {}).get("deadLetterTargetArn"))

    def colas_de_flujo(self) -> dict[str, str]:
        """Source queue -> the state machine a pipe starts for each of its messages (the order workflow's input)."""
        return {
            fuente: maquina
            for r in self._recursos.values()
            if r["Type"] == "AWS::Pipes::Pipe"
            and (fuente := _id_logico(r["Properties"].get("Source")))
            and (maquina := _id_logico(r["Properties"].get("Target")))
            and self._recursos.get(maquina, {}).get("Type")
            in ("AWS::Serverless::StateMachine", "AWS::StepFunctions::StateMachine")
        }

    def colas_suscritas(self) -> list[str]:
        """The queues an SNS topic delivers to (the confirmed order's fan-out), in template order."""
        return [
            cola
            for r in self._recursos.values()
            if r["Type"] == "AWS::SNS::Subscription"
            and r["Properties"].get("Protocol") == "sqs"
            and (cola := _id_logico(r["Properties"].get("Endpoint")))
        ]

    def _registros_de_funcion(self, lid: str) -> str:
        grupo = _id_logico(self._recursos[lid]["Properties"].get("LoggingConfig", {}).get("LogGroup"))
        if grupo:
            return self.nombre(grupo, "LogGroupName")
        return f"/aws/lambda/{self.nombre(lid, 'FunctionName')}"

    def _registros_de_maquina(self, lid: str | None) -> str | None:
        if lid is None:
            return None
        destinos = self._recursos[lid]["Properties"].get("Logging", {}).get("Destinations", [])
        for destino in destinos:
            grupo = _id_logico(destino.get("CloudWatchLogsLogGroup", {}).get("LogGroupArn"))
            if grupo:
                return self.nombre(grupo, "LogGroupName")
        return None

    def retenidos(self) -> tuple[str, ...]:
        """Logical ids of the resources a stack delete keeps, for these parameters, in template order."""
        return tuple(
            lid
            for lid, r in self._recursos.items()
            if r.get("DeletionPolicy") in RETENCIONES and self._plantilla.condition(r.get("Condition"))
        )

    def definicion_para_importar(self, logical_id: str, importados: Iterable[str]) -> dict[str, Any]:
        """The resource as an IMPORT change set's template holds it, next to ``importados`` and nothing else.

        As written in the template (so the ``sam deploy`` that follows finds it unchanged), except
        where it names a resource left out of the import: an ``Fn::If`` with such a branch is
        resolved to the branch this deploy's parameters take, and ``DependsOn`` keeps only imported
        resources. A reference to another resource that is not imported raises ``ValueError``: the
        import could not hold it.
        """
        recurso = self._recursos[logical_id]
        parcial = _Parcial(self._plantilla, frozenset(importados), logical_id)
        definicion = {k: v for k, v in recurso.items() if k not in ("Properties", "DependsOn")}
        definicion["Properties"] = parcial.resolver(recurso.get("Properties", {}))
        depende = recurso.get("DependsOn", [])
        if depende := [d for d in ([depende] if isinstance(depende, str) else depende) if d in importados]:
            definicion["DependsOn"] = depende
        return definicion

    def declaraciones_para(self, recursos: dict[str, Any]) -> dict[str, Any]:
        """The ``Parameters``, ``Conditions`` and ``Mappings`` that ``recursos`` (definitions) use, and nothing else."""
        doc = self._plantilla.doc
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
            "Mappings": {n: m for n, m in doc.get("Mappings", {}).items() if n in _nombres(recursos, "Fn::FindInMap")},
        }
        return {k: v for k, v in declaraciones.items() if v}

    def valores_de(self, parametros: Iterable[str]) -> dict[str, str]:
        """This deploy's value of each of ``parametros`` it gives (the others keep their template default)."""
        valores = {**self.parametros, SUFIJO: self.sufijo}
        return {n: valores[n] for n in parametros if n in valores}

    def patron(self, logical_id: str, propiedad: str) -> re.Pattern[str]:
        """A physical name of the resource, whatever the suffix (group ``sufijo``)."""
        marca = "\x00"
        plantilla = Template(path=self.ruta, parameters={SUFIJO: marca})
        texto = str(plantilla.resolve(self._recursos[logical_id]["Properties"][propiedad]))
        return re.compile(re.escape(texto).replace(re.escape(marca), "(?P<sufijo>.*?)"))


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
                texto = v if isinstance(v, str) else v[0]
                nombres |= {m.split(".", 1)[0] for m in _REFERENCIA_SUB.findall(texto)}
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
    """(logical id, suffix) of the queue named ``nombre``; the shortest suffix wins, so
    ``mercadofresco-erp-fallidos`` is the ERP's DLQ, not the ERP queue with a ``-fallidos`` stage."""
    base = de_plantilla()
    encontradas = [
        (lid, encontrado.group("sufijo"))
        for lid in candidatas
        if (encontrado := base.patron(lid, "QueueName").fullmatch(nombre))
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
    encontrada = _cola_de(cola, [lid for lid, r in base._recursos.items() if r["Type"] == "AWS::SQS::Queue"])
    return None if encontrada is None else base.dependencia_de_cola(encontrada[0])
