"""Checks of the project's state machine definitions that neither cfn-lint nor SAM make.

The structural checks themselves (every ``Next``/``Default``/``Catch`` target exists, every
state is reachable, and cfn-lint's E3601 through a native ``AWS::StepFunctions::StateMachine``
wrapper) live once, standalone, in the rule pack: :mod:`cfn_lint_mensajeria.asl`. This module
adds what only this project can know:

- :func:`errores_de_dominio`: the error names a ``Retry``/``Catch`` matches that are ours (not
  ``States.*`` nor an AWS service's), which must be class names in :mod:`mercadofresco.errors`
  (Step Functions matches a Lambda failure by the exception's class name: a renamed class
  silently stops matching);
- :func:`marcadores`: the ``${Name}`` placeholders, which must equal the template's
  ``DefinitionSubstitutions`` keys (SAM leaves an unknown one in the text, unresolved).
"""

from __future__ import annotations

import re
from typing import Any

from cfn_lint_mensajeria import asl

_MARKER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
# Error-name prefixes of AWS integrations (service errors, never our exceptions).
_PREFIJOS_AWS = ("States.", "Lambda.", "Sandbox.", "DynamoDB.", "SQS.", "SNS.", "EventBridge.")


def problemas(definicion: dict[str, Any]) -> list[str]:
    """Every structural and schema problem of a definition; empty when it is clean."""
    return [*asl.structure_problems(definicion), *asl.schema_problems(definicion)]


def errores_de_dominio(definicion: dict[str, Any]) -> set[str]:
    """Error names of the project's own exceptions matched anywhere in the definition."""
    nombres: set[str] = set()
    for estado in asl.walk(definicion):
        for clausula in [*(estado.body.get("Retry") or []), *(estado.body.get("Catch") or [])]:
            nombres.update(clausula.get("ErrorEquals") or [])
    return {n for n in nombres if not n.startswith(_PREFIJOS_AWS)}


def marcadores(texto: str) -> set[str]:
    """The ``${Name}`` placeholders of an ASL text (what ``DefinitionSubstitutions`` must define)."""
    return set(_MARKER.findall(texto))
