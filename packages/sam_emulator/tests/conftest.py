"""The emulator's own tests: fake AWS credentials, and a loopback moto server per test."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from sam_emulator.moto_server import LOCAL_CREDENTIALS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sam_emulator.moto_server import MotoServer

# Never reach a real account: fake credentials and a fixed region, before boto3 loads.
os.environ.update(LOCAL_CREDENTIALS, AWS_DEFAULT_REGION="eu-south-2", AWS_REGION="eu-south-2")


@pytest.fixture
def moto_server() -> Iterator[MotoServer]:
    from sam_emulator.moto_server import MotoServer

    # compression 60: a queue's 60 s visibility lasts 1 s here
    with MotoServer(compression=60) as server:
        yield server
