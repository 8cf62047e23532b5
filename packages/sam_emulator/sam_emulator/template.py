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
LOCAL_PARAMETERS = {
    "SubnetIds": "subnet-local",
    "SecurityGroupIds": "sg-local",
    "AuroraEndpoint": "127.0.0.1",
    "ValkeyEndpoint": "127.0.0.1:6379",
    "ReservedConcurrency": "enabled",  # the platform-fault emulation throttles beyond it
}


class TemplateError(Exception):
    """The template cannot be read or an intrinsic cannot be resolved locally."""


@dataclass
class Template:
    """A decoded template plus what resolving it locally needs."""

    # As ``sam`` reads it: template.yaml in the current directory unless told otherwise.
    path: Path = field(default_factory=lambda: Path("template.yaml"))
    parameters: dict[str, str] = field(default_factory=dict)
    region: str = "eu-south-2"
    account: str = "123456789012"
    stack_name: str = "sam-emulator"  # AWS::StackName
    # logical id -> physical value for Ref / GetAtt, filled by whoever creates resources
    physical_ids: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def doc(self) -> dict[str, Any]:
        template, errors = decode(str(self.path))
        if errors or template is None:
            raise TemplateError(f"{self.path}: {errors}")
        return template

    @property
    def folder(self) -> Path:
        """Where CodeUri and DefinitionUri are relative to, as SAM resolves them."""
        return self.path.resolve().parent

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.doc.get("Resources", {})

    def of_type(self, type_name: str) -> dict[str, dict[str, Any]]:
        """Resources of one CloudFormation/SAM type whose Condition holds, by logical id."""
        return {
            lid: r
            for lid, r in self.resources.items()
            if r.get("Type") == type_name and self.condition(r.get("Condition"))
        }

    def properties(self, logical_id: str) -> dict[str, Any]:
        """A resource's Properties with every intrinsic resolved."""
        try:
            resource = self.resources[logical_id]
        except KeyError:
            raise TemplateError(f"no resource {logical_id!r} in {self.path.name}") from None
        return self.resolve(resource.get("Properties", {}))

    def parameter(self, name: str) -> Any:
        if name in self.parameters:
            return self.parameters[name]
        declaration = self.doc.get("Parameters", {}).get(name)
        if declaration is None:
            raise TemplateError(f"unknown parameter {name!r}")
        value = LOCAL_PARAMETERS.get(name, declaration.get("Default", ""))
        if declaration.get("Type") == "CommaDelimitedList":
            return [v for v in str(value).split(",") if v]
        return value

    def condition(self, name: str | None) -> bool:
        if name is None:
            return True
        return bool(self.resolve(self.doc["Conditions"][name]))

    def _pseudo(self, name: str) -> Any:
        pseudo_parameters = {
            "AWS::Region": self.region,
            "AWS::AccountId": self.account,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": self.stack_name,
            "AWS::NoValue": _NO_VALUE,
        }
        return pseudo_parameters[name]

    def ref(self, name: str) -> Any:
        if name.startswith("AWS::"):
            return self._pseudo(name)
        if name in self.doc.get("Parameters", {}):
            return self.parameter(name)
        if name in self.physical_ids:
            value = self.physical_ids[name]
            return value["Ref"] if isinstance(value, dict) else value
        raise TemplateError(f"Ref {name!r} has no local value yet")

    def find_in_map(self, map_name: Any, key: Any, second: Any) -> Any:
        """``Fn::FindInMap``: a value of the template's ``Mappings`` (keys may be intrinsics)."""
        map_name, key, second = (self.resolve(x) for x in (map_name, key, second))
        try:
            return self.doc.get("Mappings", {})[map_name][key][second]
        except (KeyError, TypeError):
            raise TemplateError(f"FindInMap [{map_name}, {key}, {second}]: not in Mappings") from None

    def get_att(self, name: str, attribute_name: str) -> Any:
        value = self.physical_ids.get(name)
        if isinstance(value, dict) and attribute_name in value:
            return value[attribute_name]
        raise TemplateError(f"GetAtt {name}.{attribute_name} has no local value yet")

    def resolve(self, node: Any) -> Any:
        """Resolve Ref, Fn::Sub, Fn::GetAtt, Fn::If, Fn::Join, Fn::Equals, Fn::Not, Fn::Select, Fn::FindInMap."""
        if isinstance(node, list):
            return [v for v in (self.resolve(x) for x in node) if v is not _NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((key, arg),) = node.items()
            function = _INTRINSICS.get(key)
            if function is not None:
                return function(self, arg)
        return {k: r for k, v in node.items() if (r := self.resolve(v)) is not _NO_VALUE}

    def _sub(self, arg: Any) -> str:
        if isinstance(arg, list):
            text, variables = arg[0], {k: self.resolve(v) for k, v in arg[1].items()}
        else:
            text, variables = arg, {}

        def value(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in variables:
                return str(variables[name])
            if "." in name and not name.startswith("AWS::"):
                return str(self.get_att(*name.split(".", 1)))
            return str(self.ref(name))

        return _SUB_VAR.sub(value, text)


class _NoValue:
    def __repr__(self) -> str:
        return "AWS::NoValue"


_NO_VALUE = _NoValue()


def _get_att(p: Template, arg: Any) -> Any:
    name, attribute_name = arg.split(".", 1) if isinstance(arg, str) else arg
    return p.get_att(name, attribute_name)


_INTRINSICS = {
    "Ref": lambda p, a: p.ref(a),
    "Fn::Sub": lambda p, a: p._sub(a),
    "Fn::GetAtt": _get_att,
    "Fn::If": lambda p, a: p.resolve(a[1] if p.condition(a[0]) else a[2]),
    "Fn::Equals": lambda p, a: p.resolve(a[0]) == p.resolve(a[1]),
    "Fn::Not": lambda p, a: not p.resolve(a[0]),
    "Fn::And": lambda p, a: all(p.resolve(x) for x in a),
    "Fn::Or": lambda p, a: any(p.resolve(x) for x in a),
    "Fn::Join": lambda p, a: a[0].join(str(x) for x in p.resolve(a[1])),
    "Fn::Select": lambda p, a: p.resolve(a[1])[int(p.resolve(a[0]))],
    "Fn::FindInMap": lambda p, a: p.find_in_map(*a[:3]),
    "Condition": lambda p, a: p.condition(a),
}


def create_table_from(dynamodb: Any, template: Template, logical_id: str) -> str:
    """Create a DynamoDB table in moto exactly as the template defines it; return its name."""
    props = template.properties(logical_id)
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
    description = dynamodb.describe_table(TableName=props["TableName"])["Table"]
    template.physical_ids[logical_id] = {
        "Ref": props["TableName"],
        "Arn": description["TableArn"],
        "StreamArn": description.get("LatestStreamArn"),
    }
    return props["TableName"]
