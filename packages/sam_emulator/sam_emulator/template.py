"""``template.yaml`` as the single source of truth for tests and the local run.

The template is read and resolved by the template model (``template_model.Template``: cfn-lint's
decoder, ``Fn::ForEach``, nested units, intrinsics; one reader for every tool, issue 40). What is the
emulator's own: the parameters a local run passes for the "use an existing one" infrastructure, and
creating a table in moto exactly as the template defines it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from template_model import Template as _ModelTemplate
from template_model import TemplateError

__all__ = ["LOCAL_PARAMETERS", "Template", "TemplateError", "create_table_from"]


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


@dataclass
class Template(_ModelTemplate):
    """The template model with the local run's parameters as defaults."""

    parameter_defaults: dict[str, Any] = field(default_factory=lambda: dict(LOCAL_PARAMETERS))


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
