"""cfn-lint rules for reliable messaging (lesson 07-05's common mistakes as checks).

The rule modules in ``reglas/`` are loaded by cfn-lint as a rules directory
(``cfn-lint template.yaml --append-rules <package>/reglas`` or ``append_rules`` in
``.cfnlintrc``); they import their helpers from this package, so install it first
(``pip install <repo>/rules``). Helpers are importable on their own:
``cfn_lint_mensajeria.intentos.peor_caso`` (worst-case attempts per dependency) and
``cfn_lint_mensajeria.asl`` (structure checks of a Step Functions definition).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RULES_DIR"]

# What to pass to --append-rules / append_rules when the package is pip-installed.
RULES_DIR = str(Path(__file__).resolve().parent / "reglas")
