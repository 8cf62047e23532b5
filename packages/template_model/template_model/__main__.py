"""``python -m template_model expand SRC DEST [--profile NAME] [--samconfig PATH] [--parameter KEY=VALUE]...``

Write SRC as CloudFormation would read it: its ``Fn::ForEach`` loops expanded (checkov does not expand
them, decision 0130) and, with ``--profile``, that samconfig.toml environment's parameter overrides as
the parameters' defaults (checkov evaluates conditions at the defaults); ``--parameter`` sets one more
(``Chaos=enabled``). JSON, which checkov reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cfnlint.decode import decode_str

from template_model.document import TemplateError, expand
from template_model.profiles import profile_parameters, with_defaults


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m template_model", description=__doc__.split("\n\n")[1])
    commands = parser.add_subparsers(dest="command", required=True)
    expand_command = commands.add_parser("expand", help="write the template with its loops expanded")
    expand_command.add_argument("source", type=Path)
    expand_command.add_argument("destination", type=Path)
    expand_command.add_argument("--profile", help="a samconfig.toml environment whose overrides become defaults")
    expand_command.add_argument("--samconfig", type=Path, help="default: samconfig.toml beside SRC")
    expand_command.add_argument("--parameter", action="append", default=[], help="KEY=VALUE made a default")
    arguments = parser.parse_args(argv)
    try:
        text = arguments.source.read_text()
        defaults: dict[str, str] = {}
        if arguments.profile:
            samconfig = arguments.samconfig or arguments.source.parent / "samconfig.toml"
            defaults |= profile_parameters(arguments.profile, samconfig)
        if bad := [p for p in arguments.parameter if "=" not in p]:
            raise TemplateError(f"--parameter {bad[0]!r} is not KEY=VALUE")
        defaults |= dict(p.split("=", 1) for p in arguments.parameter)
        text = with_defaults(text, defaults)
        document, errors = decode_str(text)
        if errors or not isinstance(document, dict):
            raise TemplateError(f"{arguments.source}: {'; '.join(str(e) for e in errors) or 'not a template'}")
        expanded = expand(document, arguments.source)
    except (OSError, TemplateError) as exc:
        print(f"template_model: {exc}", file=sys.stderr)
        return 1
    arguments.destination.parent.mkdir(parents=True, exist_ok=True)
    arguments.destination.write_text(json.dumps(expanded, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
