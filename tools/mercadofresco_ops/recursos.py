"""A deployed stack's resources with those of the units it nests (decision 0130), by logical id.

A unit (``AWS::Serverless::Application``, deployed as an ``AWS::CloudFormation::Stack``) is a stack of its
own: its resources are not among its parent's. The template's logical ids are unique across the root and
its units, so one mapping holds them all, whichever stack each lives in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from botocore.client import BaseClient

PILA_ANIDADA = "AWS::CloudFormation::Stack"


def recursos_de_la_pila(cfn: BaseClient, pila: str) -> dict[str, str]:
    """Logical id -> physical id of every resource of ``pila`` and of each stack it nests, created or not gone."""
    return {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resumenes_de_la_pila(cfn, pila)}


def resumenes_de_la_pila(cfn: BaseClient, pila: str) -> Iterator[dict[str, Any]]:
    """``ListStackResources``' summary of every resource of ``pila`` and of the stacks it nests, created or not gone."""
    for pagina in cfn.get_paginator("list_stack_resources").paginate(StackName=pila):
        for r in pagina["StackResourceSummaries"]:
            if not r.get("PhysicalResourceId") or r.get("ResourceStatus") == "DELETE_COMPLETE":
                continue
            yield r
            if r["ResourceType"] == PILA_ANIDADA:
                yield from resumenes_de_la_pila(cfn, r["PhysicalResourceId"])
