"""The local run: the template's wiring on moto, real PostgreSQL/Redis, loopback providers."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
