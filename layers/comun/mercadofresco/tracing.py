"""Powertools' Tracer, created on the function's first invocation instead of at import.

``Tracer()`` at module scope imports the X-Ray SDK and, with its default ``auto_patch``, runs
``patch_all``: that imports every library the SDK can patch and finds installed, the
PostgreSQL driver in a function that never opens a connection included. Both happen in the
init phase of every cold start. This wrapper keeps the handlers' code as Powertools documents
it (``@tracer.capture_lambda_handler``, ``tracer.capture_method``, ``tracer.put_annotation``)
and builds the real ``Tracer`` when the first traced call runs, patching only
:data:`TRACED_MODULES` (Powertools' ``patch_modules``, its documented way to patch less).
Every invocation is still traced: the patches are applied to classes (botocore's client,
``http.client``), so clients created before them are traced as well.

``bench/bench_cold_start.py`` measures what this moves out of the init phase (and what the
first invocation still pays: its "first use" column).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from aws_lambda_powertools import Tracer

# AWS calls (botocore) and the providers' HTTP calls (urllib3 over http.client).
__all__ = ["TRACED_MODULES", "LazyTracer"]


TRACED_MODULES: tuple[str, ...] = ("botocore", "httplib")


class LazyTracer:
    """A Powertools ``Tracer`` built on first use; the same decorators and methods.

    Parameters
    ----------
    patch_modules:
        What the X-Ray SDK patches (default :data:`TRACED_MODULES`); the outbox functions add
        ``"psycopg"`` to trace their queries.
    **options:
        Passed to ``Tracer`` unchanged (``service``, ``disabled``, ``provider``...).
    """

    def __init__(self, patch_modules: Sequence[str] = TRACED_MODULES, **options: Any) -> None:
        self._options = {"patch_modules": list(patch_modules), **options}
        self._tracer: Tracer | None = None

    @property
    def tracer(self) -> Tracer:
        """The real Tracer (imports the X-Ray SDK and applies the patches the first time)."""
        if self._tracer is None:
            from aws_lambda_powertools import Tracer

            self._tracer = Tracer(**self._options)
        return self._tracer

    def _deferred(self, decorator: str, function: Callable[..., Any], **kwargs: Any) -> Callable[..., Any]:
        wrapped: Callable[..., Any] | None = None

        @functools.wraps(function)
        def call(*args: Any, **kw: Any) -> Any:
            nonlocal wrapped
            if wrapped is None:
                wrapped = getattr(self.tracer, decorator)(function, **kwargs)
            return wrapped(*args, **kw)

        return call

    def capture_lambda_handler(self, lambda_handler: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        """``Tracer.capture_lambda_handler``, applied when the handler first runs."""
        if lambda_handler is None:
            return functools.partial(self.capture_lambda_handler, **kwargs)
        return self._deferred("capture_lambda_handler", lambda_handler, **kwargs)

    def capture_method(self, method: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        """``Tracer.capture_method``, applied when the method first runs."""
        if method is None:
            return functools.partial(self.capture_method, **kwargs)
        return self._deferred("capture_method", method, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never build the Tracer for copy/pickle probes
            raise AttributeError(name)
        # put_annotation, put_metadata, provider...: only ever called inside an invocation.
        return getattr(self.tracer, name)
