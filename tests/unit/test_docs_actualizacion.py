"""docs/deploying.md's upgrade steps name what they move (decision 0130): every resource of a unit every stack
creates, which an update of a stack deployed before that unit must refactor into the unit's stack."""

from __future__ import annotations

import re

from template_model import Template

from tests.conftest import RAIZ

PAGINA = RAIZ / "docs" / "deploying.md"
SECCION = "## Updating a stack deployed before its units"
# A unit's own copies of the shared layers: new names, created beside the root's, nothing to move.
NUEVOS = {"AWS::Serverless::LayerVersion", "AWS::Lambda::LayerVersion"}


def _seccion() -> str:
    texto = PAGINA.read_text()
    inicio = texto.index(SECCION)
    fin = texto.find("\n## ", inicio + len(SECCION))
    return texto[inicio : fin if fin >= 0 else None]


def test_the_upgrade_section_names_every_resource_an_unconditional_unit_takes_over() -> None:
    # GIVEN the units every stack creates (no Condition) and the resources each holds
    raiz = Template()
    unidades = [lid for lid, r in raiz.of_type("AWS::Serverless::Application").items() if "Condition" not in r]
    assert unidades, "no unit is created in every stack"
    nombrados = set(re.findall(r"`([A-Za-z0-9]+)`", _seccion()))
    for unidad in unidades:
        plantilla = raiz.units()[unidad]
        movidos = {lid for lid, r in plantilla.resources.items() if r["Type"] not in NUEVOS}
        # THEN the section names the unit and every resource an update must move into its stack
        assert unidad in nombrados
        assert movidos <= nombrados, f"{unidad}: {sorted(movidos - nombrados)}"
