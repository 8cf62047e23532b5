"""The parts of docs/conventions.md a test can check: public doors, the error root, English mechanism and test names.

The mechanism-name check covers every mechanism package; test names are checked over the whole
``tests/`` tree.
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
import pytest
from mercadofresco.dominio.errores import NOMBRES_PARA_EL_FLUJO
from mercadofresco.errors import MercadoFrescoError

RAIZ = Path(__file__).resolve().parents[2]
CAPA = RAIZ / "layers" / "comun" / "mercadofresco"
# The mechanism packages (docs/conventions.md, "The naming rule").
MECANISMOS = ("circuit_breaker", "retry", "http", "idempotency", "consumer", "outbox")
# Spanish verbs that used to name mechanism methods; a public function or method of a mechanism may not use them.
VERBOS_ESPANOLES = re.compile(
    r"^(adquirir|forzar|registrar|permitir|ejecutar|obtener|guardar|leer|liberar|reclamar|completar|marcar"
    r"|aplazar|enviar|procesar|drenar|limpiar|aplicar|verificar|conectar|validar|consultar|crear|borrar|agregar)(_|$)"
)
# Spanish function words that give a sentence away in a test name ("..._sin_cobro", "..._de_la_cola"),
# none of them an English word.
PALABRAS_ESPANOLAS = re.compile(
    r"_(de|del|el|la|los|las|al|lo|su|sus|sin|con|que|por|para|una?|y|ni|se|es|son|tras|cada|como|cuando"
    r"|hasta|aunque|mism[oa]s?|tod[oa]s?|otr[oa]s?|ningun[oa]?)_"
)


def _frase_espanola(nombre: str, sujetos: set[str]) -> bool:
    """Whether a test name reads as a Spanish sentence once its subject is set aside.

    The subject may be a Spanish *function* the file uses (``con_atributos``, ``registros_del_consumidor``,
    an invariant ``un_cobro_como_maximo``): its name is the code's, not the test's sentence.
    """
    resto = nombre.removeprefix("test_").removeprefix("fuzz_")
    sujeto = max((s for s in sujetos if resto.startswith(f"{s}_")), key=len, default="")
    return bool(PALABRAS_ESPANOLAS.search(f"_{resto.removeprefix(sujeto)}_"))


def _identificadores(arbol: ast.AST) -> set[str]:
    """Every name a test file imports, reads or reaches through an attribute (the subjects it may test)."""
    nombres: set[str] = set()
    for nodo in ast.walk(arbol):
        if isinstance(nodo, ast.Name):
            nombres.add(nodo.id)
        elif isinstance(nodo, ast.Attribute):
            nombres.add(nodo.attr)
        elif isinstance(nodo, ast.alias):
            nombres.add(nodo.asname or nodo.name.rsplit(".", 1)[-1])
    return {n for n in nombres if "_" in n.strip("_")}


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


def test_every_workflow_error_name_is_an_exception_class_of_the_layer() -> None:
    # GIVEN the exception classes of the layer, by name
    clases = {
        nombre
        for modulo in _modulos_de_la_capa()
        for nombre, clase in vars(modulo).items()
        if inspect.isclass(clase) and issubclass(clase, MercadoFrescoError)
    }
    # THEN every name the workflow may match is one of them (NOMBRES_PARA_EL_FLUJO names one by string)
    assert set(NOMBRES_PARA_EL_FLUJO) - clases == set()


def test_mechanism_packages_public_names_use_no_spanish_verbs() -> None:
    # GIVEN the public functions and methods of every mechanism package
    encontrados = {
        f"{paquete}:{nombre}"
        for paquete in MECANISMOS
        for nombre in _nombres_publicos(paquete)
        if VERBOS_ESPANOLES.match(nombre)
    }
    # THEN there is none (the store's functions about orders live in mercadofresco.dominio)
    assert encontrados == set()


def test_test_function_names_are_ascii_snake_case_english_phrases() -> None:
    # GIVEN every test function in tests/
    malos, frases = [], []
    for fichero in sorted((RAIZ / "tests").rglob("test_*.py")):
        relativo = fichero.relative_to(RAIZ).as_posix()
        arbol = ast.parse(fichero.read_text())
        sujetos = _identificadores(arbol)
        for nodo in ast.walk(arbol):
            if isinstance(nodo, ast.FunctionDef | ast.AsyncFunctionDef) and nodo.name.startswith("test_"):
                if not re.fullmatch(r"test_[a-z0-9_]+", nodo.name):
                    malos.append(f"{relativo}::{nodo.name}")
                if _frase_espanola(nodo.name, sujetos):
                    frases.append(f"{relativo}::{nodo.name}")
    # THEN names are ASCII snake case, and English phrases (domain nouns and a tested function's name aside)
    assert malos == []
    assert frases == []


@pytest.mark.parametrize(
    ("nombre", "espanola"),
    [
        ("test_flujo_fallo_tras_el_cobro_reembolsa_exactamente_una_vez", True),
        ("test_reprocesar_se_niega_con_el_circuito_abierto", True),
        ("test_verificar_cola_desconocida_sale_con_2", True),
        ("test_con_atributos_never_exceeds_sqs_limit_of_ten", False),
        ("test_workflow_failure_after_the_cobro_refunds_exactly_once", False),
        ("test_run_duplicate_while_en_curso_raises_operacion_en_curso", False),
        ("test_post_breaker_opens_on_5xx_then_no_request_reaches_provider", False),
    ],
)
def test_spanish_sentence_heuristic_flags_spanish_names_and_passes_english_ones(nombre: str, espanola: bool) -> None:
    # GIVEN a test name (con_atributos being a function the file tests) WHEN judged THEN only a sentence is flagged
    assert _frase_espanola(nombre, {"con_atributos"}) is espanola


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


def test_nothing_imports_a_private_name_from_another_package() -> None:
    # GIVEN the project's packages (the layer's and the tools'), and every import in the functions,
    # tools, benchmarks and tests
    paquetes = {"mercadofresco"} | {d.name for d in (RAIZ / "tools").iterdir() if (d / "__init__.py").is_file()}
    privados = []
    for carpeta in ("functions", "tools", "bench", "tests"):
        for fichero in sorted((RAIZ / carpeta).rglob("*.py")):
            relativo = fichero.relative_to(RAIZ)
            propio = relativo.parts[1] if carpeta == "tools" and len(relativo.parts) > 2 else None
            for nodo in ast.walk(ast.parse(fichero.read_text())):
                if not (isinstance(nodo, ast.ImportFrom) and nodo.module and nodo.level == 0):
                    continue
                paquete = nodo.module.split(".")[0]
                if paquete in paquetes and paquete != propio:
                    privados += [
                        f"{relativo}: {nodo.module}.{a.name}"
                        for a in nodo.names
                        if a.name.startswith("_") and not a.name.startswith("__")
                    ]
    # THEN none imports a private name of a package it is not part of
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


# The words a mechanism's configuration field or error parameter may be made of (an allow-list:
# a new Spanish name fails until it is English, instead of passing because no list named it).
PALABRAS_DE_MECANISMO = frozenset(
    (
        "429", "after", "attempts", "backoff", "base", "batch", "bucket", "buckets", "bus", "by", "bytes",
        "cache", "call", "calls", "completion", "consecutive", "days", "deferrals", "delay", "dependency",
        "drain", "entries", "error", "errors", "expires", "failure", "failures", "for", "in", "interval",
        "items", "last", "lease", "local", "lock", "margin", "max", "message", "min", "name", "open", "outcome",
        "per", "permanent", "poll", "probe", "purge", "rate", "resend", "resends", "reservation", "retention",
        "retry", "rng", "s", "shared", "source", "wait", "window",
    )
)


def _campos_y_parametros() -> set[str]:
    """``Class.field`` of every mechanism ``*Config``/``*Policy`` dataclass, and the mechanism errors' parameters."""
    ficheros = [f for paquete in MECANISMOS for f in (CAPA / paquete).glob("*.py")] + [CAPA / "errors.py"]
    nombres = set()
    for fichero in ficheros:
        for nodo in ast.walk(ast.parse(fichero.read_text())):
            if not isinstance(nodo, ast.ClassDef):
                continue
            if nodo.name.endswith(("Config", "Policy")):
                nombres |= {
                    f"{nodo.name}.{campo.target.id}"
                    for campo in nodo.body
                    if isinstance(campo, ast.AnnAssign) and isinstance(campo.target, ast.Name)
                }
            if nodo.name == "DependencyUnavailableError":
                init = next(m for m in nodo.body if isinstance(m, ast.FunctionDef) and m.name == "__init__")
                nombres |= {f"{nodo.name}.{a.arg}" for a in [*init.args.args[1:], *init.args.kwonlyargs]}
    return nombres


def test_mechanism_config_fields_and_error_parameters_are_made_of_english_words() -> None:
    # GIVEN every configuration field of the mechanisms and the dependency error's parameters
    nombres = _campos_y_parametros()
    assert "BreakerConfig.consecutive_failures" in nombres  # the scan sees what it must
    # WHEN each is split into words  THEN every word is on the allow-list
    ajenos = {n for n in nombres if set(n.split(".", 1)[1].split("_")) - PALABRAS_DE_MECANISMO}
    assert ajenos == set()
