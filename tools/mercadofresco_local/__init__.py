"""The local run: the template's wiring on moto, real PostgreSQL/Redis, loopback providers."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from template_model import Template

RAIZ = Path(__file__).resolve().parents[2]  # the repository: template.yaml, functions/, statemachines/


@cache
def plantilla() -> Template:
    """``template.yaml`` as the template model reads it (once per process): what the run's tools ask it."""
    from template_model import Template

    return Template(path=RAIZ / "template.yaml")
