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
        "429",
        "after",
        "age",
        "attempts",
        "backoff",
        "base",
        "batch",
        "bucket",
        "buckets",
        "bus",
        "by",
        "bytes",
        "cache",
        "call",
        "calls",
        "completion",
        "consecutive",
        "days",
        "deferrals",
        "delay",
        "dependency",
        "drain",
        "entries",
        "error",
        "errors",
        "expires",
        "failure",
        "failures",
        "for",
        "in",
        "interval",
        "items",
        "last",
        "lease",
        "local",
        "lock",
        "margin",
        "max",
        "message",
        "min",
        "name",
        "open",
        "outcome",
        "per",
        "permanent",
        "poll",
        "probe",
        "purge",
        "rate",
        "resend",
        "resends",
        "reservation",
        "retention",
        "retry",
        "rng",
        "s",
        "shared",
        "source",
        "wait",
        "window",
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


# ---------------------------------------------------------------- the allow-list over every public name


# The mechanism side of the layer: every module of mercadofresco outside dominio/ (the lesson's nouns).
def _modulos_de_mecanismo() -> list[Path]:
    return sorted(f for f in CAPA.rglob("*.py") if f.relative_to(CAPA).parts[0] != "dominio")


def _publicos_de_mecanismo() -> dict[str, str]:
    """``module:qualified name`` -> the bare name, for every module and package, public module-level constant,
    function and class, method, parameter and class-level field (dataclass fields, enum members) of the
    mechanism side of the layer. A module or package is keyed by its dotted path alone (``http.client``)."""
    nombres: dict[str, str] = {}
    for fichero in _modulos_de_mecanismo():
        partes = fichero.relative_to(CAPA).with_suffix("").parts
        modulo = ".".join(partes)
        if partes[-1] != "__init__":
            nombres[modulo] = partes[-1]
        elif len(partes) > 1:
            nombres[".".join(partes[:-1])] = partes[-2]

        def parametros(funcion: ast.FunctionDef | ast.AsyncFunctionDef, dueno: str, modulo: str = modulo) -> None:
            a = funcion.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if arg.arg not in ("self", "cls") and not arg.arg.startswith("_"):
                    nombres[f"{modulo}:{dueno}({arg.arg})"] = arg.arg

        for nodo in ast.parse(fichero.read_text()).body:
            if isinstance(nodo, ast.AnnAssign | ast.Assign):
                for objetivo in nodo.targets if isinstance(nodo, ast.Assign) else [nodo.target]:
                    if isinstance(objetivo, ast.Name) and not objetivo.id.startswith("_"):
                        nombres[f"{modulo}:{objetivo.id}"] = objetivo.id
            elif isinstance(nodo, ast.FunctionDef | ast.AsyncFunctionDef) and not nodo.name.startswith("_"):
                nombres[f"{modulo}:{nodo.name}"] = nodo.name
                parametros(nodo, nodo.name)
            elif isinstance(nodo, ast.ClassDef) and not nodo.name.startswith("_"):
                nombres[f"{modulo}:{nodo.name}"] = nodo.name
                for miembro in nodo.body:
                    if isinstance(miembro, ast.FunctionDef | ast.AsyncFunctionDef):
                        if not miembro.name.startswith("_"):
                            nombres[f"{modulo}:{nodo.name}.{miembro.name}"] = miembro.name
                        if not miembro.name.startswith("_") or miembro.name == "__init__":
                            parametros(miembro, f"{nodo.name}.{miembro.name}")
                    elif isinstance(miembro, ast.AnnAssign | ast.Assign):
                        for objetivo in miembro.targets if isinstance(miembro, ast.Assign) else [miembro.target]:
                            if isinstance(objetivo, ast.Name) and not objetivo.id.startswith("_"):
                                nombres[f"{modulo}:{nodo.name}.{objetivo.id}"] = objetivo.id
    return nombres


def _palabras(nombre: str) -> set[str]:
    return {p.lower() for p in re.split(r"_|(?<=[a-z0-9])(?=[A-Z])", nombre) if p}


