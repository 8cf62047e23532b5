"""``template.yaml`` as the single source of truth for tests and the local run.

The YAML (with its ``!Ref``/``!Sub`` short forms) is parsed by cfn-lint's decoder;
this module only *resolves* the few intrinsics the local run needs, against the
parameters' defaults (or overrides) and the local account/region. Anything it
cannot resolve locally raises instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from cfnlint.decode import decode

_SUB_VAR = re.compile(r"\$\{([^}!]+)\}")


#: What the local run passes for the template's "use an existing one" parameters (when the template
#: declares them): there is no VPC, Aurora cluster or ElastiCache to create on a laptop — the
#: handlers reach the local PostgreSQL and Redis through DATABASE_URL / REDIS_URL instead.
PARAMETROS_LOCALES = {
    "SubnetIds": "subnet-local",
    "SecurityGroupIds": "sg-local",
    "AuroraEndpoint": "127.0.0.1",
    "ValkeyEndpoint": "127.0.0.1:6379",
    "ReservedConcurrency": "enabled",  # the platform-fault emulation throttles beyond it
}


class PlantillaError(Exception):
    """The template cannot be read or an intrinsic cannot be resolved locally."""


@dataclass
class Plantilla:
    """A decoded template plus what resolving it locally needs."""

    # As ``sam`` reads it: template.yaml in the current directory unless told otherwise.
    ruta: Path = field(default_factory=lambda: Path("template.yaml"))
    parametros: dict[str, str] = field(default_factory=dict)
    region: str = "eu-south-2"
    cuenta: str = "123456789012"
    pila: str = "sam-emulator"  # AWS::StackName
    # logical id -> physical value for Ref / GetAtt, filled by whoever creates resources
    fisicos: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def doc(self) -> dict[str, Any]:
        plantilla, errores = decode(str(self.ruta))
        if errores or plantilla is None:
            raise PlantillaError(f"{self.ruta}: {errores}")
        return plantilla

    @property
    def carpeta(self) -> Path:
        """Where CodeUri and DefinitionUri are relative to, as SAM resolves them."""
        return self.ruta.resolve().parent

    @property
    def recursos(self) -> dict[str, dict[str, Any]]:
        return self.doc.get("Resources", {})

    def de_tipo(self, tipo: str) -> dict[str, dict[str, Any]]:
        """Resources of one CloudFormation/SAM type whose Condition holds, by logical id."""
        return {
            lid: r for lid, r in self.recursos.items() if r.get("Type") == tipo and self.condicion(r.get("Condition"))
        }

    def propiedades(self, logical_id: str) -> dict[str, Any]:
        """A resource's Properties with every intrinsic resolved."""
        try:
            recurso = self.recursos[logical_id]
        except KeyError:
            raise PlantillaError(f"no resource {logical_id!r} in {self.ruta.name}") from None
        return self.resolver(recurso.get("Properties", {}))

    def parametro(self, nombre: str) -> Any:
        if nombre in self.parametros:
            return self.parametros[nombre]
        definicion = self.doc.get("Parameters", {}).get(nombre)
        if definicion is None:
            raise PlantillaError(f"unknown parameter {nombre!r}")
        valor = PARAMETROS_LOCALES.get(nombre, definicion.get("Default", ""))
        if definicion.get("Type") == "CommaDelimitedList":
            return [v for v in str(valor).split(",") if v]
        return valor

    def condicion(self, nombre: str | None) -> bool:
        if nombre is None:
            return True
        return bool(self.resolver(self.doc["Conditions"][nombre]))

    def _pseudo(self, nombre: str) -> Any:
        pseudos = {
            "AWS::Region": self.region,
            "AWS::AccountId": self.cuenta,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": self.pila,
            "AWS::NoValue": _NO_VALUE,
        }
        return pseudos[nombre]

    def ref(self, nombre: str) -> Any:
        if nombre.startswith("AWS::"):
            return self._pseudo(nombre)
        if nombre in self.doc.get("Parameters", {}):
            return self.parametro(nombre)
        if nombre in self.fisicos:
            valor = self.fisicos[nombre]
            return valor["Ref"] if isinstance(valor, dict) else valor
        raise PlantillaError(f"Ref {nombre!r} has no local value yet")

    def find_in_map(self, mapa: Any, clave: Any, segunda: Any) -> Any:
        """``Fn::FindInMap``: a value of the template's ``Mappings`` (keys may be intrinsics)."""
        mapa, clave, segunda = (self.resolver(x) for x in (mapa, clave, segunda))
        try:
            return self.doc.get("Mappings", {})[mapa][clave][segunda]
        except (KeyError, TypeError):
            raise PlantillaError(f"FindInMap [{mapa}, {clave}, {segunda}]: not in Mappings") from None

    def get_att(self, nombre: str, atributo: str) -> Any:
        valor = self.fisicos.get(nombre)
        if isinstance(valor, dict) and atributo in valor:
            return valor[atributo]
        raise PlantillaError(f"GetAtt {nombre}.{atributo} has no local value yet")

    def resolver(self, nodo: Any) -> Any:
        """Resolve Ref, Fn::Sub, Fn::GetAtt, Fn::If, Fn::Join, Fn::Equals, Fn::Not, Fn::Select, Fn::FindInMap."""
        if isinstance(nodo, list):
            return [v for v in (self.resolver(x) for x in nodo) if v is not _NO_VALUE]
        if not isinstance(nodo, dict):
            return nodo
        if len(nodo) == 1:
            ((clave, arg),) = nodo.items()
            funcion = _INTRINSECAS.get(clave)
            if funcion is not None:
                return funcion(self, arg)
        return {k: r for k, v in nodo.items() if (r := self.resolver(v)) is not _NO_VALUE}

    def _sub(self, arg: Any) -> str:
        if isinstance(arg, list):
            texto, variables = arg[0], {k: self.resolver(v) for k, v in arg[1].items()}
        else:
            texto, variables = arg, {}

        def valor(m: re.Match[str]) -> str:
            nombre = m.group(1)
            if nombre in variables:
                return str(variables[nombre])
            if "." in nombre and not nombre.startswith("AWS::"):
                return str(self.get_att(*nombre.split(".", 1)))
            return str(self.ref(nombre))

        return _SUB_VAR.sub(valor, texto)


