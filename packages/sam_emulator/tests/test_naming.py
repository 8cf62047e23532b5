"""The emulator is mechanism only, so every public name is English: checked by an allow-list of words.

A deny-list passes any Spanish name nobody thought to list; an allow-list fails a new one until it is
English or the word is added here, which is a decision a reviewer sees.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import typing
from typing import Any

import sam_emulator

# The words the emulator's public names are made of (a word list reads as words, not as quoted strings).
ENGLISH_WORDS = frozenset(
    """
    account acquire acting add address advance alive all answer api apply arn as asl at atomic att attempts
    attribute available aws background batch batches binaries body boundaries boundary by call caller calls cap
    capture check client clock close code cold compress compressed compression concurrency condition config
    consuming context control count counts cpu crashed create created credentials current cut dead deadline
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


def _public_names() -> dict[str, str]:
    """``module:qualified name`` -> the bare name, for every module, public module-level constant, function,
    class, method, parameter and class-level field of the package, as Python sees them once imported."""
    names: dict[str, str] = {}

    def signature(owner: str, function: Any) -> None:
        for parameter in inspect.signature(function).parameters.values():
            variadic = parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
            if parameter.name not in ("self", "cls") and not parameter.name.startswith("_") and not variadic:
                names[f"{owner}({parameter.name})"] = parameter.name

    for info in pkgutil.iter_modules(sam_emulator.__path__):
        module = importlib.import_module(f"sam_emulator.{info.name}")
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
    assert "template:Template.find_in_map(map_name)" in names  # ...parameters
    assert "functions:Function.memory_mb" in names  # ...dataclass fields
    assert "event_sources:DEFAULT_CONCURRENCY" in names  # ...module-level constants
    assert names["private_postgres"] == "private_postgres"  # ...and modules
    # WHEN each is split into words  THEN every word is on the allow-list
    assert {qualified for qualified, name in names.items() if _words(name) - ENGLISH_WORDS} == set()


def test_the_allow_list_refuses_the_spanish_names_the_emulator_used_to_have() -> None:
    # GIVEN names the emulator had before it became its own package  WHEN judged  THEN each has a word off the list
    for name in ("Plantilla", "Aprovisionador", "invocar", "por_nombre", "esperar_reposo", "fisicos"):
        assert _words(name) - ENGLISH_WORDS, name
