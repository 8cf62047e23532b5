"""One language per surface (docs/conventions.md): each command's ``--help`` speaks its users' language, and
every command the runbooks and the docs print still parses as written.

The language check is a heuristic, like the Spanish-sentence one of ``test_convenciones_nombres.py``: a few
function words give a sentence's language away, and none of those listed is a word of the other language.
What is not prose is set aside first: option names, metavars, choices and anything quoted.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
import tomllib
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parents[2]
# Each command's users and so its language: the on-call's CLIs and the course's demo and chaos campaign speak
# the runbooks' and the lesson's Spanish; the lab's tables and figures are the ones the English docs show.
IDIOMA = {
    "mf-dlq": "es",
    "mf-circuito": "es",
    "mf-smoke": "es",
    "mf-retenidos": "es",
    "mf-demo": "es",
    "mf-caos": "es",
    "mf-lab": "en",
}
PALABRAS = {
    "en": frozenset(
        """the of and or to with is are for from by this that each every default show until only when its an be it
        into if not usage options positional arguments message exit""".split()  # noqa: SIM905
    ),
    "es": frozenset(
        """de del el la los las que por para con sin una un y se su sus al cada hasta lo como uso opciones
        argumentos muestra ayuda""".split()  # noqa: SIM905
    ),
}
_NO_PROSA = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|«[^»]*»|\{[^}]*\}|(?<!\w)--?[\w-]+|\b[A-Z][A-Z0-9_]+\b")


def _palabras(texto: str) -> set[str]:
    """The prose words of a help text: options, metavars, choices and quoted text set aside."""
    return set(re.findall(r"[a-záéíóúñü]+", _NO_PROSA.sub(" ", texto).lower()))


def _comandos() -> dict[str, str]:
    """Each console script of the project -> its ``module:function``."""
    return tomllib.loads((RAIZ / "pyproject.toml").read_text())["project"]["scripts"]


def _parser(comando: str) -> argparse.ArgumentParser:
    """The command's parser: every CLI module offers ``construir_parser()``."""
    modulo = importlib.import_module(_comandos()[comando].split(":")[0])
    return modulo.construir_parser()


def _ayudas(parser: argparse.ArgumentParser) -> list[str]:
    """The help of a parser and of each of its subcommands (argparse lists them only through its actions)."""
    ayudas, vistos = [parser.format_help()], set()
    for accion in parser._actions:
        if isinstance(accion, argparse._SubParsersAction):
            for sub in accion.choices.values():
                if id(sub) not in vistos:
                    vistos.add(id(sub))
                    ayudas += _ayudas(sub)
    return ayudas


def test_every_command_has_a_surface_language() -> None:
    # GIVEN the project's console scripts  THEN each one's language is decided here (a new one is decided, not missed)
    assert set(_comandos()) == set(IDIOMA)


@pytest.mark.parametrize("comando", sorted(IDIOMA))
def test_each_commands_help_is_in_its_surfaces_language(comando: str) -> None:
    # GIVEN the command's help and its subcommands', frame included (usage, option titles, -h's line)
    idioma = IDIOMA[comando]
    otro = "en" if idioma == "es" else "es"
    ayudas = _ayudas(_parser(comando))
    # WHEN their prose is read
    palabras = set().union(*(_palabras(a) for a in ayudas))
    # THEN it speaks its surface's language, and no sentence of the other one
    assert palabras & PALABRAS[idioma], ayudas[0]
    assert palabras & PALABRAS[otro] == set(), ayudas


@pytest.mark.parametrize(
    ("texto", "idioma"),
    [
        ("show each dependency's breaker", "en"),
        ("options:\n  -h, --help  show this help message and exit", "en"),
        ("ver mensajes sin borrarlos (visibilidad 5 s)", "es"),
        ("opciones:\n  -h, --help  muestra esta ayuda y sale", "es"),
        ("--cola, --queue COLA  la DLQ, por nombre o URL", "es"),
        ("runs averaged per point, 1-20 (default 3)", "en"),
    ],
)
def test_language_heuristic_tells_the_languages_apart(texto: str, idioma: str) -> None:
    # GIVEN a line of help  WHEN its prose is read  THEN it has words of its language and none of the other
    otro = "en" if idioma == "es" else "es"
    assert _palabras(texto) & PALABRAS[idioma]
    assert not _palabras(texto) & PALABRAS[otro]


def _lineas_de_comando() -> list[tuple[str, str, list[str]]]:
    """``(where, command, argv)`` for every ``mf-*`` line of a fenced block in the runbooks, the docs and the README.

    Backslash continuations are joined; a variable the block sets (``E="--endpoint-url http://..."``) is expanded as
    the shell would; a comment, a redirection or a pipe ends the command; a doc's ``[optional part]`` is included.
    """
    comandos = []
    for fichero in sorted([*RAIZ.glob("runbooks/*.md"), *RAIZ.glob("docs/**/*.md"), RAIZ / "README.md"]):
        for bloque in re.findall(r"^```[^\n]*\n(.*?)^```", fichero.read_text(), re.MULTILINE | re.DOTALL):
            variables: dict[str, list[str]] = {}
            for linea in bloque.replace("\\\n", " ").splitlines():
                if asignacion := re.fullmatch(r"([A-Z_]+)=(\"[^\"]*\"|\S+)(\s+#.*)?", linea.strip()):
                    variables[asignacion[1]] = asignacion[2].strip('"').split()
                if not (orden := re.match(r"(?:\S*/)?(mf-[a-z]+)\s(.*)", linea.strip() + " ")):
                    continue
                argv: list[str] = []
                opcional = False  # inside a doc's "[--ritmo 4]": the optional part is checked too
                for palabra in shlex.split(orden[2], comments=True):
                    if palabra in ("|", ">", ">>", "&&", ";", "&"):
                        break
                    if palabra.startswith("[") and not opcional:
                        palabra, opcional = palabra[1:], True
                    if palabra.endswith("]") and opcional:
                        palabra, opcional = palabra[:-1], False
                    argv += variables.get(palabra[1:], [palabra]) if palabra.startswith("$") else [palabra]
                comandos.append((f"{fichero.relative_to(RAIZ)}: {linea.strip()}", orden[1], argv))
    return comandos


def test_the_runbooks_and_docs_print_commands_to_check() -> None:
    # GIVEN the commands the runbooks print  THEN the scan finds them (dlq.md's reprocess, circuito-abierto.md's)
    comandos = {c for _, c, _ in _lineas_de_comando()}
    assert {"mf-dlq", "mf-circuito"} <= comandos


@pytest.mark.parametrize(("donde", "comando", "argv"), _lineas_de_comando(), ids=lambda v: str(v)[:60])
def test_every_command_the_runbooks_and_docs_print_parses_as_written(donde: str, comando: str, argv: list[str]) -> None:
    # GIVEN a command line as a runbook or a doc prints it  WHEN its CLI parses it
    try:
        _parser(comando).parse_args(argv)
    except SystemExit as salida:  # --help exits 0; a usage error exits 2
        # THEN it is a command the CLI takes
        assert salida.code == 0, donde
