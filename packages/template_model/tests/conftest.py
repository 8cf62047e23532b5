"""Small templates written for one case (``write``)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def write(tmp_path: Path):
    """Write a template (dedented) into a fresh folder; returns its path."""

    def write(text: str, name: str = "template.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    return write
