"""Waiting in tests without timing luck, for the emulator's tests and its users'.

What no event can announce (another process, moto's or a server's own threads) is polled with
:func:`wait_until`, which ends when the condition holds, however busy the machine.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["HANG_GUARD_S", "wait_until"]

# A hang guard: only stops a hung run (below pytest-timeout's 300 s, so the failure says what hung).
HANG_GUARD_S = 240.0


def wait_until(condition: Callable[[], Any], what: str, hang_guard_s: float = HANG_GUARD_S) -> Any:
    """Poll ``condition`` until it returns something truthy, and return that.

    ``hang_guard_s`` is never the thing asserted; past it the test fails naming ``what`` it was
    waiting for.
    """
    deadline = time.monotonic() + hang_guard_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"hang guard: still waiting after {hang_guard_s:g} s for {what}")
        time.sleep(0.02)
    return value
