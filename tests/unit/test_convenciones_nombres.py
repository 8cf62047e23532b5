"""The parts of docs/conventions.md a test can check: public doors, the error root, English mechanism and test names.

The naming checks cover the areas already converted to the rule (the lists below only grow);
inside them, a known deviation is listed and a fixed one must leave its list.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path

import mercadofresco
from mercadofresco.errors import MercadoFrescoError

RAIZ = Path(__file__).resolve().parents[2]
CAPA = RAIZ / "layers" / "comun" / "mercadofresco"
# Mechanism packages converted to the rule (consumer and outbox: see "Known deviations" in docs/conventions.md).
MECANISMOS = ("circuit_breaker", "retry", "http", "idempotency")
# Spanish verbs that used to name mechanism methods; a public function or method of a mechanism may not use them.
VERBOS_ESPANOLES = re.compile(
    r"^(adquirir|forzar|registrar|permitir|ejecutar|obtener|guardar|leer|liberar|reclamar|completar|marcar"
    r"|aplazar|enviar|procesar|drenar|limpiar|aplicar|verificar|conectar|validar|consultar|crear|borrar|agregar)(_|$)"
)
# Known deviations (to rename, never to add to): "<package>:<name>".
VERBOS_PENDIENTES = frozenset(
    {
        "circuit_breaker:ejecutar",
        "circuit_breaker:registrar",
        "idempotency:completar",
        "idempotency:guardar",
        "idempotency:leer",
        "idempotency:liberar",
        "idempotency:marcar_fallido",
        "idempotency:obtener",
        "idempotency:reclamar",
    }
)
# Spanish function words that give a sentence away in a test name ("..._sin_cobro", "..._de_la_cola").
PALABRAS_ESPANOLAS = re.compile(r"_(de|del|el|la|los|las|sin|con|que|por|para|una?|y|se|tras|cada|ningun[oa]?)_")
# Test folders converted to the rule: every test name in them is an English phrase.
CARPETAS_EN_INGLES = (
    "tests/unit/circuit_breaker",
    "tests/unit/consumer",
    "tests/unit/http",
    "tests/unit/idempotency",
    "tests/unit/retry",
    "tests/integration/circuit_breaker",
    "tests/integration/consumidores",
    "tests/integration/http",
    "tests/integration/idempotency",
    "tests/integration/outbox",
    "tests/integration/retry",
)
# Subjects that are Spanish function names, not sentences (``con_atributos``, ``por_contenido``).
SUJETOS = re.compile(r"^test_(con_atributos|por_contenido|colas_de_arn)_")


def _modulos_de_la_capa() -> list[object]:
    return [importlib.import_module(m.name) for m in pkgutil.walk_packages(mercadofresco.__path__, "mercadofresco.")]


def _nombres_publicos(paquete: str) -> set[str]:
    nombres = set()
    for fichero in (CAPA / paquete).glob("*.py"):
        for nodo in ast.walk(ast.parse(fichero.read_text())):
            if isinstance(nodo, ast.FunctionDef | ast.AsyncFunctionDef) and not nodo.name.startswith("_"):
                nombres.add(nodo.name)
    return nombres


def test_every_exception_class_of_the_layer_derives_from_the_root() -> None:
    # GIVEN every module of the layer  WHEN its exception classes are listed
    sueltas = [
        f"{modulo.__name__}.{nombre}"
        for modulo in _modulos_de_la_capa()
        for nombre, clase in vars(modulo).items()
        if inspect.isclass(clase)
        and issubclass(clase, BaseException)
        and clase.__module__ == modulo.__name__
        and not issubclass(clase, MercadoFrescoError)
    ]
    # THEN each one derives from MercadoFrescoError
    assert sueltas == []


def test_mechanism_packages_public_names_use_no_spanish_verbs_beyond_known_deviations() -> None:
    # GIVEN the public functions and methods of every mechanism package
    encontrados = {
        f"{paquete}:{nombre}"
        for paquete in MECANISMOS
        for nombre in _nombres_publicos(paquete)
        if VERBOS_ESPANOLES.match(nombre)
    }
    # THEN none is new, and every known deviation still exists (a fixed one leaves the list)
    assert encontrados - VERBOS_PENDIENTES == set()
    assert VERBOS_PENDIENTES - encontrados == set()


def test_test_function_names_are_ascii_snake_case_and_english_in_converted_folders() -> None:
    # GIVEN every test function in tests/
    malos, frases = [], []
    for fichero in sorted((RAIZ / "tests").rglob("test_*.py")):
        relativo = fichero.relative_to(RAIZ).as_posix()
        convertido = relativo.startswith(CARPETAS_EN_INGLES)
        for nodo in ast.walk(ast.parse(fichero.read_text())):
            if isinstance(nodo, ast.FunctionDef) and nodo.name.startswith("test_"):
                if not re.fullmatch(r"test_[a-z0-9_]+", nodo.name):
                    malos.append(f"{relativo}::{nodo.name}")
                if convertido and PALABRAS_ESPANOLAS.search(SUJETOS.sub("test_", nodo.name) + "_"):
                    frases.append(f"{relativo}::{nodo.name}")
    # THEN names are ASCII snake case everywhere, and English phrases where the rule is applied
    assert malos == []
    assert frases == []


def test_handlers_import_from_the_layer_only_what_a_module_exports() -> None:
    # GIVEN every name a handler imports from mercadofresco
    fuera = []
    for handler in sorted((RAIZ / "functions").glob("*/*.py")):
        for nodo in ast.walk(ast.parse(handler.read_text())):
            if not (isinstance(nodo, ast.ImportFrom) and (nodo.module or "").split(".")[0] == "mercadofresco"):
                continue
            modulo = importlib.import_module(nodo.module)
            publico = set(getattr(modulo, "__all__", ()))
            for alias in nodo.names:
                submodulo = hasattr(modulo, "__path__") and importlib.util.find_spec(f"{nodo.module}.{alias.name}")
                if alias.name not in publico and not submodulo:
                    fuera.append(f"{handler.relative_to(RAIZ)}: {nodo.module}.{alias.name}")
    # THEN each is in that module's __all__ (or is a submodule of a package)
    assert fuera == []


def test_nothing_outside_the_layer_imports_a_private_name_from_it() -> None:
    # GIVEN the functions, operator tools, local run and benchmarks
    privados = []
    for carpeta in ("functions", "tools", "bench"):
        for fichero in sorted((RAIZ / carpeta).rglob("*.py")):
            for nodo in ast.walk(ast.parse(fichero.read_text())):
                if isinstance(nodo, ast.ImportFrom) and (nodo.module or "").startswith("mercadofresco."):
                    privados += [
                        f"{fichero.relative_to(RAIZ)}: {nodo.module}.{a.name}"
                        for a in nodo.names
                        if a.name.startswith("_")
                    ]
    # THEN none is private
    assert privados == []


def test_handlers_stack_powertools_decorators_in_one_order() -> None:
    # GIVEN every handler's decorators on lambda_handler (metrics outermost: it flushes even when an
    # inner decorator raises; the logger next, so the tracer's own lines carry the invocation's keys)
    orden = {"metrics": 0, "logger": 1, "tracer": 2}
    fuera = []
    for handler in sorted((RAIZ / "functions").glob("*/app.py")):
        for nodo in ast.parse(handler.read_text()).body:
            if isinstance(nodo, ast.FunctionDef) and nodo.name == "lambda_handler":
                nombres = [ast.unparse(d).split(".")[0] for d in nodo.decorator_list]
                posiciones = [orden[n] for n in nombres if n in orden]
                if posiciones != sorted(posiciones):
                    fuera.append(f"{handler.relative_to(RAIZ)}: {nombres}")
    # THEN each stacks them metrics, logger, tracer (top to bottom)
    assert fuera == []
