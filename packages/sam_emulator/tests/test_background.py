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
    dentro = threading.Event()
    visto: dict[str, object] = {}

    def loop(stopping: threading.Event) -> None:
        visto["nombre"], visto["daemon"] = threading.current_thread().name, threading.current_thread().daemon
        dentro.set()
        stopping.wait()

    hilo = BackgroundThread("mf-prueba", loop).start()
    assert dentro.wait(HANG_GUARD_S), "the loop never ran"

    # WHEN it is stopped
    hilo.stop()

    # THEN the loop ran in a daemon thread with the given name, and that thread is gone
    assert visto == {"nombre": "mf-prueba", "daemon": True}
    assert not hilo.alive
    assert hilo.done.is_set()


def test_background_thread_when_loop_raises_stop_raises_with_the_loop_error_as_cause() -> None:
    # GIVEN a loop that crashes
    def loop(stopping: threading.Event) -> None:
        raise ValueError("bad record")

    hilo = BackgroundThread("mf-roto", loop).start()
    assert hilo.done.wait(HANG_GUARD_S), "the loop never ended"

    # WHEN the owner checks it, and then stops it
    with pytest.raises(BackgroundThreadError, match="mf-roto crashed: ValueError: bad record") as comprobado:
        hilo.raise_if_failed()
    with pytest.raises(BackgroundThreadError) as parado:
        hilo.stop()

    # THEN both name the thread and carry the loop's own exception
    assert isinstance(comprobado.value.__cause__, ValueError)
    assert isinstance(parado.value.__cause__, ValueError)


def test_background_thread_when_loop_ignores_the_stop_raises_after_the_bound_and_a_later_stop_joins() -> None:
    # GIVEN a loop that only a gate the test holds can end (it does not look at the stop event)
    puerta = threading.Event()
    dentro = threading.Event()

    def loop(stopping: threading.Event) -> None:
        dentro.set()
        puerta.wait(HANG_GUARD_S)

    hilo = BackgroundThread("mf-sordo", loop).start()
    assert dentro.wait(HANG_GUARD_S), "the loop never ran"

    # WHEN it is stopped with a bound the loop cannot meet (the gate is closed)
    with pytest.raises(BackgroundThreadError, match="mf-sordo did not stop within"):
        hilo.stop(timeout_s=0.01)

    # THEN it is still reported running; once the gate opens, a second stop joins it cleanly
    assert hilo.alive
    puerta.set()
    hilo.stop()
    assert not hilo.alive


def test_background_thread_every_runs_the_step_repeatedly_until_stopped() -> None:
    # GIVEN a step with no pause between runs that signals its third run
    veces = 0
    tercera = threading.Event()

    def paso() -> None:
        nonlocal veces
        veces += 1
        if veces == 3:
            tercera.set()

    hilo = BackgroundThread.every("mf-paso", 0.0, paso, immediately=True).start()

    # WHEN it has run three times and is stopped
    assert tercera.wait(HANG_GUARD_S), "the step did not repeat"
    hilo.stop()

    # THEN the loop is over: stop() returned only after the step in flight ended
    assert veces >= 3
    assert not hilo.alive


@pytest.mark.parametrize(("inmediato", "esperadas"), [(True, 1), (False, 0)])
def test_background_thread_every_first_step_runs_at_start_only_when_immediately(
    inmediato: bool, esperadas: int
) -> None:
    # GIVEN a step every hour, started with or without an immediate first run
    corridas: list[int] = []
    primera = threading.Event()

    def paso() -> None:
        corridas.append(1)
        primera.set()

    hilo = BackgroundThread.every("mf-horario", 3600.0, paso, immediately=inmediato).start()
    if inmediato:
        assert primera.wait(HANG_GUARD_S), "the immediate step never ran"

    # WHEN it is stopped long before the hour is up
    hilo.stop()

    # THEN the stop woke the wait, and the step ran once only when asked to run immediately
    assert len(corridas) == esperadas