# The English words mechanism names are made of. A name with any other word fails, unless it is named below.
# (a word list reads as words, not as 300 quoted strings)
PALABRAS_INGLESAS = frozenset(
    """429 accepted acquire add admitted after age aggregate alive allow an apply arn as attempt attempts attribute
    attributes aurora aws backoff base batch batches body breaker bucket buckets budget build bundle bus by bytes
    ca cache cached call calls canonical cap capacity capture cause changes chars check checks circuit claim
    claimed classification classify cleanup client clock close code codes columns complete completed completion
    compute config conn connect consecutive consumer content context core correlation count counts create
    credentials custom data database days db dbrecords deadline decision decorator default defer deferral
    deferrals delay delete dependency deployment deposit detail dict dlq drain duplicate dynamo dynamodb echo
    endpoint entries entry env envelope environ environment epoch equal error errors event events exc exceptions exclude
    execute exhausted expired expires factory failed failure failures field fields fifo files flush fn for force
    from full function get globals guard handle handler handover has hash header headers held http id idempotency
    idempotent identifier ids in inconsistent instances interval invalid is item items jitter json key keys lambda last
    latency lazy lease left lifetime local lock log logger long make margin mark marker max measure message method
    metrics migrate migration migrations min mismatch mode module modules ms n name namespace new no not now obj
    of on op open openings operation original other outbox outcome own owner p parameters park parked password
    patch path payload pending per period periods permanent permit persistence physical poison policy poll pool port
    post postgres powertools prefix previous probe problem process properties provider providers published purge put
    queue queues r rate ratio rds read reading reason received receives record redis refuse region rejections
    relay release remaining request resend resends reservation reserve reset resource responder response result
    retention retries retry retryable rng role route routes row run runtime s sandbox schema sdk secret send
    service shared signal sink size sleep snapshot socket source split sqs sslrootcert state statement status
    store stored success successes t table text throttling time timeout to token tokens too total traced tracer
    tracing transform transient truncated type types unavailable unknown unprintable until unwrap url username
    uuid validation valkey value variable verify version versions wait watchdog window with without work
    auth bearer iam session sig v4 protect transition
    limits eventbridge sns step functions input
    checked class condition conditional domain expiry fail finish flow layer names over owned part records refusal
    refused replayed same seconds take used whole won write
    admitting announce counter degrade degraded fresh lua messages quantities remember script sent uses view""".split()  # noqa: SIM905
)

# Spanish on purpose, never renamed: the workflow's error names a mechanism raises (the ASL matches them), stored
# values and attributes (the idempotency record's and outbox row's columns, an enum member that is a stored
# value or an ``mf-motivo``), each one listed so that a new one is a decision, not an accident.
NOMBRES_GUARDADOS = frozenset(
    (
        "circuit_breaker.state:BreakerState.ABIERTO",
        "circuit_breaker.state:BreakerState.CERRADO",
        "circuit_breaker.state:BreakerState.FORZADO_ABIERTO",
        "circuit_breaker.state:BreakerState.FORZADO_CERRADO",
        "circuit_breaker.state:BreakerState.SEMIABIERTO",
        "dlq:DlqReason.APLAZAMIENTOS_AGOTADOS",
        "dlq:DlqReason.CAMPO_AUSENTE",
        "dlq:DlqReason.DATO_INVALIDO",
        "dlq:DlqReason.JSON_INVALIDO",
        "dlq:DlqReason.VERSION_DESCONOCIDA",
        "errors:CircuitoAbierto",
        "errors:EventoInvalido",
        "errors:MercadoFrescoError",
        "errors:OperacionEnCurso",
        "errors:PresupuestoReintentosAgotado",
        "errors:ResultadoDesconocido",
        "idempotency.record:IdempotencyRecord.caduca_bloqueo",
        "idempotency.record:IdempotencyRecord.clave",
        "idempotency.record:IdempotencyRecord.estado",
        "idempotency.record:IdempotencyRecord.expira_en",
        "idempotency.record:IdempotencyRecord.propietario",
        "idempotency.record:IdempotencyRecord.resultado_json",
        "idempotency.record:IdempotencyStatus.COMPLETADO",
        "idempotency.record:IdempotencyStatus.EN_CURSO",
        "idempotency.record:IdempotencyStatus.FALLIDO",
        "idempotency.record:StoredError.mensaje",
        "idempotency.record:StoredError.tipo",
        "outbox.events:OutboxRow.agregado",
        "outbox.events:OutboxRow.agregado_id",
        "outbox.events:OutboxRow.bloqueada",
        "outbox.events:OutboxRow.creado_en",
        "outbox.events:OutboxRow.detalle",
        "outbox.events:OutboxRow.intentos",
        "outbox.events:OutboxRow.tipo_agregado",
        "outbox.events:OutboxRow.tipo_evento",
    )
)


