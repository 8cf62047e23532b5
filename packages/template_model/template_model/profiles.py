"""Deploy profiles: a ``samconfig.toml`` environment's ``parameter_overrides``, and a template with them as defaults.

checkov evaluates conditions at the parameters' defaults, so what only a profile creates is scanned in a
copy whose defaults are that profile's values (:func:`with_defaults`).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

from template_model.document import TemplateError


def profile_parameters(profile: str, samconfig: str | Path) -> dict[str, str]:
    """A samconfig.toml environment's ``deploy`` ``parameter_overrides`` (``Key=Value`` separated by spaces)."""
    path = Path(samconfig)
    try:
        config = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TemplateError(f"{path}: {exc}") from None
    try:
        parameters = config[profile]["deploy"]["parameters"]
    except (KeyError, TypeError):
        raise TemplateError(f"{path} has no [{profile}.deploy.parameters]") from None
    overrides = parameters.get("parameter_overrides", "")
    pairs = shlex.split(" ".join(overrides) if isinstance(overrides, list) else str(overrides))
    if bad := [p for p in pairs if "=" not in p]:
        raise TemplateError(f"{path} [{profile}]: parameter_overrides {bad[0]!r} is not Key=Value")
    return dict(p.split("=", 1) for p in pairs)


def with_defaults(template_text: str, parameters: dict[str, str]) -> str:
    """The template's text with each of these parameters' ``Default`` replaced (every one must exist)."""
    for name, value in parameters.items():
        pattern = re.compile(rf"(\n  {re.escape(name)}:\n(?:    (?!Default:).*\n)*?    Default: )[^\n]*\n")
        template_text, n = pattern.subn(lambda m, v=value: f"{m.group(1)}{json.dumps(v)}\n", template_text)
        if n != 1:
            raise TemplateError(f"the template has no parameter {name} with a Default")
    return template_text
