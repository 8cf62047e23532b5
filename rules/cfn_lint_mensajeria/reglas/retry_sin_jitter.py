"""E9106: a Step Functions Retry without full jitter, a delay cap or a bounded MaxAttempts."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria import asl
from cfn_lint_mensajeria.recursos import as_int

MAX_ATTEMPTS_LIMIT = 10  # beyond this a retrier is an infinite loop in practice


def retrier_problems(retrier: dict) -> list[str]:
    """What a retrier lacks, as fixes to apply."""
    if as_int(retrier.get("MaxAttempts")) == 0:
        return []  # an explicit "never retry these" entry
    problems = []
    if retrier.get("JitterStrategy") != "FULL":
        problems.append("add JitterStrategy: FULL")
    if "MaxDelaySeconds" not in retrier:
        problems.append("add MaxDelaySeconds (a cap on the backoff)")
    attempts = as_int(retrier.get("MaxAttempts"))
    if attempts is not None and attempts > MAX_ATTEMPTS_LIMIT:
        problems.append(f"bound MaxAttempts (is {attempts}, keep <= {MAX_ATTEMPTS_LIMIT})")
    return problems


class RetrySinJitter(CloudFormationLintRule):
    """Retries without jitter synchronise the recovery into the next outage."""

    id = "E9106"
    shortdesc = "Step Functions Retry without jitter, cap or bound"
    description = "Every Retry entry needs JitterStrategy: FULL, MaxDelaySeconds and MaxAttempts <= 10."
    source_url = "https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html"
    tags = ("stepfunctions", "retry", "mensajeria")

    def match(self, cfn):
        matches = []
        for mid, definition, where in asl.readable_definitions(cfn):
            for estado, i, retrier in asl.retriers(definition):
                problems = retrier_problems(retrier)
                if problems:
                    matches.append(
                        RuleMatch(
                            where,
                            f"{mid} state {estado.label} Retry[{i}] "
                            f"{retrier.get('ErrorEquals')}: {'; '.join(problems)}.",
                        )
                    )
        return matches