class _NoValue:
    def __repr__(self) -> str:
        return "AWS::NoValue"


_NO_VALUE = _NoValue()


def _get_att(p: Plantilla, arg: Any) -> Any:
    nombre, atributo = arg.split(".", 1) if isinstance(arg, str) else arg
    return p.get_att(nombre, atributo)


_INTRINSECAS = {
    "Ref": lambda p, a: p.ref(a),
    "Fn::Sub": lambda p, a: p._sub(a),
    "Fn::GetAtt": _get_att,
    "Fn::If": lambda p, a: p.resolver(a[1] if p.condicion(a[0]) else a[2]),
    "Fn::Equals": lambda p, a: p.resolver(a[0]) == p.resolver(a[1]),
    "Fn::Not": lambda p, a: not p.resolver(a[0]),
    "Fn::And": lambda p, a: all(p.resolver(x) for x in a),
    "Fn::Or": lambda p, a: any(p.resolver(x) for x in a),
    "Fn::Join": lambda p, a: a[0].join(str(x) for x in p.resolver(a[1])),
    "Fn::Select": lambda p, a: p.resolver(a[1])[int(p.resolver(a[0]))],
    "Fn::FindInMap": lambda p, a: p.find_in_map(*a[:3]),
    "Condition": lambda p, a: p.condicion(a),
}


def crear_tabla(dynamodb: Any, plantilla: Plantilla, logical_id: str) -> str:
    """Create a DynamoDB table in moto exactly as the template defines it; return its name."""
    props = plantilla.propiedades(logical_id)
    args: dict[str, Any] = {
        k: props[k]
        for k in (
            "TableName",
            "AttributeDefinitions",
            "KeySchema",
            "BillingMode",
            "StreamSpecification",
            "GlobalSecondaryIndexes",
        )
        if k in props
    }
    if "StreamSpecification" in props:
        # CloudFormation's StreamSpecification has only StreamViewType; the API also wants StreamEnabled.
        args["StreamSpecification"] = {"StreamEnabled": True, **props["StreamSpecification"]}
    if "SSESpecification" in props:
        sse = props["SSESpecification"]
        args["SSESpecification"] = {"Enabled": sse.get("SSEEnabled", False), "SSEType": sse.get("SSEType", "KMS")}
    dynamodb.create_table(**args)
    if "TimeToLiveSpecification" in props:
        dynamodb.update_time_to_live(
            TableName=props["TableName"], TimeToLiveSpecification=props["TimeToLiveSpecification"]
        )
    descripcion = dynamodb.describe_table(TableName=props["TableName"])["Table"]
    plantilla.fisicos[logical_id] = {
        "Ref": props["TableName"],
        "Arn": descripcion["TableArn"],
        "StreamArn": descripcion.get("LatestStreamArn"),
    }
    return props["TableName"]
