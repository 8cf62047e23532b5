"""What the README, `docs/` and `runbooks/` name exists (issue 39): paths, links, modules, make targets.

A page that names a file that moved sends a newcomer nowhere; the README once named
`mercadofresco_local/muerte.py` and `postgres_privado.py` long after both had moved. "Exists" means
among the files git keeps (tracked, or new and not ignored): what a fresh clone has, not what a run
left behind. Checked, in every page (`README.md`, `docs/**/*.md`, `runbooks/**/*.md`):

- every repository path in code (backticks or a fenced block) that starts at the repository's top
  level (`tools/...`, `template.yaml`); `<name>` and `*` are wildcards (at least one file must match);
  paths under what a run generates (:data:`GENERATED`) are not checked;
- every bare file name in backticks (`fallos.yaml`) names a file somewhere in the repository;
- every relative Markdown link, relative to its page, and its `#anchor` is a heading of the target;
- every `python -m module` command names a module Python runs; every dotted name whose first part is
  one of the project's packages (`mercadofresco_informes.reposo`, `mercadofresco.aws.read_secret`) is
  a module, or a name defined at the top of one (a string of the template, such as the event source
  `mercadofresco.pedidos`, is not a module);
- every `make <target>` is a target of the Makefile, every `mf-<command>` a console script;
- README.md stays a front page: at most :data:`README_MAX_LINES` lines;
- every page under `docs/` is linked from its index (`docs/README.md`, `docs/decisions/README.md`).
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import re
import subprocess
import tomllib
from functools import cache
from pathlib import Path, PurePosixPath

import pytest
from template_model import Template

RAIZ = Path(__file__).resolve().parents[2]
README_MAX_LINES = 200

# The repository's top level: a path in code starting with one of these is a promise that it exists.
TOP_LEVEL_DIRS = (
    ".ci", "bench", "docs", "events", "functions", "layers", "packages", "requirements", "rules", "runbooks",
    "statemachines", "tests", "tools",
)  # fmt: skip
ROOT_FILES = (
    "template.yaml", "samconfig.toml", "Makefile", "pyproject.toml", "README.md", ".cfnlintrc", ".checkov.yaml",
)  # fmt: skip
# What a run creates (all ignored by git): a page may name them, they need not exist in a checkout.
GENERATED = ("build/", ".aws-sam/", ".venv/", ".venv-checkov/", ".venv-ministack/", "bench/out/")
# Where the on-call writes what a runbook asks for (an incident record): named before it exists.
WRITTEN_BY_THE_ON_CALL = ("docs/incidentes/",)
# Pages other engineers are writing as this is merged (issue 39's brief): linked ahead of time. An entry
# fails once its page exists, so it is removed when the page lands.
COMING: dict[str, str] = {}
# Where Python finds the project's packages: pytest's pythonpath plus the editable packages.
EDITABLE_ROOTS = ("packages/sam_emulator", "packages/template_model", "rules")
FILE_SUFFIXES = (".py", ".md", ".sql", ".json", ".yaml", ".yml", ".toml", ".sh", ".lua", ".txt", ".pem", ".png")

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
_TOKEN_END = ".,;:)]}'\""
_PYTHON_M = re.compile(r"(?:python[\d.]*|\$\(PY\))\s+-m\s+([A-Za-z_][\w.]*)")
_MAKE = re.compile(r"(?<![\w-])make\s+((?:[A-Z_]+=\S+\s+)*)([a-z][\w-]*)")
_MF_COMMAND = re.compile(r"^(?:\.venv/bin/)?(mf-[a-z]+) ", re.M)  # a command line, not `mf-motivo` (an attribute)
_DOTTED = re.compile(r"(?<![\w./-])([a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def pages() -> list[Path]:
    found = [RAIZ / "README.md", *sorted((RAIZ / "docs").rglob("*.md")), *sorted((RAIZ / "runbooks").rglob("*.md"))]
    return [p for p in found if p.is_file()]


def _rel(page: Path) -> str:
    return page.relative_to(RAIZ).as_posix()


# ------------------------------------------------------------------ what a page says
def code_spans(text: str) -> list[str]:
    """The text of every fenced block and every inline code span, in page order."""
    spans = [m.group(1) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub("", text)
    return spans + [m.group(2) for m in _INLINE.finditer(prose)]


def _tokens(span: str) -> list[str]:
    """Whitespace-separated words, each also split at ``=`` (``EVENT=events/x.json``) and stripped."""
    words = []
    for word in span.split():
        for part in word.split("="):
            part = part.strip(_TOKEN_END).removeprefix("(")
            if part:
                words.append(part)
    return words


def repository_paths(span: str) -> list[str]:
    """The words of a code span that are paths from the repository's top level."""
    found = []
    for word in _tokens(span):
        if "..." in word or "…" in word or "://" in word:
            continue
        word = re.sub(r"(\.py):[\w.]+$", r"\1", word)  # `module.py:function`
        first = word.split("/", 1)[0]
        if (first in TOP_LEVEL_DIRS and "/" in word) or word in ROOT_FILES or word.startswith(GENERATED):
            found.append(word)
    return found


