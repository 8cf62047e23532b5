"""One way to run a loop or a server in a background thread of the local run.

Every poller, stream reader, schedule, sweeper, observer, stand-in and relay of the local run is
a loop in a thread that its owner starts and must stop. :class:`BackgroundThread` is that
thread:

- named (``threading.enumerate()`` and a traceback say which loop it is) and a daemon, so a
  run that dies never keeps the interpreter alive;
- stopped through an event the loop waits on (``stopping``), then joined within a bound; a
  loop still running after it is reported, never left behind unnoticed;
- never silently dead: an exception that ends the loop is kept and raised to the owner, as
  :class:`BackgroundThreadError` with the loop's exception as its cause, by :meth:`~BackgroundThread.stop`
  and by :meth:`~BackgroundThread.raise_if_failed` (which an owner waiting on the run calls).

:meth:`BackgroundThread.every` is the common loop (a step every ``period_s`` until stopped);
:class:`ThreadedServer` is a ``socketserver`` server served from a :class:`BackgroundThread`, and
:class:`LocalServer` the base of an object the run serves that way (a stand-in, the HTTP API);
:class:`BackgroundPart` gives a part of the run whose work is one such thread the run's
``start``/``stop``/``check``; :func:`stop_all` stops several even when one fails.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    import socketserver
    from collections.abc import Callable, Iterable

__all__ = [
    "STOP_TIMEOUT_S",
    "BackgroundPart",
    "BackgroundThread",
    "BackgroundThreadError",
    "LocalServer",
    "ThreadedServer",
    "stop_all",
]

# A hang guard, not a pace: a stop waits for the step in flight (an invocation, a moto call)
# to end, which a loaded 2-core machine can stretch to tens of seconds.
STOP_TIMEOUT_S = 120.0

_log = logging.getLogger(__name__)


class BackgroundThreadError(RuntimeError):
    """A background loop crashed (the loop's exception is the ``__cause__``) or did not stop in time."""


class BackgroundThread:
    """``loop(stopping)`` in a named daemon thread: ``start()``, then ``stop()`` sets ``stopping`` and joins.

    ``on_stop`` is called by :meth:`stop` after ``stopping`` is set, to wake a loop that does not
    wait on the event (a server's ``shutdown``). Several threads may share one ``stopping`` event
    (a mapping's pollers), so stopping the first tells all of them at once; a shared event is its
    creator's to clear, so :meth:`start` clears only an event the thread made itself.
    """

    def __init__(
        self,
        name: str,
        loop: Callable[[threading.Event], object],
        *,
        stopping: threading.Event | None = None,
        on_stop: Callable[[], object] | None = None,
    ) -> None:
        self.name = name
        self._own_stopping = stopping is None
        self.stopping = stopping or threading.Event()
        self.done = threading.Event()  # set when the loop has returned or raised
        self._loop = loop
        self._on_stop = on_stop
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @classmethod
    def every(
        cls,
        name: str,
        period_s: float,
        step: Callable[[], object],
        *,
        immediately: bool = False,
        on_error: Callable[[Exception], object] | None = None,
    ) -> Self:
        """``step()`` every ``period_s`` s until stopped, at a fixed rate (a slow step shortens the next wait).

        The first step runs at start with ``immediately``, otherwise one period after it. With
        ``on_error`` a step's exception is handed to it and the loop goes on (a poller outlives an
        API error, as AWS's do); without it the exception ends the loop and reaches the owner.
        """

        def loop(stopping: threading.Event) -> None:
            if not immediately and stopping.wait(period_s):
                return
            while not stopping.is_set():
                started = time.monotonic()
                try:
                    step()
                except Exception as exc:
                    if on_error is None:
                        raise
                    on_error(exc)
                if stopping.wait(max(0.0, period_s - (time.monotonic() - started))):
                    return

        return cls(name, loop)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> Self:
        if self.alive:
            raise RuntimeError(f"background thread {self.name} is already running")
        if self._own_stopping:
            self.stopping.clear()
        self.done.clear()
        self._error = None
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._loop(self.stopping)
        except BaseException as exc:  # kept for the owner: the thread itself has no one to tell
            self._error = exc
            _log.exception("background thread crashed")  # the record's threadName says which
        finally:
            self.done.set()

    def raise_if_failed(self) -> None:
        """Raise :class:`BackgroundThreadError` if the loop has ended with an exception."""
        if self._error is not None:
            raise BackgroundThreadError(
                f"background thread {self.name} crashed: {type(self._error).__name__}: {self._error}"
            ) from self._error

    def stop(self, timeout_s: float | None = None) -> None:
        """Tell the loop to stop, wait for it (``STOP_TIMEOUT_S`` at most), and raise what it crashed with.

        Raises :class:`BackgroundThreadError` when the loop is still running after the bound (a
        later ``stop()`` waits again) or when it ended with an exception. A thread never started
        or already stopped is left as it is.
        """
        thread = self._thread
        if thread is None:
            return
        self.stopping.set()
        if self._on_stop is not None:
            self._on_stop()
        bound_s = STOP_TIMEOUT_S if timeout_s is None else timeout_s
        thread.join(bound_s)
        if thread.is_alive():
            raise BackgroundThreadError(f"background thread {self.name} did not stop within {bound_s:g} s")
        self._thread = None
        self.raise_if_failed()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class BackgroundPart:
    """A part of the local run whose work is one :class:`BackgroundThread`, built into ``self._thread``.

    ``start``, ``stop`` and ``check`` are the names the run starts, stops and checks each
    of its parts by (``LocalRuntime``: pollers, pipes, schedules, the TTL sweeper).
    """

    _thread: BackgroundThread

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop()

    def check(self) -> None:
        self._thread.raise_if_failed()


class ThreadedServer:
    """A ``socketserver`` server answering from a :class:`BackgroundThread` until :meth:`stop`.

    The server is built by the caller (its handler class and settings are its own); this serves
    it, stops it (``shutdown`` ends ``serve_forever`` within one poll interval) and closes its
    socket. For a threading server, set ``daemon_threads`` so a request held open (a stand-in's
    timeout fault, a relayed connection) never delays a stop.
    """

    def __init__(self, server: socketserver.BaseServer, name: str, *, poll_interval_s: float = 0.05) -> None:
        self.server = server
        self.thread = BackgroundThread(
            name, lambda _stopping: server.serve_forever(poll_interval_s), on_stop=server.shutdown
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]  # type: ignore[misc]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        try:
            self.thread.stop()
        finally:
            self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalServer:
    """An object the local run serves on loopback while started: ``with obj: obj.url``.

    A subclass builds its server in :meth:`create_server` and names its thread ``thread_name``;
    ``start`` serves it from a :class:`ThreadedServer` and ``stop`` stops it.
    """

    thread_name: str
    _server: ThreadedServer | None = None

    def create_server(self) -> socketserver.BaseServer:
        raise NotImplementedError

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"{self.thread_name} is not started")
        return self._server.url

    def start(self) -> Self:
        self._server = ThreadedServer(self.create_server(), self.thread_name).start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stop_all(stops: Iterable[Callable[[], object]]) -> None:
    """Call every ``stop`` in order, even after one raised; then raise what they raised.

    One failure is raised as it is; several, as an ``ExceptionGroup`` of them.
    """
    errors: list[Exception] = []
    for stop in stops:
        try:
            stop()
        except Exception as exc:  # the rest must still stop
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ExceptionGroup("several background threads failed to stop cleanly", errors)
