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
``RetainExceptOnCreate``, their ``Condition`` holding for the deploy's parameters) and each one's
definition as a CloudFormation import takes it (:meth:`Topologia.definicion_para_importar`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sam_emulator.template import Plantilla

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
    _plantilla: Plantilla = field(init=False)

    def __post_init__(self) -> None:
        self._plantilla = Plantilla(ruta=self.ruta, parametros={**self.parametros, SUFIJO: self.sufijo})

    @property
    def _recursos(self) -> dict[str, dict[str, Any]]:
        return self._plantilla.recursos

    def nombre(self, logical_id: str, propiedad: str) -> str:
        """A resource's physical name (its ``QueueName``, ``FunctionName``...) with this suffix."""
        return str(self._plantilla.resolver(self._recursos[logical_id]["Properties"][propiedad]))

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
            if r.get("DeletionPolicy") in RETENCIONES and self._plantilla.condicion(r.get("Condition"))
        )

    def definicion_para_importar(self, logical_id: str, importados: Iterable[str]) -> dict[str, Any]:
        """The resource as an IMPORT change set's template holds it, next to ``importados`` and nothing else.

        Parameters and conditions are resolved for this deploy (the import template declares neither);
        ``Ref``/``GetAtt``/``${}`` of a resource in ``importados`` and pseudo parameters are kept for
        CloudFormation to resolve; ``DeletionPolicy`` and ``UpdateReplacePolicy`` are kept (an import
        requires the first). A reference to any other resource raises ``ValueError``: the import
        could not hold it.
        """
        recurso = self._recursos[logical_id]
        parcial = _Parcial(self._plantilla, frozenset(importados), logical_id)
        definicion = {"Type": recurso["Type"], "Properties": parcial.resolver(recurso.get("Properties", {}))}
        definicion |= {k: recurso[k] for k in ("DeletionPolicy", "UpdateReplacePolicy") if k in recurso}
        return definicion

    def patron(self, logical_id: str, propiedad: str) -> re.Pattern[str]:
        """A physical name of the resource, whatever the suffix (group ``sufijo``)."""
        marca = "\x00"
        plantilla = Plantilla(ruta=self.ruta, parametros={SUFIJO: marca})
        texto = str(plantilla.resolver(self._recursos[logical_id]["Properties"][propiedad]))
        return re.compile(re.escape(texto).replace(re.escape(marca), "(?P<sufijo>.*?)"))


@dataclass(frozen=True)
class _Parcial:
    """Resolve what is the deploy's (parameters, conditions, mappings), keep what CloudFormation resolves."""

    plantilla: Plantilla
    importados: frozenset[str]
    recurso: str

    def _conservada(self, nombre: str) -> bool:
        if nombre.startswith("AWS::") or nombre.split(".", 1)[0] in self.importados:
            return True
        if nombre in self.plantilla.doc.get("Parameters", {}):
            return False
        raise ValueError(f"{self.recurso} references {nombre}, which is not imported with it")

    def resolver(self, nodo: Any) -> Any:
        if isinstance(nodo, list):
            return [self.resolver(x) for x in nodo]
        if not isinstance(nodo, dict):
            return nodo
        if len(nodo) == 1:
            ((clave, arg),) = nodo.items()
            if clave == "Ref":
                return nodo if self._conservada(arg) else self.plantilla.ref(arg)
            if clave == "Fn::GetAtt":
                nombre = arg if isinstance(arg, str) else ".".join(arg)
                self._conservada(nombre)  # a GetAtt is always a resource's
                return nodo
            if clave == "Fn::If":
                return self.resolver(arg[1] if self.plantilla.condicion(arg[0]) else arg[2])
            if clave == "Fn::Sub":
                return self._sub(arg)
            if clave == "Fn::FindInMap":
                return self.plantilla.resolver(nodo)
        return {k: self.resolver(v) for k, v in nodo.items()}

    def _sub(self, arg: Any) -> Any:
        texto, variables = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1])
        locales = {k: self.resolver(v) for k, v in variables.items()}

        def valor(m: re.Match[str]) -> str:
            nombre = m.group(1)
            if nombre in locales and isinstance(locales[nombre], str):
                return locales[nombre]
            if nombre in locales or self._conservada(nombre):
                return m.group(0)
            return str(self.plantilla.ref(nombre))

        resuelto = _REFERENCIA_SUB.sub(valor, texto)
        pendientes = {k: v for k, v in locales.items() if not isinstance(v, str)}
        if "${" not in resuelto:
            return resuelto
        return {"Fn::Sub": [resuelto, pendientes] if pendientes else resuelto}


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
