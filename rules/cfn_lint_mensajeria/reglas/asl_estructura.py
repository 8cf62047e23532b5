"""E9112: a SAM state machine's definition is unreadable, has dangling or unreachable states,
or fails cfn-lint's own ASL schema (E3601, which cfn-lint does not apply to SAM machines)."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria import asl
from cfn_lint_mensajeria.recursos import SAM_STATE_MACHINE, STATE_MACHINES, base_dir, definition_path, resources


class AslEstructura(CloudFormationLintRule):
    """A Next that names no state only fails when an execution reaches it."""

    id = "E9112"
    shortdesc = "State machine definition structure"
    description = (
        "Every Next/Default/Catch target exists, every state is reachable from StartAt, and a SAM "
        "state machine's Definition/DefinitionUri passes cfn-lint's ASL schema (E3601)."
    )
    source_url = "https://states-language.net/spec.html"
    tags = ("stepfunctions", "asl", "mensajeria")

    def match(self, cfn):
        machines = resources(cfn.template, *STATE_MACHINES)
        matches = []
        for mid, definition, origin in asl.state_machines(cfn.template, base_dir(cfn)):
            where = definition_path(mid, machines[mid])
            if definition is None:
                if "DefinitionUri" in where:
                    matches.append(RuleMatch(where, f"{mid}: {origin}: fix the DefinitionUri path or the file."))
                continue
            problems = asl.structure_problems(definition)
            if machines[mid].get("Type") == SAM_STATE_MACHINE:
                problems += [f"schema: {p}" for p in asl.schema_problems(definition)]
            matches.extend(RuleMatch(where, f"{mid} ({origin}) {p}: fix the definition.") for p in problems)
        return matches