def test_every_public_mechanism_name_is_english_or_explicitly_allowed() -> None:
    # GIVEN every public name of the mechanism side of the layer (modules, constants, functions, classes,
    # methods, parameters, fields)
    nombres = _publicos_de_mecanismo()
    assert "http.client:ProviderClient.post(idempotent)" in nombres  # the scan sees parameters
    assert "idempotency.record:IdempotencyRecord.caduca_bloqueo" in nombres  # ...and dataclass fields
    assert nombres["circuit_breaker.state"] == "state"  # ...and modules
    assert nombres["circuit_breaker"] == "circuit_breaker"  # ...and packages
    assert "valkey:KEY_PREFIX" in nombres  # ...and module-level constants
    # WHEN each is split into words
    ajenos = {q for q, n in nombres.items() if _palabras(n) - PALABRAS_INGLESAS}
    # THEN a name with a non-English word is one kept on purpose
    assert ajenos - NOMBRES_GUARDADOS == set()
    # AND each name kept on purpose still exists (a renamed one leaves the list)
    assert NOMBRES_GUARDADOS - ajenos == set()


# ---------------------------------------------------------------- private names and test files, mechanism by mechanism

# The mechanisms (each package or module of the layer outside dominio/) whose private names, parameters and locals
# are English too, and whose tests are named after their modules (issue 39).
MECANISMOS_TERMINADOS = (
    "aws",
    "circuit_breaker",
    "consumer",
    "db",
    "dlq",
    "errors",
    "http",
    "idempotency",
    "metrics",
    "outbox",
    "payload_limits",
    "process_cache",
    "retry",
    "tracing",
    "validation",
    "valkey",
)
# A mechanism not yet renamed; it moves up to MECANISMOS_TERMINADOS once it passes both checks
# (test_every_mechanism_is_finished_or_pending_and_a_pending_one_still_fails says when). Empty: all are done.
MECANISMOS_PENDIENTES: tuple[str, ...] = ()

# The words private names may use besides PALABRAS_INGLESAS: a local reads like prose (``rows``, ``waiting``), and
# Python's and the libraries' usual short names are English too (``kwargs``, ``conninfo``, ``sqlstate``). A letter
# alone (``c``, ``k``, ``v``) is no word of either language and passes.
PALABRAS_DE_LO_PRIVADO = frozenset(
    """admin aggregates annotated applied args asked at before caches common conninfo counters current cursor decorate
    deferred deleted duration end exact exists expression extra extract finished fit folder foreign found getattr
    host int kos kw kwargs merged metric missing next object oks optional options originals ours out overrides parse
    parts pause plan processor progress protected psycopg publish raw readable redrive register rejected replayable
    reply report room root rows safe secrets seen sendable sent signer since sources sql sqlstate start stopped
    streak string sub target tls trust update valid values verb waiting what wrapped wrapper
    asks botocore calls date granted half network read second share timed visit""".split()  # noqa: SIM905
)


def _mecanismos_de_la_capa() -> set[str]:
    """Each top-level package and module of the mechanism side of the layer, by name."""
    return {
        p.stem
        for p in CAPA.iterdir()
        if (p.is_dir() and (p / "__init__.py").is_file() and p.name != "dominio")
        or (p.suffix == ".py" and p.stem != "__init__")
    }


