"""E9103: a queue's visibility timeout is under 6 × its consuming function's timeout."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import (
    DEFAULT_VISIBILITY_TIMEOUT_S,
    SQS_QUEUE,
    as_int,
    consumers,
    function_timeout_s,
    path_to,
    props,
    resources,
)

FACTOR = 6  # AWS's guidance for SQS event sources, and the lesson's rule


class VisibilidadCorta(CloudFormationLintRule):
    """A message that becomes visible while its first consumer still works is processed twice."""

    id = "E9103"
    shortdesc = "Visibility timeout below 6x the consumer's timeout"
    description = "An SQS queue consumed by Lambda needs VisibilityTimeout >= 6 x the function's Timeout."
    source_url = "https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html"
    tags = ("sqs", "lambda", "mensajeria")

    def match(self, cfn):
        template = cfn.template
        queues = resources(template, SQS_QUEUE)
        matches = []
        for consumer in consumers(template, sqs=True):
            timeout_s = function_timeout_s(template, consumer.function)
            if consumer.source not in queues or timeout_s is None:
                continue
            qprops = props(queues[consumer.source])
            visibility_s = as_int(qprops.get("VisibilityTimeout", DEFAULT_VISIBILITY_TIMEOUT_S))
            if visibility_s is None or visibility_s >= FACTOR * timeout_s:
                continue
            where = ("Properties", "VisibilityTimeout") if "VisibilityTimeout" in qprops else ()
            matches.append(
                RuleMatch(
                    path_to(consumer.source, *where),
                    f"Queue {consumer.source} has VisibilityTimeout {visibility_s} s but its consumer "
                    f"{consumer.function} may run {timeout_s} s: set VisibilityTimeout >= {FACTOR * timeout_s} s "
                    f"({FACTOR} x Timeout) or lower the function's Timeout, or a slow call is delivered twice.",
                )
            )
        return matches
