"""E9104: an SQS event source mapping without ReportBatchItemFailures."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import consumers


class SinFallosParciales(CloudFormationLintRule):
    """Without partial batch responses one bad message sends the whole batch back."""

    id = "E9104"
    shortdesc = "SQS mapping without ReportBatchItemFailures"
    description = (
        "An SQS event source (SAM Events: SQS or EventSourceMapping) needs "
        "FunctionResponseTypes: [ReportBatchItemFailures]."
    )
    source_url = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html"
    tags = ("sqs", "lambda", "mensajeria")

    def match(self, cfn):
        return [
            RuleMatch(
                list(c.path),
                f"SQS mapping of {c.resource} on {c.source} lacks FunctionResponseTypes: "
                "[ReportBatchItemFailures]: add it and return batchItemFailures (Powertools BatchProcessor), "
                "or one failing message redelivers the whole batch and burns its receive counts.",
            )
            for c in consumers(cfn.template, sqs=True)
            if c.kind == "lambda" and "ReportBatchItemFailures" not in (c.mapping.get("FunctionResponseTypes") or [])
        ]
