"""The ``sam local invoke`` level: one environment (moto, stand-ins, relays) for the session.

Without Docker or without the base image these tests are skipped, with the command that sets
them up: ``make test-sam-local`` (Docker installed and started where it can be, image built once).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sam_local.environment import LocalEnvironment


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
def entorno() -> Iterator[LocalEnvironment]:
    """``sam build`` for this CPU (cached), then moto with the template's resources, stand-ins, relays."""
    from sam_local.environment import LocalEnvironment
    from sam_local.invoke import build

    build()
    with LocalEnvironment() as env:
        yield env
