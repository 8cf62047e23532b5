"""E9105: an SQS event source mapping without ScalingConfig.MaximumConcurrency."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import consumers


class SinTopeConcurrencia(CloudFormationLintRule):
    """Uncapped pollers scale up exactly when the dependency behind them degrades."""

    id = "E9105"
    shortdesc = "SQS mapping without MaximumConcurrency"
    description = "An SQS event source needs ScalingConfig.MaximumConcurrency (backpressure towards the queue)."
    source_url = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html"
    tags = ("sqs", "lambda", "backpressure", "mensajeria")

    def match(self, cfn):
        return [
            RuleMatch(
                list(c.path),
                f"SQS mapping of {c.resource} on {c.source} has no ScalingConfig.MaximumConcurrency: set it "
                "(e.g. 20) so a growing queue does not become more pressure on a degraded dependency.",
            )
            for c in consumers(cfn.template, sqs=True)
            if c.kind == "lambda" and not (c.mapping.get("ScalingConfig") or {}).get("MaximumConcurrency")
        ]
