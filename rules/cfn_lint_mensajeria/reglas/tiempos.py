"""E9114: a time bound broken by another (lease vs Timeout, re-ask wait vs lease, claim lease vs execution bound)."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import nested_as
from cfn_lint_mensajeria.tiempos import limites, problemas


class TiemposIncoherentes(CloudFormationLintRule):
    """Raising one bound without the one that depends on it reopens a double side effect."""

    id = "E9114"
    shortdesc = "Time bounds out of order"
    description = (
        "A function's IDEMPOTENCY_LEASE_S must exceed its Timeout; a Wait that asks again must outlast that lease; "
        "the order claim's lease must exceed the workflow's TimeoutSeconds (a durable function's ExecutionTimeout)."
    )
    source_url = "https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html"
    tags = ("lambda", "stepfunctions", "mensajeria")

    def match(self, cfn):
        return [
            RuleMatch(ruta, nested_as(mensaje, anidada))
            for anidada, limites_de in limites(cfn)
            for ruta, mensaje in problemas(limites_de)
        ]
