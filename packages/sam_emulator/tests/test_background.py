"""The local run's background threads start named, stop on request, and never die silently.

Real threads, real sockets; the tests meet the threads on events, never on sleeps.
"""

from __future__ import annotations

import socket
import socketserver
import threading

import pytest
from sam_emulator.background import (
    BackgroundPart,
    BackgroundThread,
    BackgroundThreadError,
    LocalServer,
    ThreadedServer,
    stop_all,
)
from sam_emulator.testing import HANG_GUARD_S  # only stops a hung run; the tests meet on events, counts and gates


def test_background_thread_when_started_runs_its_loop_in_a_named_daemon_thread_until_stopped() -> None:
    # GIVEN a loop that records the thread it runs in, then waits to be stopped
    inside = threading.Event()
    seen: dict[str, object] = {}

    def loop(stopping: threading.Event) -> None:
        seen["nombre"], seen["daemon"] = threading.current_thread().name, threading.current_thread().daemon
        inside.set()
        stopping.wait()

    thread = BackgroundThread("mf-prueba", loop).start()
    assert inside.wait(HANG_GUARD_S), "the loop never ran"

    # WHEN it is stopped
    thread.stop()

    # THEN the loop ran in a daemon thread with the given name, and that thread is gone
    assert seen == {"nombre": "mf-prueba", "daemon": True}
    assert not thread.alive
    assert thread.done.is_set()


def test_background_thread_when_loop_raises_stop_raises_with_the_loop_error_as_cause() -> None:
    # GIVEN a loop that crashes
    def loop(stopping: threading.Event) -> None:
        raise ValueError("bad record")

    thread = BackgroundThread("mf-roto", loop).start()
    assert thread.done.wait(HANG_GUARD_S), "the loop never ended"

    # WHEN the owner checks it, and then stops it
    with pytest.raises(BackgroundThreadError, match="mf-roto crashed: ValueError: bad record") as checked:
        thread.raise_if_failed()
    with pytest.raises(BackgroundThreadError) as stopped:
        thread.stop()

    # THEN both name the thread and carry the loop's own exception
    assert isinstance(checked.value.__cause__, ValueError)
    assert isinstance(stopped.value.__cause__, ValueError)


def test_background_thread_when_loop_ignores_the_stop_raises_after_the_bound_and_a_later_stop_joins() -> None:
    # GIVEN a loop that only a gate the test holds can end (it does not look at the stop event)
    gate = threading.Event()
    inside = threading.Event()

    def loop(stopping: threading.Event) -> None:
        inside.set()
        gate.wait(HANG_GUARD_S)

    thread = BackgroundThread("mf-sordo", loop).start()
    assert inside.wait(HANG_GUARD_S), "the loop never ran"

    # WHEN it is stopped with a bound the loop cannot meet (the gate is closed)
    with pytest.raises(BackgroundThreadError, match="mf-sordo did not stop within"):
        thread.stop(timeout_s=0.01)

    # THEN it is still reported running; once the gate opens, a second stop joins it cleanly
    assert thread.alive
    gate.set()
    thread.stop()
    assert not thread.alive


def test_background_thread_every_runs_the_step_repeatedly_until_stopped() -> None:
    # GIVEN a step with no pause between runs that signals its third run
    times = 0
    third = threading.Event()

    def step() -> None:
        nonlocal times
        times += 1
        if times == 3:
            third.set()

    thread = BackgroundThread.every("mf-paso", 0.0, step, immediately=True).start()

    # WHEN it has run three times and is stopped
    assert third.wait(HANG_GUARD_S), "the step did not repeat"
    thread.stop()

    # THEN the loop is over: stop() returned only after the step in flight ended
    assert times >= 3
    assert not thread.alive


@pytest.mark.parametrize(("immediate", "expected"), [(True, 1), (False, 0)])
def test_background_thread_every_first_step_runs_at_start_only_when_immediately(immediate: bool, expected: int) -> None:
    # GIVEN a step every hour, started with or without an immediate first run
    runs: list[int] = []
    first = threading.Event()

    def step() -> None:
        runs.append(1)
        first.set()

    thread = BackgroundThread.every("mf-horario", 3600.0, step, immediately=immediate).start()
    if immediate:
        assert first.wait(HANG_GUARD_S), "the immediate step never ran"

    # WHEN it is stopped long before the hour is up
    thread.stop()

    # THEN the stop woke the wait, and the step ran once only when asked to run immediately
    assert len(runs) == expected


