"""A template file as CloudFormation would see it: decoded, its ``Fn::ForEach`` loops expanded.

Decoding is cfn-lint's (``!Ref``/``!Sub`` short forms, the same errors ``cfn-lint`` prints). A template
that declares ``AWS::LanguageExtensions`` has its loops expanded by cfn-lint's own transform, so every
reader sees the resources cfn-lint's rules see (decision 0130). Two things of the template as written
are kept through that transform, so that a looped template reads as the same template written out:

- ``Globals``, merged by :meth:`template_model.Template.function_properties` only: cfn-lint merges them
  into the written SAM resources *before* expanding, so a function a loop generates would otherwise get none;
- every ``Fn::FindInMap``: the transform resolves each one whose keys it can (every one outside a loop, and
  a loop's ``!Ref`` keys), which would turn a bound read from ``Mappings.Plazos`` into a literal beside its
  declaration; a loop's identifier inside one is still replaced (``[Plazos, !Sub "${Nombre}Function", ...]``
  reads ``[Plazos, ErpFunction, ...]``).
"""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

from cfnlint.decode import decode
from cfnlint.template import Template as _CfnLintTemplate

LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"
FOREACH_PREFIX = "Fn::ForEach::"
FIND_IN_MAP = "Fn::FindInMap"
_KEPT_FIND_IN_MAP = "TemplateModel::FindInMap"  # what the transform does not know, and so leaves as written


class TemplateError(Exception):
    """The template cannot be read, or something it says cannot be resolved here."""


def read(path: str | Path) -> dict[str, Any]:
    """Decode a template file and expand its loops; a clear error when it is unreadable.

    Each caller gets its own copy of what one read of the file (as it is now on disk) gave: a unit is read again
    every time its parent's :meth:`~template_model.Template.units` is asked, and expanding a file's loops takes
    about a second where copying its document takes a twentieth of that.
    """
    path = Path(path)
    if not path.is_file():
        raise TemplateError(f"{path}: no such template file")
    found = path.stat()
    return copy.deepcopy(_read(str(path.resolve()), (found.st_mtime_ns, found.st_size, found.st_ino)))


@lru_cache(maxsize=64)
def _read(path: str, _version: tuple[int, int, int]) -> dict[str, Any]:
    """One file's document, read once per version of the file on disk (when written, its size, its inode)."""
    document, errors = decode(path)
    if errors or not isinstance(document, dict):
        raise TemplateError(f"{path}: {'; '.join(str(e) for e in errors) or 'not a template (no mapping at the top)'}")
    return expand(document, path)


def transforms(document: dict[str, Any]) -> list[str]:
    """The template's ``Transform`` as a list."""
    declared = document.get("Transform") or []
    return [t for t in (declared if isinstance(declared, list) else [declared]) if isinstance(t, str)]


def has_loops(node: Any) -> bool:
    """Whether a ``Fn::ForEach::*`` key is left anywhere in ``node``."""
    if isinstance(node, dict):
        return any(str(k).startswith(FOREACH_PREFIX) or has_loops(v) for k, v in node.items())
    if isinstance(node, list):
        return any(has_loops(v) for v in node)
    return False


def expand(document: dict[str, Any], path: str | Path | None = None) -> dict[str, Any]:
    """``document`` with its ``Fn::ForEach`` loops expanded (a copy; the same dict when it has none).

    Accepts an already-decoded template (a cfn-lint rule's ``cfn.template``, which cfn-lint has expanded
    already, comes back unchanged).
    """
    if not isinstance(document, dict):
        raise TemplateError(f"a template is a mapping, not {type(document).__name__}")
    if LANGUAGE_EXTENSIONS not in transforms(document) or not has_loops(document):
        return document
    without_globals = {k: _renamed(v, FIND_IN_MAP, _KEPT_FIND_IN_MAP) for k, v in document.items() if k != "Globals"}
    linted = _CfnLintTemplate(str(path or "template.yaml"), without_globals, ["us-east-1"])
    problems = linted.transform()
    if problems or has_loops(linted.template):
        reasons = "; ".join(p.message for p in problems) or "a loop cfn-lint could not expand"
        raise TemplateError(f"{path or 'template'}: Fn::ForEach: {reasons}")
    expanded = {k: _renamed(v, _KEPT_FIND_IN_MAP, FIND_IN_MAP) for k, v in linted.template.items()}
    if "Globals" in document:
        expanded["Globals"] = document["Globals"]
    return expanded


def _renamed(node: Any, old: str, new: str) -> Any:
    """A copy of ``node`` with every ``old`` key named ``new``, but a loop's collection (the transform resolves
    a ``Fn::FindInMap`` there, to know what to loop over)."""
    if isinstance(node, list):
        return [_renamed(x, old, new) for x in node]
    if not isinstance(node, dict):
        return node
    renamed = {}
    for key, value in node.items():
        if str(key).startswith(FOREACH_PREFIX) and isinstance(value, list) and len(value) == 3:
            renamed[key] = [value[0], value[1], _renamed(value[2], old, new)]
        else:
            renamed[new if key == old else key] = _renamed(value, old, new)
    return renamed
