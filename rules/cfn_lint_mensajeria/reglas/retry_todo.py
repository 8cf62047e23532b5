"""E9107: a Step Functions Retry on States.ALL, which also retries business errors."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria import asl
from cfn_lint_mensajeria.recursos import as_int

_CATCH_ALL = ("States.ALL", "States.TaskFailed")


def retries_everything(retry: list, index: int) -> bool:
    """Whether Retry[index] catches all task errors with no earlier "never retry" entry.

    Retriers are tried in order, so a ``MaxAttempts: 0`` entry listing the business
    errors before the catch-all is the documented way to keep them out of it.
    """
    retrier = retry[index]
    if as_int(retrier.get("MaxAttempts")) == 0 or not set(retrier.get("ErrorEquals") or []) & set(_CATCH_ALL):
        return False
    return not any(isinstance(r, dict) and as_int(r.get("MaxAttempts")) == 0 for r in retry[:index])


class RetryTodo(CloudFormationLintRule):
    """A declined card retried with backoff delays the answer and fixes nothing."""

    id = "E9107"
    shortdesc = "Retry on States.ALL retries business errors"
    description = (
        "A Retry on States.ALL/States.TaskFailed retries permanent (business) errors too: list the "
        "transient errors, or put a MaxAttempts: 0 retrier for the business errors before it."
    )
    source_url = "https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html"
    tags = ("stepfunctions", "retry", "mensajeria")

    def match(self, cfn):
        matches = []
        for mid, definition, where in asl.readable_definitions(cfn):
            for estado in asl.walk(definition):
                retry = [r for r in estado.body.get("Retry") or [] if isinstance(r, dict)]
                for i in range(len(retry)):
                    if retries_everything(retry, i):
                        message = (
                            f"{mid} state {estado.label} Retry[{i}] retries {retry[i].get('ErrorEquals')}, which "
                            "includes business errors (e.g. a declined card): list only transient errors "
                            "(e.g. PasarelaNoDisponible, States.Timeout) and Catch the business ones, or add a "
                            "MaxAttempts: 0 retrier for them before this one."
                        )
                        matches.append(RuleMatch(where, message))
        return matches
