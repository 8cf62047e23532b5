"""``template.yaml`` as a ``samconfig.toml`` profile deploys it: its parameter_overrides made the defaults.

checkov evaluates conditions at the parameters' defaults, so resources only a profile creates (the
``prueba`` profile's NAT instance) are scanned in such a copy; ``make lint`` scans it, as it scans the
``Chaos=enabled`` one (``mercadofresco_local.caos.fis``).

    python -m mercadofresco_local.perfiles prueba template.yaml build/template-prueba.yaml
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

from mercadofresco_local import RAIZ


def parametros_del_perfil(nombre: str, samconfig: Path = RAIZ / "samconfig.toml") -> dict[str, str]:
    """A samconfig.toml environment's ``parameter_overrides`` (``Key=Value`` separated by spaces)."""
    config = tomllib.loads(samconfig.read_text())
    sustituciones = config[nombre]["deploy"]["parameters"].get("parameter_overrides", "")
    return dict(par.split("=", 1) for par in sustituciones.split())


def con_perfil(plantilla_yaml: str, parametros: dict[str, str]) -> str:
    """The template's text with each of these parameters' ``Default`` replaced (every one must exist)."""
    for clave, valor in parametros.items():
        patron = re.compile(rf"(\n  {re.escape(clave)}:\n(?:    (?!Default:).*\n)*?    Default: )[^\n]*\n")
        plantilla_yaml, n = patron.subn(lambda m, v=valor: f"{m.group(1)}{json.dumps(v)}\n", plantilla_yaml)
        if n != 1:
            raise ValueError(f"template.yaml has no parameter {clave} with a Default")
    return plantilla_yaml


def main(argv: list[str] | None = None) -> int:
    """``PROFILE SRC DEST``: write SRC with PROFILE's parameter overrides as the defaults."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    perfil, origen, destino = argv
    Path(destino).parent.mkdir(parents=True, exist_ok=True)
    Path(destino).write_text(con_perfil(Path(origen).read_text(), parametros_del_perfil(perfil)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