def test_background_thread_every_when_a_step_raises_the_loop_ends_and_the_error_reaches_the_owner() -> None:
    # GIVEN a step that fails on its first run
    def step() -> None:
        raise ConnectionError("moto went away")

    thread = BackgroundThread.every("mf-barredor", 0.0, step, immediately=True).start()

    # WHEN the loop has ended
    assert thread.done.wait(HANG_GUARD_S), "the loop never ended"

    # THEN stopping it raises the step's error
    with pytest.raises(BackgroundThreadError, match="ConnectionError: moto went away"):
        thread.stop()


def test_background_thread_every_with_on_error_hands_a_step_error_over_and_keeps_going() -> None:
    # GIVEN a step that fails on its first two runs and signals its third
    times = 0
    third = threading.Event()
    errors: list[Exception] = []

    def step() -> None:
        nonlocal times
        times += 1
        if times < 3:
            raise TimeoutError(f"read timeout {times}")
        third.set()

    thread = BackgroundThread.every("mf-sondeo", 0.0, step, immediately=True, on_error=errors.append).start()

    # WHEN it has run a third time and is stopped
    assert third.wait(HANG_GUARD_S), "the loop did not outlive the step's errors"
    thread.stop()

    # THEN both errors reached on_error, and the loop ended cleanly
    assert [str(e) for e in errors] == ["read timeout 1", "read timeout 2"]
    thread.raise_if_failed()


def test_background_thread_when_never_started_stop_does_nothing_and_a_second_start_is_refused() -> None:
    # GIVEN a thread never started
    thread = BackgroundThread("mf-quieto", lambda stopping: stopping.wait())

    # WHEN it is stopped, THEN nothing happens
    thread.stop()

    # AND once started, starting it again while it runs is refused
    with thread, pytest.raises(RuntimeError, match="already running"):
        thread.start()
    assert not thread.alive


def test_background_thread_threads_sharing_a_stopping_event_all_end_on_one_stop() -> None:
    # GIVEN three loops that share one stopping event
    shared = threading.Event()
    threads = [
        BackgroundThread(f"mf-sondeo-{i}", lambda stopping: stopping.wait(), stopping=shared).start() for i in range(3)
    ]

    # WHEN the first is stopped
    threads[0].stop()

    # THEN the others have been told as well and end as soon as they are joined
    assert shared.is_set()
    stop_all(h.stop for h in threads[1:])
    assert not any(h.alive for h in threads)
    # AND a thread started on the event afterwards does not clear it (it is the creator's): it ends at once
    late = BackgroundThread("mf-sondeo-tardio", lambda stopping: stopping.wait(), stopping=shared).start()
    assert late.done.wait(HANG_GUARD_S), "a late start cleared the shared stop"
    late.stop()


def test_background_thread_with_its_own_event_runs_again_when_restarted_after_a_stop() -> None:
    # GIVEN a thread that was started and stopped
    inputs = 0
    inside = threading.Event()

    def loop(stopping: threading.Event) -> None:
        nonlocal inputs
        inputs += 1
        inside.set()
        stopping.wait()

    thread = BackgroundThread("mf-reinicio", loop).start()
    assert inside.wait(HANG_GUARD_S), "the loop never ran"
    thread.stop()
    inside.clear()

    # WHEN it is started again
    thread.start()

    # THEN its loop runs again, waiting on a cleared stop until the next stop
    assert inside.wait(HANG_GUARD_S), "the loop did not run again"
    assert not thread.stopping.is_set()
    thread.stop()
    assert inputs == 2