def test_background_thread_every_when_a_step_raises_the_loop_ends_and_the_error_reaches_the_owner() -> None:
    # GIVEN a step that fails on its first run
    def paso() -> None:
        raise ConnectionError("moto went away")

    hilo = BackgroundThread.every("mf-barredor", 0.0, paso, immediately=True).start()

    # WHEN the loop has ended
    assert hilo.done.wait(HANG_GUARD_S), "the loop never ended"

    # THEN stopping it raises the step's error
    with pytest.raises(BackgroundThreadError, match="ConnectionError: moto went away"):
        hilo.stop()


def test_background_thread_every_with_on_error_hands_a_step_error_over_and_keeps_going() -> None:
    # GIVEN a step that fails on its first two runs and signals its third
    veces = 0
    tercera = threading.Event()
    errores: list[Exception] = []

    def paso() -> None:
        nonlocal veces
        veces += 1
        if veces < 3:
            raise TimeoutError(f"read timeout {veces}")
        tercera.set()

    hilo = BackgroundThread.every("mf-sondeo", 0.0, paso, immediately=True, on_error=errores.append).start()

    # WHEN it has run a third time and is stopped
    assert tercera.wait(HANG_GUARD_S), "the loop did not outlive the step's errors"
    hilo.stop()

    # THEN both errors reached on_error, and the loop ended cleanly
    assert [str(e) for e in errores] == ["read timeout 1", "read timeout 2"]
    hilo.raise_if_failed()


def test_background_thread_when_never_started_stop_does_nothing_and_a_second_start_is_refused() -> None:
    # GIVEN a thread never started
    hilo = BackgroundThread("mf-quieto", lambda stopping: stopping.wait())

    # WHEN it is stopped, THEN nothing happens
    hilo.stop()

    # AND once started, starting it again while it runs is refused
    with hilo, pytest.raises(RuntimeError, match="already running"):
        hilo.start()
    assert not hilo.alive


def test_background_thread_threads_sharing_a_stopping_event_all_end_on_one_stop() -> None:
    # GIVEN three loops that share one stopping event
    compartido = threading.Event()
    hilos = [
        BackgroundThread(f"mf-sondeo-{i}", lambda stopping: stopping.wait(), stopping=compartido).start()
        for i in range(3)
    ]

    # WHEN the first is stopped
    hilos[0].stop()

    # THEN the others have been told as well and end as soon as they are joined
    assert compartido.is_set()
    stop_all(h.stop for h in hilos[1:])
    assert not any(h.alive for h in hilos)
    # AND a thread started on the event afterwards does not clear it (it is the creator's): it ends at once
    tardio = BackgroundThread("mf-sondeo-tardio", lambda stopping: stopping.wait(), stopping=compartido).start()
    assert tardio.done.wait(HANG_GUARD_S), "a late start cleared the shared stop"
    tardio.stop()


def test_background_thread_with_its_own_event_runs_again_when_restarted_after_a_stop() -> None:
    # GIVEN a thread that was started and stopped
    entradas = 0
    dentro = threading.Event()

    def loop(stopping: threading.Event) -> None:
        nonlocal entradas
        entradas += 1
        dentro.set()
        stopping.wait()

    hilo = BackgroundThread("mf-reinicio", loop).start()
    assert dentro.wait(HANG_GUARD_S), "the loop never ran"
    hilo.stop()
    dentro.clear()

    # WHEN it is started again
    hilo.start()

    # THEN its loop runs again, waiting on a cleared stop until the next stop
    assert dentro.wait(HANG_GUARD_S), "the loop did not run again"
    assert not hilo.stopping.is_set()
    hilo.stop()
    assert entradas == 2


