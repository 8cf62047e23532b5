"""The template's Architecture parameter alone decides the layers' compiled wheels (issue 35).

SAM tells a makefile build nothing of the architecture, and its cache reused an aarch64
PostgresLayer for ``Architecture=x86_64`` (the function then fails with "libpq library not
found"). Built here as a user would, with the cache on, in both orders.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

RAIZ = Path(__file__).resolve().parents[2]
MAQUINA = {"x86_64": "x86_64", "arm64": "aarch64"}


def _construir(arquitectura: str, destino: Path) -> Path:
    """``sam build PostgresLayer --parameter-overrides Architecture=<arquitectura>``, cached, into ``destino``."""
    venv_bin = Path(sys.executable).parent
    # ARCHITECTURE set to the other one: what the build does must not depend on a variable
    otra = "arm64" if arquitectura == "x86_64" else "x86_64"
    env = {**os.environ, "PATH": f"{venv_bin}:{os.environ['PATH']}", "ARCHITECTURE": otra}
    comando = [
        str(venv_bin / "sam"), "build", "PostgresLayer", "--cached",
        "--parameter-overrides", f"Architecture={arquitectura}",
        "--build-dir", str(destino / "build"), "--cache-dir", str(destino / "cache"),
    ]  # fmt: skip
    salida = subprocess.run(comando, cwd=RAIZ, env=env, capture_output=True, text=True, check=False)
    assert salida.returncode == 0, salida.stdout[-2000:] + salida.stderr[-2000:]
    return destino / "build" / "PostgresLayer" / "python"


def _modulos_nativos(capa: Path) -> set[str]:
    return {p.name for p in (capa / "psycopg_binary").glob("_psycopg.cpython-313-*.so")}


def test_layer_built_for_each_architecture_in_turn_carries_that_architecture_s_driver(tmp_path: Path) -> None:
    # GIVEN one build and cache folder, built for x86_64 first, then arm64, then x86_64 again (cache on)
    for arquitectura in ("x86_64", "arm64", "x86_64"):
        # WHEN only the parameter says which
        capa = _construir(arquitectura, tmp_path)
        # THEN PostgresLayer's compiled driver is for that CPU, never the cached other one
        assert _modulos_nativos(capa) == {f"_psycopg.cpython-313-{MAQUINA[arquitectura]}-linux-gnu.so"}, arquitectura