class _Echo(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.wfile.write(self.rfile.readline().upper())


class _EchoServer(socketserver.ThreadingTCPServer):
    daemon_threads = True


def test_threaded_server_when_started_answers_on_its_address_and_after_stop_refuses_connections() -> None:
    # GIVEN an echo server on a free loopback port, served from a background thread
    with ThreadedServer(_EchoServer(("127.0.0.1", 0), _Echo), "mf-eco") as server:
        direction = server.address

        # WHEN a client talks to it
        with socket.create_connection(direction, timeout=HANG_GUARD_S) as sdk_client:
            sdk_client.sendall(b"hola\n")
            response = sdk_client.makefile("rb").readline()

        # THEN it answered, from a thread named after the server
        assert response == b"HOLA\n"
        assert server.thread.alive
        assert server.url == f"http://127.0.0.1:{direction[1]}"

    # AND once stopped its thread is gone and its socket closed
    assert not server.thread.alive
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(direction, timeout=HANG_GUARD_S)


def test_threaded_server_when_serving_crashes_stop_raises_and_closes_the_socket() -> None:
    # GIVEN a server whose serving loop fails on its first turn
    class BrokenServer(_EchoServer):
        def service_actions(self) -> None:
            raise OSError("socket gone")

    server = ThreadedServer(BrokenServer(("127.0.0.1", 0), _Echo), "mf-roto").start()
    assert server.thread.done.wait(HANG_GUARD_S), "the serving loop never ended"

    # WHEN it is stopped, THEN the crash is raised and the socket is closed anyway
    with pytest.raises(BackgroundThreadError, match="mf-roto crashed: OSError: socket gone"):
        server.stop()
    assert server.server.socket.fileno() == -1


def test_stop_all_when_one_stop_fails_still_calls_the_rest_and_raises_that_failure() -> None:
    # GIVEN three stops, the second of which fails
    calls: list[str] = []

    def fails() -> None:
        calls.append("b")
        raise BackgroundThreadError("b crashed")

    # WHEN they are all stopped
    with pytest.raises(BackgroundThreadError, match="b crashed"):
        stop_all([lambda: calls.append("a"), fails, lambda: calls.append("c")])

    # THEN every stop ran, in order
    assert calls == ["a", "b", "c"]


def test_stop_all_when_several_stops_fail_raises_them_together() -> None:
    # GIVEN two failing stops
    def fails(name: str) -> None:
        raise BackgroundThreadError(f"{name} crashed")

    # WHEN they are stopped, THEN both failures come out in one group
    with pytest.raises(ExceptionGroup) as group:
        stop_all([lambda: fails("a"), lambda: fails("b")])
    assert [str(e) for e in group.value.exceptions] == ["a crashed", "b crashed"]


def test_background_part_when_its_loop_dies_check_raises_and_stop_reports_it() -> None:
    # GIVEN a part of the run whose one loop fails at once
    class Sweeper(BackgroundPart):
        def __init__(self) -> None:
            self._thread = BackgroundThread("mf-parte", self._sweep)

        def _sweep(self, stopping: threading.Event) -> None:
            raise KeyError("tabla")

    part = Sweeper()
    part.start()
    assert part._thread.done.wait(HANG_GUARD_S), "the loop never ended"

    # WHEN the run checks it and then stops it, THEN both raise the loop's error
    with pytest.raises(BackgroundThreadError, match="mf-parte crashed: KeyError"):
        part.check()
    with pytest.raises(BackgroundThreadError, match="mf-parte crashed: KeyError"):
        part.stop()


def test_local_server_serves_while_started_and_has_no_url_before_or_after() -> None:
    # GIVEN an echo stand-in built on the local run's server base
    class Echo(LocalServer):
        thread_name = "mf-eco-local"

        def create_server(self) -> socketserver.BaseServer:
            return _EchoServer(("127.0.0.1", 0), _Echo)

    echo = Echo()
    with pytest.raises(RuntimeError, match="mf-eco-local is not started"):
        _ = echo.url

    # WHEN it is started, THEN it answers at its url
    with echo:
        port = int(echo.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as sdk_client:
            sdk_client.sendall(b"eco\n")
            assert sdk_client.makefile("rb").readline() == b"ECO\n"

    # AND once stopped it has no url and refuses connections
    with pytest.raises(RuntimeError, match="is not started"):
        _ = echo.url
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
