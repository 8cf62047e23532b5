"""No import cycle in the project's Python packages, and the tools' lifecycles in one direction.

The graph holds every module of the packages under ``tools/`` (and ``tools/levels/``),
``packages/``, ``rules/`` and the layers, with an edge for every import statement that names
another of them, wherever it sits: at module level, inside a function or under
``TYPE_CHECKING``. A function-level import does not remove a cycle, it only delays it, and a
type-only import is knowledge of the other module all the same. ``from a.b import c`` is an edge
to the module ``a.b.c`` when there is one, else to ``a.b``; importing a package is an edge to its
``__init__``.

The rules:

1. **No cycle.** An *upward import* is one kind: a module that imports its own package
   (``from mercadofresco_local import RAIZ``) while the package's ``__init__`` imports that module
   back, directly or through others. Importing a parent that does not import the child back is
   allowed (it is how a package shares a constant with its modules).
2. **Lifecycles in one direction.** A package under ``tools/`` imports, of the other tools, only
   those :data:`MAY_IMPORT` lists for it, and those lists form a DAG: the lint tools, the on-call's
   CLIs, the lab, the least-privilege check and the local run import no other tool (what each asks
   of the template, the template model answers); the reports and the chaos campaign are built on the
   local run (the campaign also drives the on-call's smoke test against a stack and checks its
   requests with the least-privilege check); the sam local and deploy
   levels drive the local run's pieces or the on-call's, and nothing imports them. The one exception
   is :data:`ENTRY_POINTS`: ``mf-demo`` (``mercadofresco_local.demo``) composes the local run with
   the campaign (``--escenario caos``) and the reports it prints.
   Everything outside ``tools/`` (the layers, ``packages/``, the rule pack) is a foundation: any tool
   may import it, and it imports no tool (the product/emulator direction is
   ``test_package_dependencies.py``'s).
3. **Foundations a tool must do without.** :data:`MAY_NOT_REACH` names, per tool package, the foundations
   none of its modules may reach through any chain of imports: the on-call's CLIs (``mf-dlq``,
   ``mf-circuito``, ``mf-smoke``, ``mf-retenidos``) run on an operator's machine against a deployed
   stack, so they read the template through the template model (``packages/template_model``), never
   through the emulator that plays AWS locally (``packages/sam_emulator``, moto and all).
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parents[2]
TOOLS = ("tools", "tools/levels")
PAQUETES = sorted(f"packages/{p.name}" for p in (RAIZ / "packages").iterdir() if p.is_dir())
FOUNDATIONS = ("layers/comun", "layers/simulador", "rules", *PAQUETES)
# Of the other tools, what each package under tools/ may import (an import of a tool not listed fails).
MAY_IMPORT: dict[str, set[str]] = {
    "mercadofresco_lint": set(),
    "mercadofresco_ops": set(),
    "mercadofresco_lab": set(),
    "least_privilege": set(),
    "mercadofresco_local": set(),
    "mercadofresco_informes": {"mercadofresco_local"},
    "mercadofresco_caos": {"mercadofresco_local", "mercadofresco_ops", "least_privilege"},
    "sam_local": {"mercadofresco_local"},
    "emulated_account": {"mercadofresco_ops", "least_privilege"},
}
# Of the foundations, what a tool package may not reach, directly or through another module.
MAY_NOT_REACH: dict[str, set[str]] = {
    "mercadofresco_ops": {"sam_emulator"},
}
# Composition roots: a CLI module that may import more than its package may.
ENTRY_POINTS: dict[str, set[str]] = {
    # ... and the on-call's Spanish help parser (mercadofresco_ops.ayuda), one surface, one parser
    "mercadofresco_local.demo": {"mercadofresco_caos", "mercadofresco_informes", "mercadofresco_ops"},
}


def _packages(raiz: Path) -> list[Path]:
    """Top-level packages of one source root (a folder holding an ``__init__.py``)."""
    return sorted(p for p in raiz.iterdir() if (p / "__init__.py").is_file())


def _modules(raices: tuple[str, ...]) -> dict[str, Path]:
    """Dotted name -> file, for every module of the top-level packages of these source roots."""
    modulos: dict[str, Path] = {}
    for raiz in raices:
        for paquete in _packages(RAIZ / raiz):
            for fichero in sorted(paquete.rglob("*.py")):
                partes = fichero.relative_to(RAIZ / raiz).with_suffix("").parts
                if "tests" in partes:
                    continue
                nombre = ".".join(partes[:-1] if partes[-1] == "__init__" else partes)
                modulos[nombre] = fichero
    return modulos


MODULES = _modules((*TOOLS, *FOUNDATIONS))
TOOL_PACKAGES = {p.name for raiz in TOOLS for p in _packages(RAIZ / raiz)}


def _known(nombre: str) -> str | None:
    """The longest prefix of a dotted name that is one of our modules."""
    partes = nombre.split(".")
    for n in range(len(partes), 0, -1):
        if (prefijo := ".".join(partes[:n])) in MODULES:
            return prefijo
    return None


def _imports(texto: str, paquete: str) -> set[str]:
    """Every module of ours that a module's text imports, anywhere in it; ``paquete`` anchors relative imports."""
    destinos: set[str | None] = set()
    for nodo in ast.walk(ast.parse(texto)):
        if isinstance(nodo, ast.Import):
            destinos |= {_known(alias.name) for alias in nodo.names}
        elif isinstance(nodo, ast.ImportFrom):
            base = nodo.module or ""
            if nodo.level:
                partes = paquete.split(".")
                base = ".".join([*partes[: len(partes) - nodo.level + 1], *([base] if base else [])])
            destinos |= {_known(f"{base}.{alias.name}") for alias in nodo.names}
    return {d for d in destinos if d}


