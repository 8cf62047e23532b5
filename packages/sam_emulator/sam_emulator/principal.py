"""Who the current thread works for: a function's invocation, or the poller of its event source.

In Lambda every AWS call a function makes is signed with its role; here every function shares one
process and one set of credentials, so the emulator says, per thread, whose call it is. Whoever wants
to know (an IAM request recorder, say) reads :func:`current_principal` when a call is made.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["acting_as", "current_principal"]

_THREAD = threading.local()


@contextmanager
def acting_as(principal: str | None) -> Iterator[None]:
    """Calls made by this thread inside the block are ``principal``'s (``None``: nobody's; nesting restores)."""
    previous = getattr(_THREAD, "principal", None)
    _THREAD.principal = principal
    try:
        yield
    finally:
        _THREAD.principal = previous


def current_principal() -> str | None:
    return getattr(_THREAD, "principal", None)
