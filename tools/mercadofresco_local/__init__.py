"""The local run: the template's wiring on moto, real PostgreSQL/Redis, loopback providers."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from template_model import Template

RAIZ = Path(__file__).resolve().parents[2]  # the repository: template.yaml, functions/, statemachines/
PARAMETRO_MOTOR = "WorkflowEngine"  # the template's parameter that selects the order workflow's engine


@cache
def plantilla(motor: str | None = None) -> Template:
    """``template.yaml`` as the template model reads it (once per process): what the run's tools ask it.

    ``motor``: the order workflow's engine (``WorkflowEngine``) the run chose; None, the template's default.
    """
    from template_model import Template

    return Template(path=RAIZ / "template.yaml", parameters={PARAMETRO_MOTOR: motor} if motor else {})


def argumento_motor(parser: argparse.ArgumentParser, que: str = "") -> None:
    """``--motor``, the order workflow's engine: the template's ``WorkflowEngine`` values (``mf-demo``, ``mf-caos``)."""
    parametro = plantilla().doc["Parameters"][PARAMETRO_MOTOR]
    parser.add_argument(
        "--motor",
        choices=parametro["AllowedValues"],
        help=f"{que}el motor del flujo de pedidos (el parámetro {PARAMETRO_MOTOR} de la plantilla; por defecto "
        f"{parametro['Default']}, la máquina de estados de la lección)",
    )
