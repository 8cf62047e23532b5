"""The consumer's unit tests share one Stubber'd SQS client (the root ``stubbed`` fixture)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable


@pytest.fixture
def sqs(stubbed: Callable[[str], tuple[Any, Any]]) -> tuple[Any, Any]:
    """``(client, stubber)`` for SQS."""
    return stubbed("sqs")
