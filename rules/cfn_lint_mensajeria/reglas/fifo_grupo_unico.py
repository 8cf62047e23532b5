"""W9109: a FIFO queue fed with one constant MessageGroupId (best effort).

Detectable from the template: a Step Functions ``sqs:sendMessage`` task with a literal
``MessageGroupId``, a Pipe's ``SqsQueueParameters.MessageGroupId`` without a path, an
EventBridge rule target's ``SqsParameters.MessageGroupId`` (always literal). Not
detectable: groups chosen in function code (``send_message(MessageGroupId=...)``) or by
an SNS FIFO publisher — review those by hand.
"""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria import asl
from cfn_lint_mensajeria.recursos import (
    PIPE,
    STATE_MACHINES,
    base_dir,
    definition_path,
    path_to,
    props,
    resources,
)

_ADVICE = (
    "a single group serialises the whole queue (one message in flight): group by the key whose order "
    "matters (e.g. sku, pedido_id)"
)


def _literal(value: object) -> bool:
    """Whether a group id is the same for every message."""
    return isinstance(value, str) and "$" not in value and "{%" not in value


def _workflow_senders(cfn) -> list[RuleMatch]:
    machines = resources(cfn.template, *STATE_MACHINES)
    out = []
    for mid, definition, _ in asl.state_machines(cfn.template, base_dir(cfn)):
        for estado in asl.walk(definition or {}):
            if not str(estado.body.get("Resource", "")).startswith("arn:aws:states:::sqs:sendMessage"):
                continue
            params = estado.body.get("Parameters") or estado.body.get("Arguments") or {}
            if isinstance(params, dict) and _literal(params.get("MessageGroupId")):
                out.append(
                    RuleMatch(
                        definition_path(mid, machines[mid]),
                        f"{mid} state {estado.label} sends with the constant MessageGroupId "
                        f"'{params['MessageGroupId']}': {_ADVICE} (MessageGroupId.$).",
                    )
                )
    return out


class FifoGrupoUnico(CloudFormationLintRule):
    """Global order asked for "just in case" costs all the parallelism."""

    id = "W9109"
    shortdesc = "FIFO queue fed with one constant MessageGroupId"
    description = (
        "A literal MessageGroupId on a Step Functions sqs:sendMessage, a Pipe SQS target or an EventBridge "
        "rule target makes a FIFO queue serial; group ids set in code are not detected."
    )
    source_url = (
        "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagegroupid-property.html"
    )
    tags = ("sqs", "fifo", "mensajeria")

    def match(self, cfn):
        matches = _workflow_senders(cfn)
        for pid, pipe in resources(cfn.template, PIPE).items():
            group = ((props(pipe).get("TargetParameters") or {}).get("SqsQueueParameters") or {}).get("MessageGroupId")
            if _literal(group):
                matches.append(
                    RuleMatch(
                        path_to(pid, "Properties", "TargetParameters", "SqsQueueParameters", "MessageGroupId"),
                        f"Pipe {pid} sends every message with MessageGroupId '{group}': {_ADVICE} (e.g. $.body.sku).",
                    )
                )
        for rid, rule in resources(cfn.template, "AWS::Events::Rule").items():
            for i, target in enumerate(props(rule).get("Targets") or []):
                group = ((target or {}).get("SqsParameters") or {}).get("MessageGroupId")
                if _literal(group):
                    matches.append(
                        RuleMatch(
                            path_to(rid, "Properties", "Targets", i, "SqsParameters", "MessageGroupId"),
                            f"Rule {rid} target {i} uses the constant MessageGroupId '{group}' (EventBridge cannot "
                            f"vary it): {_ADVICE}, e.g. through a Pipe with a $.detail path.",
                        )
                    )
        return matches
