"""E9110: an idempotency table without TTL."""

from __future__ import annotations

import json

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import FUNCTIONS, path_to, props, ref_id, resources

_TABLES = ("AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable", "AWS::Serverless::SimpleTable")
_MARKERS = ("idempot",)


def idempotency_tables(template: dict) -> set[str]:
    """Tables named like idempotency tables, or passed to a function in an *IDEMPOT* variable."""
    tables = resources(template, *_TABLES)
    found = {
        tid
        for tid, res in tables.items()
        if any(m in (tid + json.dumps(props(res).get("TableName", ""))).lower() for m in _MARKERS)
    }
    for res in resources(template, *FUNCTIONS).values():
        variables = (props(res).get("Environment") or {}).get("Variables") or {}
        for name, value in variables.items() if isinstance(variables, dict) else ():
            if any(m in name.lower() for m in _MARKERS) and ref_id(value) in tables:
                found.add(ref_id(value))
    return found


class TablaSinTtl(CloudFormationLintRule):
    """Without TTL an idempotency table grows for ever with records nobody reads."""

    id = "E9110"
    shortdesc = "Idempotency table without TTL"
    description = "An idempotency table needs TimeToLiveSpecification (Enabled: true, e.g. expira_en, 24 h)."
    source_url = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html"
    tags = ("dynamodb", "idempotency", "mensajeria")

    def match(self, cfn):
        tables = resources(cfn.template, *_TABLES)
        matches = []
        for tid in sorted(idempotency_tables(cfn.template)):
            ttl = props(tables[tid]).get("TimeToLiveSpecification") or {}
            if ttl.get("Enabled") is True and ttl.get("AttributeName"):
                continue
            matches.append(
                RuleMatch(
                    path_to(tid),
                    (
                        f"Idempotency table {tid} has no TTL: add TimeToLiveSpecification {{AttributeName: expira_en, "
                        "Enabled: true} (an AWS::DynamoDB::Table; SimpleTable cannot) and write expira_en = now + 24 h."
                    ),
                )
            )
        return matches
