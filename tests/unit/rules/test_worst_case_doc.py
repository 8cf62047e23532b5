"""The project's worst-case attempts, computed from template.yaml + its ASL, match the written doc.

The lesson: write down how many attempts a dependency can receive in the worst case;
above 15 something retries too much. The number is computed by the rule pack
(``cfn_lint_mensajeria.intentos.peor_caso``) and the doc must say the same.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cfn_lint_mensajeria import asl
from cfn_lint_mensajeria.intentos import LIMIT, peor_caso
from template_model import as_nested, nestings, read

RAIZ = Path(__file__).resolve().parents[3]
PLANTILLA = RAIZ / "template.yaml"
DOC = RAIZ / "docs" / "worst-case-attempts.md"


@pytest.fixture(scope="module")
def rutas():
    plantilla = read(PLANTILLA)
    maquinas = list(asl.state_machines(plantilla, RAIZ))
    if not maquinas:
        pytest.skip("template.yaml has no state machine yet (statemachines/*.asl.json not wired): nothing to compute")
    sin_leer = [f"{mid}: {origen}" for mid, definicion, origen in maquinas if definicion is None]
    assert not sin_leer, sin_leer
    # and each unit's, as cfn-lint lints it, file by file, with what the root passes it (the projection's queue
    # is the store unit's, its maxReceiveCount the root's Mappings.Entrega)
    anidadas = [u for unidad in sorted((RAIZ / "unidades").glob("*.yaml")) for u in nestings(unidad)]
    return [*peor_caso(plantilla, RAIZ), *(r for u in anidadas for r in peor_caso(as_nested(u.doc, u), RAIZ))]


def test_worst_case_project_no_path_exceeds_15(rutas):
    # GIVEN the project's template WHEN computing every route THEN none exceeds the lesson's 15
    assert rutas, "the template has state machines or queue consumers but no route to a function"
    assert "ProyeccionFunction" in {r.funcion for r in rutas}  # a unit's consumer is counted too
    excesos = [r.describir() for r in rutas if r.total > LIMIT]
    assert excesos == []


def _distintivo(ruta) -> str:
    """What tells this route from others to the same function: its workflow state, else its queue."""
    paso = ruta.pasos[-2] if len(ruta.pasos) > 1 else ruta.pasos[0]
    if ":" in paso:
        return paso.split(":", 1)[1].split(" (", 1)[0].rsplit("/", 1)[-1]
    return ruta.pasos[0].split(" ", 1)[0]


def test_worst_case_project_matches_the_document(rutas):
    # GIVEN the written doc
    if not DOC.exists():
        pytest.skip(f"{DOC.relative_to(RAIZ)} does not exist yet (engineer 5a writes it)")
    texto = DOC.read_text(encoding="utf-8")
    # WHEN looking for each computed route: lines naming its function or dependency, narrowed to those
    # naming its state/queue when any do THEN one of them carries the same total
    faltan = []
    for ruta in rutas:
        lineas = [ln for ln in texto.splitlines() if ruta.funcion in ln or ruta.dependencia in ln]
        lineas = [ln for ln in lineas if _distintivo(ruta) in ln] or lineas
        if not any(re.search(rf"(?<![\d.]){ruta.total}(?![\d.])", ln) for ln in lineas):
            faltan.append(ruta.describir())
    assert faltan == [], "routes missing or with another total in the doc"
