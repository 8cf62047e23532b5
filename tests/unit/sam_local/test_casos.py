"""``events/casos.yaml``: what each sample event must do under ``sam local invoke``, read and checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from mercadofresco_local import plantilla
from sam_local.cases import CASES, CASES_FILE, CasesError, load, stand_in
from template_model.wiring import FUNCTIONS

if TYPE_CHECKING:
    from pathlib import Path


def test_casos_every_sample_event_has_one_for_a_function_of_the_template() -> None:
    # GIVEN the functions' sample events and the template's functions
    # (the same list the sam local level runs: events/flujo/ and events/durable/ are not functions' events)
    eventos = sorted(p.name for p in CASES_FILE.parent.glob("*.json") if not p.name.startswith("env-vars"))
    funciones = {unidad + f for unidad, t in plantilla().walk() for f in t.of_type(*FUNCTIONS)}  # as SAM names them
    # WHEN the cases file is read  THEN each event has its case, for a function the template has
    assert sorted(CASES) == eventos
    assert {c.function for c in CASES.values()} <= funciones
    # AND a case that counts effects is for a function that calls a provider (its stand-in counts them)
    assert [e for e, c in CASES.items() if c.effects is not None and stand_in(plantilla(), c.function) is None] == []


@pytest.mark.parametrize(
    ("texto", "nombrado"),
    [
        ("x.json: {error: E}\n", "funcion"),
        ("x.json: {funcion: F, efectos: {}, motivos: []}\n", "motivos"),
        ("x.json: {funcion: F, preparar: nada}\n", "nada"),
        ("- x.json\n", "a mapping"),
    ],
    ids=["no function", "unknown field", "unknown preparation", "not a mapping"],
)
def test_casos_a_wrong_entry_is_refused_naming_it(tmp_path: Path, texto: str, nombrado: str) -> None:
    # GIVEN a cases file with one wrong entry  WHEN read  THEN the error names what is wrong
    ruta = tmp_path / "casos.yaml"
    ruta.write_text(texto)
    with pytest.raises(CasesError, match=nombrado):
        load(ruta)
