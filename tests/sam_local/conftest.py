"""The ``sam local invoke`` level: every sample event run once, in parallel lanes, then asserted.

Each lane is a process of its own (``python -m sam_local run --lane N``): moto's server, the
stand-ins and the relays on the lane's ports (``events/env-vars.json`` + 10 N, see
``sam_local.environment.lane_env_vars``), one event after another from an empty world. The
session fixture collects their observations; each test asserts one event's.

Without Docker or without the base image these tests are skipped, with the command that sets
them up: ``make test-sam-local`` (Docker installed and started where it can be, image built once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

RAIZ = Path(__file__).resolve().parents[2]
# Invokes wait on Docker and the container's start more than on CPU: two lanes halve the wall time
# on 2 cores (SAM_LOCAL_LANES to change it).
LANES = int(os.environ.get("SAM_LOCAL_LANES", "2"))


def _docker_ready() -> str | None:
    """Why the level cannot run here, or None."""
    from sam_local.invoke import ARCHITECTURE

    try:
        subprocess.run(["docker", "info"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "no Docker daemon answers"
    imagen = f"public.ecr.aws/lambda/python:3.13-{ARCHITECTURE}"
    if subprocess.run(["docker", "image", "inspect", imagen], capture_output=True, check=False).returncode != 0:
        return f"the base image {imagen} is not built"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    locales = [i for i in items if i.get_closest_marker("sam_local")]
    if not locales:
        return
    motivo = _docker_ready()
    if motivo is not None:
        salto = pytest.mark.skip(reason=f"sam local invoke level skipped: {motivo} (make test-sam-local sets it up)")
        for item in locales:
            item.add_marker(salto)


@pytest.fixture(scope="session")
def observaciones(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    """``sam build`` for this CPU (cached), then every declared event through ``sam local invoke``."""
    from sam_local.cases import CASES
    from sam_local.invoke import build

    build()
    eventos = sorted(CASES)
    carpeta = tmp_path_factory.mktemp("sam-local")
    ruta = os.pathsep.join(str(RAIZ / p) for p in ("tools/levels", "tools", "layers/comun"))
    entorno = {**os.environ, "PYTHONPATH": ruta}
    carriles = []
    for carril in range(min(LANES, len(eventos))):
        salida = carpeta / f"lane-{carril}.json"
        comando = [sys.executable, "-m", "sam_local", "run", "--lane", str(carril), "--out", str(salida)]
        carriles.append((salida, subprocess.Popen([*comando, *eventos[carril::LANES]], cwd=RAIZ, env=entorno)))
    resultados: dict[str, dict[str, Any]] = {}
    for salida, proceso in carriles:
        proceso.wait()
        if salida.exists():
            resultados.update(json.loads(salida.read_text()))
    yield resultados
