"""The layer is importable exactly the way Lambda lays it out: ``/opt/python/<package>``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parents[2]
CAPA_CONSTRUIDA = RAIZ / ".aws-sam" / "build" / "ComunLayer" / "python"


@pytest.fixture(scope="module")
def capa() -> Path:
    """The layer as ``sam build`` produced it (``make test`` builds before pytest)."""
    if not CAPA_CONSTRUIDA.is_dir():
        venv_bin = Path(sys.executable).parent
        env = {**os.environ, "PATH": f"{venv_bin}:{os.environ['PATH']}"}
        subprocess.run([str(venv_bin / "sam"), "build"], cwd=RAIZ, env=env, check=True, capture_output=True)
    return CAPA_CONSTRUIDA


def test_layer_package_sits_under_python(capa: Path) -> None:
    assert (capa / "mercadofresco" / "__init__.py").is_file()
    assert (capa / "aws_lambda_powertools").is_dir(), "the layer must carry its pinned dependencies"


def test_function_imports_the_layer_from_opt_python(capa: Path, tmp_path: Path) -> None:
    # GIVEN a process whose only path to the project is the built layer (as /opt/python)
    codigo = (
        "import mercadofresco, mercadofresco.errors, mercadofresco.aws, mercadofresco.dlq;print(mercadofresco.__file__)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(capa)
    # WHEN it imports the layer's package from somewhere else on disk
    salida = subprocess.run([sys.executable, "-c", codigo], cwd=tmp_path, env=env, capture_output=True, text=True)
    # THEN the module comes from the built layer, not from the source tree
    assert salida.returncode == 0, salida.stderr
    assert salida.stdout.strip().startswith(str(capa))
