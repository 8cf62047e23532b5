"""A state machine's definition (ASL) as the template gives it: read from its file or property, walked.

Reading only; the structure checks are the rule pack's (``cfn_lint_mensajeria.asl``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from template_model.wiring import SAM_STATE_MACHINE, STATE_MACHINES, props, resources

if TYPE_CHECKING:
    from collections.abc import Iterator


class AslLoadError(ValueError):
    """The definition could not be read (missing file, not JSON/YAML, not an object)."""


@dataclass(frozen=True)
class State:
    """One state, wherever it is nested (Parallel branches, Map processors)."""

    scope: tuple[str, ...]  # enclosing states, outermost first ("" scope = top level)
    name: str
    body: dict

    @property
    def label(self) -> str:
        return "/".join((*self.scope, self.name))


def load_file(path: str | Path) -> dict:
    """Parse an ``.asl.json`` / ``.asl.yaml`` file into a definition dict."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise AslLoadError(f"cannot read {p}: {exc.strerror}") from exc
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise AslLoadError(f"{p} is not valid JSON: {exc}") from exc
    except yaml.YAMLError as exc:
        raise AslLoadError(f"{p} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise AslLoadError(f"{p} does not hold a JSON object")
    return data


def definition_of(resource: dict, base_dir: Path) -> tuple[dict | None, str]:
    """(definition, where it came from) of a state machine resource; (None, why) when unreadable.

    Reads a SAM ``Definition``/``DefinitionUri`` (a local path, relative to the
    template) or a native ``Definition``/``DefinitionString`` (plain or ``Fn::Sub``).
    """
    p = props(resource)
    if isinstance(p.get("Definition"), dict):
        return p["Definition"], "Definition"
    uri = p.get("DefinitionUri")
    if resource.get("Type") == SAM_STATE_MACHINE and isinstance(uri, str):
        try:
            return load_file(base_dir / uri), uri
        except AslLoadError as exc:
            return None, str(exc)
    text = p.get("DefinitionString")
    if isinstance(text, dict) and "Fn::Sub" in text:
        sub = text["Fn::Sub"]
        text = sub[0] if isinstance(sub, list) and sub else sub
    if isinstance(text, str):
        try:
            data = json.loads(text)
        except ValueError as exc:
            return None, f"DefinitionString is not JSON: {exc}"
        return (data, "DefinitionString") if isinstance(data, dict) else (None, "DefinitionString not an object")
    return None, "no local definition (S3 location or intrinsic)"


def state_machines(template: dict, base_dir: str | Path) -> Iterator[tuple[str, dict | None, str]]:
    """(logical id, definition or None, origin or reason) for every state machine."""
    for rid, res in resources(template, *STATE_MACHINES).items():
        definition, origin = definition_of(res, Path(base_dir))
        yield rid, definition, origin


def walk(definition: dict, scope: tuple[str, ...] = ()) -> Iterator[State]:
    """Every state, recursing into Parallel branches and Map item processors."""
    states = definition.get("States")
    if not isinstance(states, dict):
        return
    for name, body in states.items():
        if not isinstance(body, dict):
            continue
        yield State(scope, name, body)
        for i, branch in enumerate(body.get("Branches") or []):
            if isinstance(branch, dict):
                yield from walk(branch, (*scope, f"{name}[{i}]"))
        processor = body.get("ItemProcessor") or body.get("Iterator")
        if isinstance(processor, dict):
            yield from walk(processor, (*scope, name))