def bare_file_names(span: str) -> list[str]:
    """A code span that is one file name and nothing else (`fallos.yaml`), not a path."""
    word = span.strip()
    if " " in word or "/" in word or not word.endswith(FILE_SUFFIXES) or word in ROOT_FILES:
        return []
    return [word]


def links(text: str) -> list[str]:
    """Relative Markdown link targets outside code (``[x](../tools/a.py#part)``)."""
    prose = _INLINE.sub("", _FENCE.sub("", text))
    return [t for t in _LINK.findall(prose) if not re.match(r"[a-z]+:", t)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text())
    found: set[str] = set()
    for heading in _HEADING.findall(text):
        base, n = slug(heading), 0
        while (candidate := base if n == 0 else f"{base}-{n}") in found:
            n += 1
        found.add(candidate)
    return found


# ------------------------------------------------------------------ what the repository has
@cache
def repository_files() -> frozenset[str]:
    """Every file git keeps or would keep (tracked, or new and not ignored): what a fresh clone has, no more."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=RAIZ,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return frozenset(f for f in listed.split("\0") if f and (RAIZ / f).is_file())  # a file deleted, not yet staged


@cache
def repository_folders() -> frozenset[str]:
    return frozenset(p.as_posix() for f in repository_files() for p in PurePosixPath(f).parents if p.name)


def path_exists(path: str) -> bool:
    """A file, a folder or a pattern (``<name>``, ``${Variable}``, ``*``, ``{a,b}``) with at least one match in the
    repository. A variable or a choice may come cut at its closing brace (the word's end is stripped of it)."""
    pattern = re.sub(r"<[^>]*>|\$\{[^}/]*\}?", "*", path.rstrip("/"))
    if "{" in pattern:
        if "}" not in pattern.split("{", 1)[1]:
            pattern += "}"
        head, rest = pattern.split("{", 1)
        options, tail = rest.split("}", 1)
        return any(path_exists(head + option + tail) for option in options.split(","))
    candidates = repository_files() | repository_folders()
    if "*" not in pattern:
        return pattern in candidates
    return any(fnmatch.fnmatch(f, pattern) for f in candidates)


@cache
def _source_roots() -> tuple[Path, ...]:
    pythonpath = tomllib.loads((RAIZ / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["pythonpath"]
    return tuple(RAIZ / r for r in (*pythonpath, *EDITABLE_ROOTS))


def _module_file(dotted: str) -> Path | None:
    """The file of one of the project's modules or packages, found as Python finds it, without importing; a
    folder of modules without ``__init__.py`` (``tests``) is a namespace package, returned as the folder."""
    parts = dotted.split(".")
    for root in _source_roots():
        base = root.joinpath(*parts)
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
        if base.is_dir() and any(base.glob("*.py")):
            return base
    return None


def runnable(module: str) -> bool:
    """Whether ``python -m module`` runs: a module of the project's own packages (a package with its
    ``__main__.py``), else any installed one."""
    if _module_file(module.split(".")[0]) is None:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    found = _module_file(module)
    return found is not None and (found.name != "__init__.py" or (found.parent / "__main__.py").is_file())


@cache
def _top_level_names(module: Path) -> frozenset[str]:
    names: set[str] = set()
    if module.is_dir():
        return frozenset()  # a namespace package defines nothing but its modules
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def dotted_name_problem(dotted: str) -> str | None:
    """None when ``dotted`` is a module of the project or a name at the top of one; else what is wrong."""
    parts = dotted.split(".")
    if _module_file(parts[0]) is None:
        return None  # not one of the project's packages (botocore.config, a file name): not checked here
    for i in range(len(parts), 0, -1):
        module = _module_file(".".join(parts[:i]))
        if module is None:
            continue
        if i == len(parts) or parts[i] in _top_level_names(module):
            return None
        return f"{'.'.join(parts[:i])} has no {parts[i]!r}"
    return "no such module"


@cache
def template_names() -> frozenset[str]:
    """Every string the template holds (an event source such as ``mercadofresco.pedidos`` is not a module)."""
    found: set[str] = set()

    def collect(node: object) -> None:
        if isinstance(node, dict):
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)
        elif isinstance(node, str):
            found.add(node)

    for _, unit in Template(path=RAIZ / "template.yaml").walk():
        collect(unit.doc)
    return frozenset(found)


@cache
def make_targets() -> frozenset[str]:
    text = (RAIZ / "Makefile").read_text()
    return frozenset(t for line in re.findall(r"^([a-z][\w .-]*):", text, re.M) for t in line.split())


@cache
def console_scripts() -> frozenset[str]:
    return frozenset(tomllib.loads((RAIZ / "pyproject.toml").read_text())["project"]["scripts"])


# ------------------------------------------------------------------ the checks, for any page's text
def problems(text: str, page: Path) -> list[str]:
    """Every name in ``text`` (the page ``page``) that does not exist, one line each."""
    found = []
    for span in code_spans(text):
        for path in repository_paths(span):
            if path.startswith(GENERATED + WRITTEN_BY_THE_ON_CALL) or path in COMING:
                continue
            if not path_exists(path):
                found.append(f"path {path}")
        for name in bare_file_names(span):
            if not any(PurePosixPath(f).name == name for f in repository_files()):
                found.append(f"file {name} (in no folder)")
        for module in _PYTHON_M.findall(span):
            if not runnable(module):
                found.append(f"python -m {module}")
        for dotted in _DOTTED.findall(span):
            if dotted.endswith(FILE_SUFFIXES) or dotted in template_names():
                continue
            if why := dotted_name_problem(dotted):
                found.append(f"name {dotted}: {why}")
        for _, target in _MAKE.findall(span):
            if target not in make_targets():
                found.append(f"make {target}")
        for command in _MF_COMMAND.findall(span):
            if command not in console_scripts():
                found.append(f"command {command}")
    for target in links(text):
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        relative = linked.relative_to(RAIZ).as_posix() if linked.is_relative_to(RAIZ) else None
        if relative in COMING:
            continue
        if relative is None or not path_exists(relative):
            found.append(f"link {target}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            found.append(f"link {target}: no heading #{anchor} in {linked.name}")
    return found


# ------------------------------------------------------------------ the tests
@pytest.mark.parametrize("page", pages(), ids=_rel)
def test_every_name_a_page_gives_exists(page: Path) -> None:
    # GIVEN a page of the README, docs/ or runbooks/
    # WHEN every path, link, module, make target and command it names is looked up
    missing = problems(page.read_text(), page)
    # THEN each is there
    assert not missing, f"{_rel(page)} names what does not exist:\n" + "\n".join(missing)


def test_the_readme_is_a_front_page_of_at_most_200_lines() -> None:
    lines = len((RAIZ / "README.md").read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move the detail to a page of docs/"


def _pages_indexed_by(index: Path) -> list[Path]:
    """The pages beside an index, and the index of each folder below it."""
    folder = index.parent
    return sorted([p for p in folder.glob("*.md") if p != index] + list(folder.glob("*/README.md")))


@pytest.mark.parametrize("index", ["docs/README.md", "docs/decisions/README.md"])
def test_every_page_of_a_docs_folder_is_linked_from_its_index(index: str) -> None:
    # GIVEN an index and the pages beside it (and the indexes below it)
    index_page = RAIZ / index
    linked = {(index_page.parent / t.partition("#")[0]).resolve() for t in links(index_page.read_text())}
    # THEN every one is linked: a page nobody links is found by nobody
    orphans = [_rel(p) for p in _pages_indexed_by(index_page) if p.resolve() not in linked]
    assert not orphans, f"{index} does not link: {orphans}"


@pytest.mark.parametrize("path", sorted(COMING))
def test_a_coming_page_is_listed_only_until_it_lands(path: str) -> None:
    assert not (RAIZ / path).exists(), f"{path} exists now: remove it from COMING"


def test_every_generated_root_is_ignored_by_git() -> None:
    # The allow-list may hide only what a run creates, never a committed path.
    ignored = set((RAIZ / ".gitignore").read_text().split())
    assert set(GENERATED) <= ignored


def test_stale_names_from_the_old_readme_are_caught() -> None:
    # GIVEN lines the README used to carry, each naming what had moved or never existed
    old = RAIZ / "README.md"
    text = "\n".join(
        [
            "Lambda crash or timeout mid-charge | `tools/mercadofresco_local/muerte.py`",
            "a private PostgreSQL server (`packages/sam_emulator/sam_emulator/postgres_privado.py`)",
            "killed by `muerte.py`",
            "```bash\npython -m mercadofresco_local.reposo prueba\nmake invocar FN=CobroFunction\n```",
            "the on-call's `mf-reintentar --cola x`, the local run's `mercadofresco_local.caos.pila`",
            "see [the runbook](runbooks/dlq-viejo.md) and [storm](#the-retry-storm-measured)",
        ]
    )
    # WHEN checked as the README
    found = problems(text, old)
    # THEN each one is reported
    assert sorted(found) == sorted(
        [
            "path tools/mercadofresco_local/muerte.py",
            "path packages/sam_emulator/sam_emulator/postgres_privado.py",
            "python -m mercadofresco_local.reposo",
            "name mercadofresco_local.reposo: mercadofresco_local has no 'reposo'",
            "make invocar",
            "file muerte.py (in no folder)",
            "command mf-reintentar",
            "name mercadofresco_local.caos.pila: mercadofresco_local has no 'caos'",
            "link runbooks/dlq-viejo.md",
            f"link #the-retry-storm-measured: no heading #the-retry-storm-measured in {old.name}",
        ]
    )


@pytest.mark.parametrize(
    ("span", "exists"),
    [
        ("`layers/${Architecture}`", True),
        ("`layers/${Architecture}/comun`", False),
        ("`layers/{comun,postgres}`", True),
    ],
)
def test_a_variable_in_a_path_is_a_wildcard_even_cut_at_its_brace(span: str, exists: bool) -> None:
    # GIVEN a path naming a template variable (the word's closing brace is stripped as punctuation)
    (path,) = repository_paths(code_spans(span)[0])
    # WHEN checked  THEN the variable matches any folder, what follows it must still exist, a choice is each option
    assert path_exists(path) is exists
