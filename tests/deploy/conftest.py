"""The deploy level: ``make deploy-emulated`` — the real template into an emulated empty account (MiniStack).

The session fixture runs the level once (``python -m emulated_account run``, see
``tools/levels/emulated_account/nivel.py``: ``make deploy-emulated``, orders and faults through the
deployed store API, ``sam delete``, adoption, ``make deploy-emulated`` again, ``make deploy-emulated-down``)
and collects what the stack recorded; each test asserts one outcome.

Without Docker, the images or ``.venv-ministack`` these tests are skipped, with the command that sets
them up: ``make test-deploy``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

RAIZ = Path(__file__).resolve().parents[2]
_INICIO = time.monotonic()  # the session's start, as near as a conftest gets (imported at collection)


def _listo() -> str | None:
    """Why the level cannot run here, or None."""
    from emulated_account.emulador import MINISTACK

    try:
        subprocess.run(["docker", "info"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "no Docker daemon answers"
    for imagen in ("public.ecr.aws/lambda/python:3.13", "postgres:17-alpine", "valkey/valkey:8.1-alpine"):
        if subprocess.run(["docker", "image", "inspect", imagen], capture_output=True, check=False).returncode != 0:
            return f"the image {imagen} is not built"
    if not MINISTACK.exists():
        return f"{MINISTACK} is not installed"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    del config
    nivel = [i for i in items if i.get_closest_marker("deploy")]
    if nivel and (motivo := _listo()) is not None:
        salto = pytest.mark.skip(reason=f"deploy level skipped: {motivo} (make test-deploy sets it up)")
        for item in nivel:
            item.add_marker(salto)


@pytest.fixture(scope="session")
def nivel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The level's observations (see ``emulated_account.nivel.ejecutar``)."""
    salida = tmp_path_factory.mktemp("deploy") / "observaciones.json"
    subprocess.run([sys.executable, "-m", "emulated_account", "run", "--out", str(salida)], cwd=RAIZ, check=False)
    return json.loads(salida.read_text()) if salida.exists() else {}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The level's wall time, on one line CI's log shows last (README, Tests: "deploy level: ...")."""
    resultados = {
        estado: [r for r in terminalreporter.stats.get(estado, []) if "deploy" in getattr(r, "keywords", {})]
        for estado in ("passed", "failed", "error", "skipped")
    }
    if not any(resultados.values()):
        return
    partes = ", ".join(f"{len(r)} {estado}" for estado, r in resultados.items() if r)
    terminalreporter.write_line(f"deploy level: {partes} in {time.monotonic() - _INICIO:.0f} s", bold=True)
