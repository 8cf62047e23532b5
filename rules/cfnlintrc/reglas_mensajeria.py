"""The rule pack as this repository's ``.cfnlintrc`` loads it: works whether or not it is installed.

cfn-lint loads each file of an ``append_rules`` directory by its path, outside any package, and
the pack's rule modules import their helpers from ``cfn_lint_mensajeria``, which reads the template
through ``template_model``. Pointed straight at ``cfn_lint_mensajeria/reglas``, a cfn-lint without the
pack installed (a global one, a CI image, ``pip install cfn-lint`` alone) stops with ``No module named
'cfn_lint_mensajeria'``. This one file puts ``rules/`` and ``packages/template_model`` on ``sys.path``
when the pack is not importable and exposes every rule class of ``reglas/``, so ``cfn-lint
template.yaml`` runs the pack from any cfn-lint.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from cfnlint.rules import CloudFormationLintRule

try:
    import cfn_lint_mensajeria.reglas as _reglas
except ModuleNotFoundError:
    # The pack and the template model it reads with (packages/template_model), from this checkout.
    _RAIZ = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(_RAIZ / "rules"), str(_RAIZ / "packages" / "template_model")]
    import cfn_lint_mensajeria.reglas as _reglas


def _clases_de_reglas() -> dict[str, type[CloudFormationLintRule]]:
    clases = {}
    for info in pkgutil.iter_modules(_reglas.__path__):
        modulo = importlib.import_module(f"{_reglas.__name__}.{info.name}")
        for nombre, clase in vars(modulo).items():
            es_regla = isinstance(clase, type) and issubclass(clase, CloudFormationLintRule)
            if es_regla and clase.__module__ == modulo.__name__:
                clases[nombre] = clase
    return clases


# cfn-lint instantiates every rule class it finds in this module's namespace, once each.
globals().update(_clases_de_reglas())