def _package_of(modulo: str) -> str:
    return modulo if MODULES[modulo].name == "__init__.py" else modulo.rpartition(".")[0]


GRAPH = {m: _imports(MODULES[m].read_text(), _package_of(m)) - {m} for m in MODULES}


def _cycles(grafo: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    indice: dict[str, int] = {}
    bajo: dict[str, int] = {}
    pila: list[str] = []
    en_pila: set[str] = set()
    ciclos: list[list[str]] = []

    def visitar(v: str) -> None:
        indice[v] = bajo[v] = len(indice)
        pila.append(v)
        en_pila.add(v)
        for w in sorted(grafo[v]):
            if w not in indice:
                visitar(w)
                bajo[v] = min(bajo[v], bajo[w])
            elif w in en_pila:
                bajo[v] = min(bajo[v], indice[w])
        if bajo[v] == indice[v]:
            componente = []
            while True:
                w = pila.pop()
                en_pila.discard(w)
                componente.append(w)
                if w == v:
                    break
            if len(componente) > 1:
                ciclos.append(sorted(componente))

    for v in sorted(grafo):
        if v not in indice:
            visitar(v)
    return sorted(ciclos)


def test_import_graph_covers_the_tools_and_their_foundations() -> None:
    # GIVEN the graph  THEN it holds the modules this test is about (an empty graph would pass anything)
    assert {"mercadofresco.idempotency", "sam_emulator.runtime", "mercadofresco_local.sesion"} <= set(GRAPH)
    assert GRAPH["mercadofresco_local.sesion"] >= {"sam_emulator.runtime", "mercadofresco_local.tienda"}


def test_every_kind_of_import_is_an_edge() -> None:
    # GIVEN a module importing at module level, under TYPE_CHECKING, inside a function and relatively
    texto = (
        "from typing import TYPE_CHECKING\n"
        "import sam_emulator.runtime\n"
        "if TYPE_CHECKING:\n"
        "    from mercadofresco_local.sesion import Sesion\n"
        "def f():\n"
        "    from . import tienda\n"
        "    from .proveedores import Proveedores\n"
    )
    # WHEN its imports are read  THEN each is an edge to the module it names
    assert _imports(texto, "mercadofresco_local") == {
        "sam_emulator.runtime",
        "mercadofresco_local.sesion",
        "mercadofresco_local.tienda",
        "mercadofresco_local.proveedores",
    }


def test_cycle_finder_reports_the_modules_of_a_circle_and_nothing_else() -> None:
    # GIVEN three modules in a circle and one outside it
    grafo = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    # WHEN the cycles are searched  THEN the circle is reported, its modules named
    assert _cycles(grafo) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_takes_part_in_an_import_cycle() -> None:
    # GIVEN every import of every module, module-level, function-level and type-only alike
    # WHEN the strongly connected components are searched
    ciclos = _cycles(GRAPH)
    # THEN there is none: each cycle is listed with its modules
    assert ciclos == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in ciclos)


