"""One direction of knowledge: the product knows nothing of the emulator, the emulator nothing of the product.

The product is the layers and the functions (what ships to Lambda); the emulator is
``packages/sam_emulator``; the tools (``tools/``: the local run, the chaos campaign, the reports, the
test levels...) and the tests use both. How the tools depend on each other is ``test_import_graph.py``'s.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parents[2]
PRODUCTO = ("layers", "functions")
EMULADOR = ("packages/sam_emulator/sam_emulator",)
# Every package under tools/ and tools/levels/ (a new tool is on the other side as soon as it exists).
HERRAMIENTAS = {
    p.name for raiz in ("tools", "tools/levels") for p in (RAIZ / raiz).iterdir() if (p / "__init__.py").is_file()
}


def _importados(carpetas: tuple[str, ...]) -> dict[str, set[str]]:
    """Top-level package of every import, per file."""
    resultado: dict[str, set[str]] = {}
    for carpeta in carpetas:
        for fichero in sorted((RAIZ / carpeta).rglob("*.py")):
            raices = set()
            for nodo in ast.walk(ast.parse(fichero.read_text())):
                if isinstance(nodo, ast.Import):
                    raices |= {alias.name.split(".")[0] for alias in nodo.names}
                elif isinstance(nodo, ast.ImportFrom) and nodo.module and not nodo.level:
                    raices.add(nodo.module.split(".")[0])
            resultado[fichero.relative_to(RAIZ).as_posix()] = raices
    return resultado


@pytest.mark.parametrize(
    ("carpetas", "prohibidos"),
    [
        (PRODUCTO, {"sam_emulator", "moto", *HERRAMIENTAS}),
        (EMULADOR, {"mercadofresco", "simulador", *HERRAMIENTAS}),
    ],
    ids=["product", "emulator"],
)
def test_package_imports_nothing_from_the_other_side(carpetas: tuple[str, ...], prohibidos: set[str]) -> None:
    # GIVEN every module of one side  WHEN its imports are read
    cruzados = {f: sorted(raices & prohibidos) for f, raices in _importados(carpetas).items() if raices & prohibidos}
    # THEN none reaches the other side
    assert cruzados == {}
