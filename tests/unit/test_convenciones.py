"""Conventions that keep the repository honest as it grows.

Every function has its folder in the template, a handler where SAM and Lambda look for it,
sample events for ``sam local invoke -e`` and tests that feed them to it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from sam_emulator.template import Template

RAIZ = Path(__file__).resolve().parents[2]
FUNCIONES = sorted(p.name for p in (RAIZ / "functions").iterdir() if p.is_dir() and not p.name.startswith("_"))


def _code_uris() -> set[str]:
    """Every function any deploy creates (pedido_durable only with WorkflowEngine=DurableFunction), in the root
    or in a nested unit (the defaults create the Simuladores unit), its CodeUri relative to the repository: a
    unit's is relative to the unit's own folder (``../functions/simulador/``)."""
    return {
        (plantilla.folder / recurso["Properties"]["CodeUri"]).resolve().relative_to(RAIZ).as_posix()
        for parametros in ({}, {"WorkflowEngine": "DurableFunction"})
        for _, plantilla in Template(parameters=parametros).walk()
        for recurso in plantilla.resources.values()
        if recurso["Type"] == "AWS::Serverless::Function"
    }


def test_functions_exist_and_each_is_in_the_template() -> None:
    assert FUNCIONES, "no functions/ folder found"
    assert {f"functions/{nombre}" for nombre in FUNCIONES} == _code_uris()


@pytest.mark.parametrize("nombre", FUNCIONES)
def test_function_has_a_thin_lambda_handler(nombre: str) -> None:
    app = RAIZ / "functions" / nombre / "app.py"
    arbol = ast.parse(app.read_text())
    funciones = {n.name for n in arbol.body if isinstance(n, ast.FunctionDef)}
    assert "lambda_handler" in funciones, f"{app} has no lambda_handler (Globals: Handler app.lambda_handler)"
    assert ast.get_docstring(arbol), f"{app} needs a one-line module docstring (trigger -> effect)"


@pytest.mark.parametrize("nombre", FUNCIONES)
def test_function_has_sample_events_and_tests_that_use_them(nombre: str) -> None:
    prefijo = nombre.replace("_", "-")
    # events/<sub>/ holds events sam local cannot invoke (the durable engine's); they count too
    eventos = sorted(e for patron in (f"{prefijo}.json", f"{prefijo}-*.json") for e in (RAIZ / "events").rglob(patron))
    assert eventos, f"events/**/{prefijo}-*.json: no sample event for functions/{nombre}"
    pruebas = " ".join(p.read_text() for p in (RAIZ / "tests").rglob("test_*.py"))
    usados = [e.name for e in eventos if e.name in pruebas]
    assert usados, f"no test feeds any of {[e.name for e in eventos]} to functions/{nombre}"