def test_no_foundation_imports_a_tool() -> None:
    # GIVEN the modules outside tools/ (layers, packages/, the rule pack)
    cruzados = {
        m: sorted(d for d in destinos if d.split(".")[0] in TOOL_PACKAGES)
        for m, destinos in GRAPH.items()
        if m.split(".")[0] not in TOOL_PACKAGES
    }
    # THEN none imports a package under tools/
    assert {m: d for m, d in cruzados.items() if d} == {}


def test_every_tool_package_has_its_place_in_the_lifecycles() -> None:
    # GIVEN the top-level packages under tools/  THEN each is placed, and the places form a DAG
    assert set(MAY_IMPORT) == TOOL_PACKAGES, "add the new package to MAY_IMPORT (what it may import of the others)"
    assert set(MAY_NOT_REACH) <= TOOL_PACKAGES
    graphlib.TopologicalSorter(MAY_IMPORT).prepare()  # raises CycleError with the circle


@pytest.mark.parametrize("paquete", sorted(MAY_IMPORT))
def test_tool_package_imports_only_the_lifecycles_below_it(paquete: str) -> None:
    # GIVEN every import a tool package's modules make of the other tools
    ajenos: dict[str, list[str]] = {}
    for modulo, destinos in GRAPH.items():
        if modulo.split(".")[0] != paquete:
            continue
        permitidos = MAY_IMPORT[paquete] | ENTRY_POINTS.get(modulo, set()) | {paquete}
        fuera = sorted(d for d in destinos if d.split(".")[0] in TOOL_PACKAGES - permitidos)
        if fuera:
            ajenos[modulo] = fuera
    # THEN each is of a lifecycle below it
    assert ajenos == {}


def _reachable(modulo: str) -> set[str]:
    """Every module ``modulo`` imports, directly or through a chain of imports."""
    vistos: set[str] = set()
    pendientes = [modulo]
    while pendientes:
        for destino in GRAPH[pendientes.pop()] - vistos:
            vistos.add(destino)
            pendientes.append(destino)
    return vistos


def test_reachable_follows_chains_of_imports() -> None:
    # GIVEN the local run's session, which imports the emulator's runtime, which imports its template
    # WHEN what it reaches is read  THEN the end of the chain is there, not only its first step
    assert {"sam_emulator.runtime", "sam_emulator.template", "template_model.template"} <= _reachable(
        "mercadofresco_local.sesion"
    )


@pytest.mark.parametrize("paquete", sorted(MAY_NOT_REACH))
def test_tool_package_does_not_reach_the_foundations_it_must_do_without(paquete: str) -> None:
    # GIVEN every module of the package and everything it reaches through its imports
    prohibidos = MAY_NOT_REACH[paquete]
    alcanzados = {
        modulo: sorted(d for d in _reachable(modulo) if d.split(".")[0] in prohibidos)
        for modulo in GRAPH
        if modulo.split(".")[0] == paquete
    }
    # THEN none of them is one of those foundations
    assert {m: d for m, d in alcanzados.items() if d} == {}
