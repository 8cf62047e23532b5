"""E9111: worst-case attempts per dependency above 15 (SDK/HTTP × queue × workflow)."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.intentos import HTTP_ATTEMPTS_ENV, LIMIT, peor_caso
from cfn_lint_mensajeria.recursos import as_nestings, base_dir, nested_as, path_to


class PeorCaso(CloudFormationLintRule):
    """Retry layers multiply: 5 × 4 × 4 is 80 calls per order against a degraded provider."""

    id = "E9111"
    shortdesc = "Worst-case attempts per dependency above 15"
    description = (
        "HTTP/SDK attempts (HTTP_MAX_ATTEMPTS, default 2) x maxReceiveCount x workflow attempts must "
        "stay <= 15 on every route to a dependency."
    )
    source_url = "https://aws.amazon.com/builders-library/timeouts-retries-and-backoff-with-jitter/"
    tags = ("retry", "mensajeria")

    def match(self, cfn):
        return [
            RuleMatch(
                path_to(ruta.funcion),
                nested_as(
                    f"Worst case {ruta.total} attempts > {LIMIT} on {ruta.describir()}: let one layer govern and keep "
                    f"the others minimal (lower the workflow's MaxAttempts, the queue's maxReceiveCount or "
                    f"{HTTP_ATTEMPTS_ENV}).",
                    anidada,
                ),
            )
            for anidada, documento in as_nestings(cfn)
            for ruta in peor_caso(documento, base_dir(cfn))
            if ruta.total > LIMIT
        ]