def _privados(mecanismo: str, capa: Path = CAPA) -> dict[str, str]:
    """``module:name`` -> the bare name, for every name of a mechanism that is not public: ``_private`` functions,
    classes, constants and attributes, and every parameter and local of every function and comprehension (dunder
    names, ``self`` and ``cls`` are Python's)."""
    carpeta = capa / mecanismo
    ficheros = sorted(carpeta.glob("*.py")) if carpeta.is_dir() else [capa / f"{mecanismo}.py"]
    ambitos = (
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.Lambda,
        ast.ListComp,
        ast.SetComp,
        ast.DictComp,
        ast.GeneratorExp,
    )
    nombres: dict[str, str] = {}

    def recorrer(nodo: ast.AST, modulo: str, local: bool) -> None:
        for hijo in ast.iter_child_nodes(nodo):
            nombre = None
            if isinstance(hijo, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                nombre = hijo.name
            elif isinstance(hijo, ast.Name) and isinstance(hijo.ctx, ast.Store):
                nombre = hijo.id
            elif isinstance(hijo, ast.Attribute) and isinstance(hijo.ctx, ast.Store) and hijo.attr.startswith("_"):
                nombre = hijo.attr
            elif isinstance(hijo, ast.arg | ast.ExceptHandler):
                nombre = hijo.arg if isinstance(hijo, ast.arg) else hijo.name
            privado = local or isinstance(hijo, ast.arg | ast.ExceptHandler) or (nombre or "").startswith("_")
            if nombre and privado and not nombre.startswith("__") and nombre not in ("self", "cls"):
                nombres[f"{modulo}:{nombre}"] = nombre
            recorrer(hijo, modulo, local or isinstance(hijo, ambitos))

    for fichero in ficheros:
        modulo = f"{mecanismo}.{fichero.stem}" if carpeta.is_dir() else mecanismo
        recorrer(ast.parse(fichero.read_text()), modulo, local=False)
    return nombres


def _privados_ajenos(mecanismo: str, capa: Path = CAPA) -> set[str]:
    """The private names of a mechanism with a word off both allow-lists."""
    permitidas = PALABRAS_INGLESAS | PALABRAS_DE_LO_PRIVADO
    return {q for q, n in _privados(mecanismo, capa).items() if {p for p in _palabras(n) if len(p) > 1} - permitidas}


def _capa_importada(fichero: Path) -> set[str]:
    """The layer's top-level packages and modules a file imports at its top (``from mercadofresco import db`` ->
    ``db``): a file's subject is what it imports there, not what one of its tests reaches for inside."""
    partes: set[str] = set()
    for nodo in ast.parse(fichero.read_text()).body:
        if isinstance(nodo, ast.ImportFrom) and nodo.module == "mercadofresco":
            partes |= {a.name for a in nodo.names}
        elif isinstance(nodo, ast.ImportFrom) and (nodo.module or "").startswith("mercadofresco."):
            partes.add(nodo.module.split(".")[1])
        elif isinstance(nodo, ast.Import):
            partes |= {a.name.split(".")[1] for a in nodo.names if a.name.startswith("mercadofresco.")}
    return partes


def _tests_mal_nombrados(mecanismo: str, capa: Path = CAPA, raiz: Path = RAIZ) -> list[str]:
    """Test files of a mechanism not named after what they test.

    A package's tests live in ``tests/<level>/<package>/`` as ``test_<module>.py`` or ``test_<module>_<aspect>.py``
    (``test_<package>.py`` for its ``__init__``); a module's are ``tests/<level>/test_<module>[_<aspect>].py``, so a
    test file at a level's top that tests that module alone (imports nothing else of the layer) is named so.
    """
    if (capa / mecanismo).is_dir():
        modulos = {f.stem for f in (capa / mecanismo).glob("*.py") if f.stem != "__init__"}
        ficheros = sorted((raiz / "tests").glob(f"*/{mecanismo}/test_*.py"))
    else:
        modulos = {mecanismo}
        ficheros = [f for f in sorted((raiz / "tests").glob("*/test_*.py")) if _capa_importada(f) == {mecanismo}]
    return [
        f.relative_to(raiz).as_posix()
        for f in ficheros
        if f.stem != f"test_{mecanismo}"  # a package's own __init__
        and not any(f.stem == f"test_{m}" or f.stem.startswith(f"test_{m}_") for m in modulos)
    ]


@pytest.mark.parametrize("mecanismo", MECANISMOS_TERMINADOS)
def test_private_names_of_finished_mechanisms_are_made_of_english_words(mecanismo: str) -> None:
    # GIVEN every private name, parameter and local of the mechanism  WHEN each is split into words
    # THEN every word is on an English allow-list
    assert _privados_ajenos(mecanismo) == set()


@pytest.mark.parametrize("mecanismo", MECANISMOS_TERMINADOS)
def test_test_files_of_finished_mechanisms_are_named_after_their_modules(mecanismo: str) -> None:
    # GIVEN the mechanism's test files  WHEN each name is read  THEN it names a module of the mechanism
    assert _tests_mal_nombrados(mecanismo) == []


def test_private_name_scan_sees_definitions_attributes_parameters_and_locals() -> None:
    # GIVEN the scan of two finished mechanisms
    consumer, outbox = _privados("consumer"), _privados("outbox")
    # THEN it sees a private method, a parameter, a local, a loop variable, a comprehension's variable, a private
    # dataclass field and a private attribute set in __init__
    assert {"consumer.batch:_handle", "consumer.batch:queue", "consumer.batch:records"} <= set(consumer)
    assert {"outbox.relay:row", "outbox.events:r", "outbox.deployment:_send_lock", "outbox.relay:_clock"} <= set(outbox)
    # ...and a module's own (db is a module, not a package)
    assert "db:_default_ca" in _privados("db")


def test_the_checks_flag_spanish_private_names_and_tests_named_after_old_modules(tmp_path: Path) -> None:
    # GIVEN a layer with a package and a module as they were before issue 39, and their tests
    capa, raiz = tmp_path / "mercadofresco", tmp_path
    (capa / "consumer").mkdir(parents=True)
    (capa / "consumer" / "__init__.py").write_text("")
    (capa / "consumer" / "queues.py").write_text(
        "def _que_quepa(cuerpo, own):\n    nuestros = [k for k in own]\n    return cuerpo, nuestros\n"
    )
    (capa / "db.py").write_text("class _Opciones:\n    def __init__(self):\n        self._secreto = None\n")
    (raiz / "tests" / "unit" / "consumer").mkdir(parents=True)
    for nombre in ("test_colas.py", "test_consumer_colas.py", "test_queues_size.py", "test_consumer.py"):
        (raiz / "tests" / "unit" / "consumer" / nombre).write_text("")
    (raiz / "tests" / "unit" / "test_aurora_tls.py").write_text("from mercadofresco import db\n")
    (raiz / "tests" / "unit" / "test_db_tls.py").write_text("from mercadofresco import db\n")
    # WHEN both checks judge them
    # THEN the Spanish private names and the tests named after no module are flagged, and only those
    assert _privados_ajenos("consumer", capa) == {
        "consumer.queues:_que_quepa",
        "consumer.queues:cuerpo",
        "consumer.queues:nuestros",
    }
    assert _privados_ajenos("db", capa) == {"db:_Opciones", "db:_secreto"}
    assert _tests_mal_nombrados("consumer", capa, raiz) == [
        "tests/unit/consumer/test_colas.py",
        "tests/unit/consumer/test_consumer_colas.py",
    ]
    assert _tests_mal_nombrados("db", capa, raiz) == ["tests/unit/test_aurora_tls.py"]


def test_every_mechanism_is_finished_or_pending_and_a_pending_one_still_fails() -> None:
    # GIVEN the mechanisms of the layer
    mecanismos = _mecanismos_de_la_capa()
    assert {"consumer", "db", "retry"} <= mecanismos  # the scan sees packages and modules
    # THEN each is on exactly one list (a new mechanism is decided, not forgotten)
    assert set(MECANISMOS_TERMINADOS) | set(MECANISMOS_PENDIENTES) == mecanismos
    assert set(MECANISMOS_TERMINADOS) & set(MECANISMOS_PENDIENTES) == set()
    # AND a pending one still fails a check: one that passes both moves up to MECANISMOS_TERMINADOS
    terminados = [m for m in MECANISMOS_PENDIENTES if not _privados_ajenos(m) and not _tests_mal_nombrados(m)]
    assert terminados == []


def test_allow_list_refuses_a_new_spanish_mechanism_name() -> None:
    # GIVEN a new mechanism method with a Spanish name and parameter  WHEN judged  THEN both are outside the list
    for nombre in ("reintentar_lote", "dependencia", "OutboxRelay.drenar"):
        assert _palabras(nombre.rsplit(".", 1)[-1]) - PALABRAS_INGLESAS


def test_no_mechanism_module_imports_the_domain_package() -> None:
    # GIVEN every module of the mechanism side of the layer
    importan = []
    for fichero in _modulos_de_mecanismo():
        for nodo in ast.walk(ast.parse(fichero.read_text())):
            modulos = (
                [nodo.module or ""]
                if isinstance(nodo, ast.ImportFrom)
                else [a.name for a in nodo.names]
                if isinstance(nodo, ast.Import)
                else []
            )
            if any(m == "mercadofresco.dominio" or m.startswith("mercadofresco.dominio.") for m in modulos):
                importan.append(str(fichero.relative_to(CAPA)))
    # THEN none imports mercadofresco.dominio (the domain uses the mechanisms, never the other way)
    assert importan == []