class _Eco(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.wfile.write(self.rfile.readline().upper())


class _ServidorEco(socketserver.ThreadingTCPServer):
    daemon_threads = True


def test_threaded_server_when_started_answers_on_its_address_and_after_stop_refuses_connections() -> None:
    # GIVEN an echo server on a free loopback port, served from a background thread
    with ThreadedServer(_ServidorEco(("127.0.0.1", 0), _Eco), "mf-eco") as servidor:
        direccion = servidor.address

        # WHEN a client talks to it
        with socket.create_connection(direccion, timeout=HANG_GUARD_S) as cliente:
            cliente.sendall(b"hola\n")
            respuesta = cliente.makefile("rb").readline()

        # THEN it answered, from a thread named after the server
        assert respuesta == b"HOLA\n"
        assert servidor.thread.alive
        assert servidor.url == f"http://127.0.0.1:{direccion[1]}"

    # AND once stopped its thread is gone and its socket closed
    assert not servidor.thread.alive
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(direccion, timeout=HANG_GUARD_S)


def test_threaded_server_when_serving_crashes_stop_raises_and_closes_the_socket() -> None:
    # GIVEN a server whose serving loop fails on its first turn
    class ServidorRoto(_ServidorEco):
        def service_actions(self) -> None:
            raise OSError("socket gone")

    servidor = ThreadedServer(ServidorRoto(("127.0.0.1", 0), _Eco), "mf-roto").start()
    assert servidor.thread.done.wait(HANG_GUARD_S), "the serving loop never ended"

    # WHEN it is stopped, THEN the crash is raised and the socket is closed anyway
    with pytest.raises(BackgroundThreadError, match="mf-roto crashed: OSError: socket gone"):
        servidor.stop()
    assert servidor.server.socket.fileno() == -1


def test_stop_all_when_one_stop_fails_still_calls_the_rest_and_raises_that_failure() -> None:
    # GIVEN three stops, the second of which fails
    llamadas: list[str] = []

    def falla() -> None:
        llamadas.append("b")
        raise BackgroundThreadError("b crashed")

    # WHEN they are all stopped
    with pytest.raises(BackgroundThreadError, match="b crashed"):
        stop_all([lambda: llamadas.append("a"), falla, lambda: llamadas.append("c")])

    # THEN every stop ran, in order
    assert llamadas == ["a", "b", "c"]


def test_stop_all_when_several_stops_fail_raises_them_together() -> None:
    # GIVEN two failing stops
    def falla(nombre: str) -> None:
        raise BackgroundThreadError(f"{nombre} crashed")

    # WHEN they are stopped, THEN both failures come out in one group
    with pytest.raises(ExceptionGroup) as grupo:
        stop_all([lambda: falla("a"), lambda: falla("b")])
    assert [str(e) for e in grupo.value.exceptions] == ["a crashed", "b crashed"]


def test_background_part_when_its_loop_dies_comprobar_raises_and_parar_reports_it() -> None:
    # GIVEN a part of the run whose one loop fails at once
    class Barredor(BackgroundPart):
        def __init__(self) -> None:
            self._hilo = BackgroundThread("mf-parte", self._barrer)

        def _barrer(self, stopping: threading.Event) -> None:
            raise KeyError("tabla")

    parte = Barredor()
    parte.start()
    assert parte._hilo.done.wait(HANG_GUARD_S), "the loop never ended"

    # WHEN the run checks it and then stops it, THEN both raise the loop's error
    with pytest.raises(BackgroundThreadError, match="mf-parte crashed: KeyError"):
        parte.comprobar()
    with pytest.raises(BackgroundThreadError, match="mf-parte crashed: KeyError"):
        parte.stop()


def test_local_server_serves_while_started_and_has_no_url_before_or_after() -> None:
    # GIVEN an echo stand-in built on the local run's server base
    class Eco(LocalServer):
        nombre_hilo = "mf-eco-local"

        def crear_servidor(self) -> socketserver.BaseServer:
            return _ServidorEco(("127.0.0.1", 0), _Eco)

    eco = Eco()
    with pytest.raises(RuntimeError, match="mf-eco-local is not started"):
        _ = eco.url

    # WHEN it is started, THEN it answers at its url
    with eco:
        puerto = int(eco.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", puerto), timeout=HANG_GUARD_S) as cliente:
            cliente.sendall(b"eco\n")
            assert cliente.makefile("rb").readline() == b"ECO\n"

    # AND once stopped it has no url and refuses connections
    with pytest.raises(RuntimeError, match="is not started"):
        _ = eco.url
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", puerto), timeout=HANG_GUARD_S)
