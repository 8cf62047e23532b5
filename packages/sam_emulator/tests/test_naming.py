"""The emulator is mechanism only, so every name in it is English, public or private: checked by allow-lists of words.

A deny-list passes any Spanish name nobody thought to list; an allow-list fails a new one until it is
English or the word is added here, which is a decision a reviewer sees.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import types
import typing
from pathlib import Path
from typing import Any

import sam_emulator
import template_model

# The words the emulator's public names are made of (a word list reads as words, not as quoted strings).
ENGLISH_WORDS = frozenset(
    """
    arm durable execution last loggers now payload sdk status wake
    location outputs unit units types locate holder pair referenced parent passed
    account acquire acting add address advance alive all answer api apply arn as asl at atomic att attempts
    attribute available aws background batch batches binaries body boundaries boundary by call caller calls cap
    capture check client clock close code cold compress compressed compression concurrency condition config
    consuming context control count counts cpu crashed create created credentials current cut dead deadline defaults
    deadlines deaths default definition deleted dependency depth detail died directory discard dlq doc down
    dynamodb effect environ environment environments error errors evaluator event events every exc executions
    expression failed failure failures fault faults fifo file filtered filters find fire flight flush fn folder for
    free freeze from frozen function functions get guard handler handlers hang headers hits http id ids if
    immediately import in input install interval invocation invocations invoke invoked is isolated jsonata key kill
    killed kind lambda limit listener load local log logical loop lost machines map mapping mappings matches max mb
    memory message messages method metric millis min minimum moto name new next no node number of on operation or
    output parameter parameters params part patches path period physical pid pids pipe pipes plan platform poll
    pollers pool port position postgres preload principal private process properties props provision provisioner
    provisioning query queue queues quiet raise read ready received record recorder redis ref region register
    registry release remaining remove report reports request reserved reset resolve resources response restarts
    restore result retries role route routes running runtime s schedule scheduler schedules second send sent serve
    server service set shared signal signing simple since size source sources sqs stable stack start starting
    starts state stats step stop stopping stops stream streams sweep sweeper table tables take target targets
    template testing text thaw thread threaded throttle throttled time timeout to ttl type uninstall until uri url
    visibility wait waits warm was what where window with worker workers writable write writes
    """.split()  # noqa: SIM905
)


# The template model's own words (packages/template_model): CloudFormation's, SAM's and messaging's.
MODEL_WORDS = frozenset(
    """
    after alarm artifact base behind bounds breakers claim consumer consumers declared dir document env esm
    expand extensions foreach group has int label language lease leases letter literals loops machine messaging
    metadata prefix prefixes profile profiles property provider providers readers redrive resource retained sam
    samconfig scope sfn stand subscribed substituted suffix timeouts transform transformed transforms
    value variable walk paths wiring workflow workflows main argv fan out called identifier keys reached
    chosen durable durables execution relations written nested nestings root replace refs entry entries plain above
    """.split()  # noqa: SIM905
)


def _public_names(package: Any = sam_emulator) -> dict[str, str]:
    """``module:qualified name`` -> the bare name, for every module, public module-level constant, function,
    class, method, parameter and class-level field of the package, as Python sees them once imported."""
    names: dict[str, str] = {}

    def signature(owner: str, function: Any) -> None:
        for parameter in inspect.signature(function).parameters.values():
            variadic = parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
            if parameter.name not in ("self", "cls") and not parameter.name.startswith("_") and not variadic:
                names[f"{owner}({parameter.name})"] = parameter.name

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        names[info.name] = info.name
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", module.__name__) != module.__name__:
                continue  # private, or imported from elsewhere (judged where it is defined)
            if inspect.ismodule(value) or name in vars(typing):  # a submodule, or ``TYPE_CHECKING``
                continue
            names[f"{info.name}:{name}"] = name
            if inspect.isfunction(value):
                signature(f"{info.name}:{name}", value)
            elif inspect.isclass(value):
                if inspect.isfunction(vars(value).get("__init__")):
                    signature(f"{info.name}:{name}.__init__", value.__init__)
                for member, attribute in vars(value).items():
                    if not member.startswith("_"):
                        names[f"{info.name}:{name}.{member}"] = member
                        if inspect.isfunction(attribute):
                            signature(f"{info.name}:{name}.{member}", attribute)
                for member in getattr(value, "__annotations__", {}):
                    if not member.startswith("_"):
                        names[f"{info.name}:{name}.{member}"] = member
    return names


def _words(name: str) -> set[str]:
    return {w.lower() for w in re.split(r"_|(?<=[a-z0-9])(?=[A-Z])", name) if w}


def test_every_public_name_of_the_emulator_is_made_of_english_words() -> None:
    # GIVEN every public name of the package
    names = _public_names()
    assert "runtime:LocalRuntime.wait_for_quiet" in names  # the scan sees methods
    assert "template:create_table_from(logical_id)" in names  # ...parameters
    assert "functions:Function.memory_mb" in names  # ...dataclass fields
    assert "event_sources:DEFAULT_CONCURRENCY" in names  # ...module-level constants
    assert names["private_postgres"] == "private_postgres"  # ...and modules
    # WHEN each is split into words  THEN every word is on the allow-list
    assert {qualified for qualified, name in names.items() if _words(name) - ENGLISH_WORDS} == set()


def test_every_public_name_of_the_template_model_is_made_of_english_words() -> None:
    # GIVEN the template model, the emulator's reader of the template (mechanism too, issue 40)
    names = _public_names(template_model)
    assert "template:Template.find_in_map(map_name)" in names
    # WHEN each public name is split into words  THEN every word is on the allow-list
    allowed = ENGLISH_WORDS | MODEL_WORDS
    assert {qualified for qualified, name in names.items() if _words(name) - allowed} == set()


def test_the_allow_list_refuses_the_spanish_names_the_emulator_used_to_have() -> None:
    # GIVEN names the emulator had before it became its own package  WHEN judged  THEN each has a word off the list
    for name in ("Plantilla", "Aprovisionador", "invocar", "por_nombre", "esperar_reposo", "fisicos"):
        assert _words(name) - ENGLISH_WORDS, name


# The words private names, parameters and locals may use besides the public ones: a local reads like prose
# (``pending``, ``chosen``), and the usual short names of Python, AWS and the libraries are English too
# (``kwargs``, ``lid`` for a logical id, ``emf``, ``sse``). A letter alone (``c``, ``k``, ``v``) is no word and passes.
PRIVATE_WORDS = frozenset(
    """
    active alias answers app arg args arguments attempt attributes backend bad base64 before begin bin binary bodies
    bound branch bridge buffer bus busy cache cached candidate candidates changed char child chosen class closed
    collect command commands common complete connection counter creator creators data death decision declaration
    deferred delete deliver delivering description dest destination die dimensions directive do emf empty ep epoch
    escaped etype evaluate everyone exception expanded fid fingerprint format found generate generic given glob
    globals halt handle hook host iam identity init initdb inputs inside installed intrinsics inv item iterator
    iterators join json keys kms known kw kwargs launch length lid line lines linted listeners locally location lock
    managed marker merged meta mid model module named names none note now options origin original out outside
    overrides own owner page pairs parser parts passed passes patch pattern patterns payload pending per pg
    placeholder policies policy post preprocessor previous problems processor program protocol pseudo put qid
    qualifier rate reader reasons receive records redirect reported res retry rid routing rtype rule run schema
    scopes seconds secret self session shard sns spec sse started states string sub subscriber subscription
    substitute substitutions threading threads token topic total trace trust undo urlopen urls user values var
    variables version versions without written yes zip
    find in kept map old renamed rest stem
    carried carry carrying construction described executor logger logs qualified runner services stdout
    """.split()  # noqa: SIM905
)

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _private_names(package: Any = sam_emulator) -> dict[str, str]:
    """``module:name`` -> the bare name, for every name of the package that is not public: ``_private`` functions,
    classes, constants and attributes, and every parameter and local of every function and comprehension (dunder
    names, ``self`` and ``cls`` are Python's)."""
    names: dict[str, str] = {}

    def walk(node: ast.AST, module: str, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            name = None
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = child.name
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                name = child.id
            elif isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Store) and child.attr.startswith("_"):
                name = child.attr
            elif isinstance(child, ast.arg | ast.ExceptHandler):
                name = child.arg if isinstance(child, ast.arg) else child.name
            private = local or isinstance(child, ast.arg | ast.ExceptHandler) or (name or "").startswith("_")
            if name and private and not name.startswith("__") and name not in ("self", "cls"):
                names[f"{module}:{name}"] = name
            walk(child, module, local or isinstance(child, _SCOPES))

    for path in sorted(Path(package.__path__[0]).glob("*.py")):
        walk(ast.parse(path.read_text()), path.stem, local=False)
    return names


def _foreign_private_names(package: Any, allowed: frozenset[str]) -> set[str]:
    return {q for q, name in _private_names(package).items() if {w for w in _words(name) if len(w) > 1} - allowed}


def test_every_private_name_of_the_emulator_and_the_template_model_is_made_of_english_words() -> None:
    # GIVEN every private name, parameter and local of both packages
    emulator, model = _private_names(sam_emulator), _private_names(template_model)
    assert {"deaths:_before_send", "deaths:event_name", "runtime:busy_queues"} <= set(emulator)  # defs, params, locals
    assert "template:_SUB_VAR" in model  # ...and private constants
    # WHEN each is split into words  THEN every word is on an allow-list
    allowed = ENGLISH_WORDS | MODEL_WORDS | PRIVATE_WORDS
    assert _foreign_private_names(sam_emulator, allowed) | _foreign_private_names(template_model, allowed) == set()


def test_the_private_name_check_flags_a_spanish_local_and_nothing_else(tmp_path: Path) -> None:
    # GIVEN a module of a package with one Spanish local among English names
    (tmp_path / "deaths.py").write_text(
        "def _before_send(event_name, **_):\n    muertes = [event_name]\n    return muertes\n"
    )
    package = types.SimpleNamespace(__path__=[str(tmp_path)])
    # WHEN its private names are judged  THEN the Spanish local, and only it, is flagged
    assert _foreign_private_names(package, ENGLISH_WORDS | MODEL_WORDS | PRIVATE_WORDS) == {"deaths:muertes"}
