"""A loopback moto server per test, as the local run uses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sam_emulator.moto_server import MotoServer


@pytest.fixture
def servidor_moto() -> Iterator[MotoServer]:
    from sam_emulator.moto_server import MotoServer

    # compresion 60: a queue's 60 s visibility lasts 1 s here
    with MotoServer(compression=60) as servidor:
        yield servidor
