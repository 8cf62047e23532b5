"""E9113: a KMS key policy conditions EventBridge's grant on aws:SourceArn/aws:SourceAccount/aws:SourceOrgID."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import path_to, props, resources

_SERVICIO = "events.amazonaws.com"
_CLAVES_ORIGEN = ("aws:sourcearn", "aws:sourceaccount", "aws:sourceorgid", "aws:sourceorgpaths")


def _lista(valor: object) -> list:
    return valor if isinstance(valor, list) else [valor]


def _principales(declaracion: dict) -> list:
    principal = declaracion.get("Principal")
    if not isinstance(principal, dict):
        return []
    return [p for p in _lista(principal.get("Service")) if isinstance(p, str)]


class ClaveEntregaServicios(CloudFormationLintRule):
    """An EventBridge delivery to an encrypted queue or topic fails, with its DLQ write, under such a condition."""

    id = "E9113"
    shortdesc = "KMS key policy denies EventBridge deliveries"
    description = (
        "The KMS requests EventBridge makes to deliver to an encrypted SQS queue or SNS topic (and to "
        "the rule's DLQ) carry no aws:SourceArn/aws:SourceAccount/aws:SourceOrgID: a key-policy "
        "statement for events.amazonaws.com conditioned on them denies every delivery, silently. "
        "Restrict the senders in the queue/topic policy (aws:SourceArn works there)."
    )
    source_url = "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html"
    tags = ("kms", "eventbridge", "mensajeria")

    def match(self, cfn):
        matches = []
        for kid, clave in sorted(resources(cfn.template, "AWS::KMS::Key").items()):
            politica = props(clave).get("KeyPolicy")
            declaraciones = (politica or {}).get("Statement") if isinstance(politica, dict) else None
            for i, st in enumerate(_lista(declaraciones or [])):
                if not isinstance(st, dict) or st.get("Effect") != "Allow" or _SERVICIO not in _principales(st):
                    continue
                condicion = st.get("Condition") if isinstance(st.get("Condition"), dict) else {}
                claves = sorted(
                    {k for op in condicion.values() if isinstance(op, dict) for k in op if k.lower() in _CLAVES_ORIGEN}
                )
                if claves:
                    matches.append(
                        RuleMatch(
                            path_to(kid, "Properties", "KeyPolicy", "Statement", i, "Condition"),
                            f"Key {kid}: the events.amazonaws.com statement is conditioned on {', '.join(claves)}; "
                            "EventBridge's KMS requests for deliveries carry no such key, so every delivery to an "
                            "encrypted queue/topic and its DLQ write is denied. Drop the condition here and restrict "
                            "the senders in the queue or topic policy (aws:SourceArn of the rule).",
                        )
                    )
        return matches
