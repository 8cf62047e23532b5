"""The frame argparse puts around a Spanish command's help and errors, in Spanish too.

A CLI whose surface is Spanish (docs/conventions.md, "One language per surface") writes its own help in
Spanish, but argparse adds its frame in English: ``usage:``, ``options:``, the ``-h`` line, and every
error it raises while parsing (``the following arguments are required: --cola``). :class:`ParserEspanol`
is an ``ArgumentParser`` that says those in Spanish as well, so the on-call (and the course's student)
reads one language from ``--help`` to the last error line. Its subcommands inherit it (argparse builds a
subparser with its parent's class). The on-call's CLIs use it, and so do the demo and the chaos campaign,
which may import this package (``tests/unit/test_import_graph.py``).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, NoReturn

# argparse's own error messages (Python 3.13) and how they read in Spanish; an "argument X: ..." message is
# translated after its prefix. A message argparse did not write (a type's ArgumentTypeError) passes as it is.
_ERRORES = tuple(
    (re.compile(patron), espanol)
    for patron, espanol in (
        (r"the following arguments are required: (.+)", r"faltan argumentos obligatorios: \1"),
        (r"one of the arguments (.+) is required", r"hace falta uno de estos argumentos: \1"),
        (r"unrecognized arguments: (.+)", r"argumentos desconocidos: \1"),
        (r"ambiguous option: (.+) could match (.+)", r"opción ambigua: \1 puede ser \2"),
        (r"not allowed with argument (.+)", r"no se admite junto a \1"),
        (r"expected one argument", r"falta su valor"),
        (r"expected at most one argument", r"admite como mucho un valor"),
        (r"expected at least one argument", r"necesita al menos un valor"),
        (r"expected (\d+) arguments?", r"necesita \1 valores"),
        (r"invalid choice: (.+) \(choose from (.+)\)", r"valor no válido: \1 (elige entre \2)"),
        (r"invalid (\w+) value: (.+)", r"valor no válido (\1): \2"),
        (r"ignored explicit argument (.+)", r"no admite valor: \1"),
    )
)
_ARGUMENTO = re.compile(r"argument (\S+): (.+)", re.DOTALL)


def en_espanol(mensaje: str) -> str:
    """An argparse error message in Spanish (one it did not write, as it is)."""
    if argumento := _ARGUMENTO.fullmatch(mensaje):
        return f"argumento {argumento[1]}: {en_espanol(argumento[2])}"
    for patron, espanol in _ERRORES:
        if patron.fullmatch(mensaje):
            return patron.sub(espanol, mensaje)
    return mensaje


class _Formato(argparse.HelpFormatter):
    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, "uso: " if prefix is None else prefix)


class ParserEspanol(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose frame (``uso:``, ``opciones:``, ``-h``, its errors) is Spanish."""

    def __init__(self, *args: Any, add_help: bool = True, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formato)
        super().__init__(*args, add_help=False, **kwargs)
        # argparse names its two default groups in __init__ and offers no argument to name them otherwise.
        self._positionals.title = "argumentos"
        self._optionals.title = "opciones"
        if add_help:
            ayuda = "muestra esta ayuda y sale"
            self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help=ayuda)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {en_espanol(message)}\n")
