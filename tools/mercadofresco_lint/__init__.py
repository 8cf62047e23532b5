"""What ``make lint`` runs besides ruff, cfn-lint and checkov's own rules: the project's checks of its templates.

- :mod:`.asl`: the state machine definitions' checks only this project can make (its error names, its
  ``DefinitionSubstitutions``), on top of the rule pack's (:mod:`cfn_lint_mensajeria.asl`).

The copies checkov scans (``template.yaml`` as a ``samconfig.toml`` profile deploys it, and with
``Chaos=enabled``: checkov evaluates conditions at the parameters' defaults, and expands no
``Fn::ForEach``) are the template model's: ``python -m template_model expand``.
"""

from pathlib import Path

RAIZ = Path(__file__).resolve().parents[2]  # the repository: template.yaml, samconfig.toml
