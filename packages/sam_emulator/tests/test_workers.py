"""One process per function: environment, cold start, concurrency and timeout-as-kill per function."""

from __future__ import annotations

import os
import textwrap
import threading
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from sam_emulator.functions import Function
    from sam_emulator.moto_server import MotoServer

pytestmark = pytest.mark.integration

HANDLER = textwrap.dedent(
    """
    import os
    import sys
    import boto3

    VALOR = os.environ.get("VALOR")  # read at import, as the project's handlers do

    class ErrorPropio(Exception):
        pass

    def lambda_handler(event, context):
        accion = event.get("accion")
        if accion == "fallar":
            raise ErrorPropio("de este módulo")
        if accion == "colgar":
            open(event["fifo"]).read()  # blocks until the test writes, or forever
        if accion == "ocupar":
            open(event["aviso"], "w").close()  # the test knows this invocation is running
            open(event["fifo"]).read()
        if accion == "sqs":
            cliente = boto3.client("sqs")
            cliente.list_queues()
            cliente.list_queues()
        print("hola desde", context.function_name)
        print("aviso en stderr", file=sys.stderr)
        return {"valor": VALOR, "pid": os.getpid(), "restante_ms": context.get_remaining_time_in_millis()}
    """
)


def _function(folder: Path, logical_id: str, value: str, timeout_s: float = 30.0) -> Function:
    from sam_emulator.functions import Function

    (folder / "app.py").write_text(HANDLER)
    return Function(
        logical_id=logical_id, name=logical_id.lower(), code=folder, environment={"VALOR": value},
        timeout_s=timeout_s, isolated=True,
    )  # fmt: skip


@pytest.fixture
def functions(tmp_path: Path) -> Iterator[list[Function]]:
    from sam_emulator import deaths

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    two_functions = [
        _function(tmp_path / "a", "Primera", "uno"),
        _function(tmp_path / "b", "Segunda", "dos", timeout_s=1),
    ]
    deaths.CONTROL.reset()
    try:
        yield two_functions
    finally:
        for function in two_functions:
            function.stop_workers()
        deaths.CONTROL.reset()


def test_each_function_has_its_own_process_and_environment(
    functions: list[Function], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two functions giving one variable different values  WHEN each is invoked
    first, second = (f.invoke({}) for f in functions)
    # THEN what each wrote on stdout and stderr is this process's stdout (the function's log, as in Lambda)
    output = capsys.readouterr()
    assert "hola desde primera\naviso en stderr\n" in output.out and "aviso" not in output.err
    # THEN each read its own value at import, in a process that is neither this one nor the other's
    assert (first["valor"], second["valor"]) == ("uno", "dos")
    assert len({first["pid"], second["pid"], os.getpid()}) == 3
    assert "VALOR" not in os.environ or os.environ["VALOR"] not in ("uno", "dos")
    assert 0 < second["restante_ms"] <= 1000  # the context counts down from the function's Timeout


def test_an_exception_arrives_with_its_class_name_and_the_worker_is_reused(functions: list[Function]) -> None:
    function = functions[0]
    # WHEN the handler raises an exception defined in its own module
    with pytest.raises(Exception) as error:
        function.invoke({"accion": "fallar"})
    # THEN the caller sees the same class name and message; the environment survives an error (as Lambda's)
    assert type(error.value).__name__ == "ErrorPropio" and "de este módulo" in str(error.value)
    assert function.invoke({})["pid"] == function.invoke({})["pid"]
    assert function.cold_starts == 1 and function.errors == 1


def test_past_its_timeout_the_worker_is_killed_and_replaced(functions: list[Function], tmp_path: Path) -> None:
    from sam_emulator import deaths
    from sam_emulator.platform_faults import LambdaTimeout

    function = functions[1]  # Timeout 1 s
    before = function.invoke({})["pid"]
    fifo = tmp_path / "nunca"
    os.mkfifo(fifo)
    # WHEN an invocation blocks on a read nobody will ever satisfy
    with pytest.raises(LambdaTimeout):
        function.invoke({"accion": "colgar", "fifo": str(fifo)})
    # THEN its process was killed, the death is recorded, and the next invocation gets a new environment
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)
    assert [m[:2] for m in deaths.CONTROL.deaths] == [("segunda", "Sandbox.Timedout")]
    assert function.invoke({})["pid"] != before
    assert function.cold_starts == 2


def test_one_invocation_per_worker_a_busy_worker_makes_the_pool_start_another(
    functions: list[Function], tmp_path: Path
) -> None:
    function = functions[0]
    warning, fifo = tmp_path / "aviso", tmp_path / "fifo"
    os.mkfifo(warning)
    os.mkfifo(fifo)
    result: dict[str, Any] = {}
    busy = threading.Thread(
        target=lambda: result.update(function.invoke({"accion": "ocupar", "aviso": str(warning), "fifo": str(fifo)}))
    )
    busy.start()
    try:
        warning.read_text()  # returns once the first invocation is inside its handler
        # WHEN another invocation arrives while the first one runs
        second = function.invoke({})
    finally:
        fifo.write_text("fin")
        busy.join(timeout=30)
    # THEN it ran in another worker (a second cold start), concurrently
    assert second["pid"] != result["pid"]
    assert function.cold_starts == 2


def test_past_max_workers_an_invocation_waits_for_a_free_worker(functions: list[Function], tmp_path: Path) -> None:
    from sam_emulator.testing import wait_until

    function = functions[0]
    function.max_workers = 1
    warning, fifo = tmp_path / "aviso", tmp_path / "fifo"
    os.mkfifo(warning)
    os.mkfifo(fifo)
    results: dict[str, Any] = {}
    busy = threading.Thread(
        target=lambda: results.update(
            first=function.invoke({"accion": "ocupar", "aviso": str(warning), "fifo": str(fifo)})
        )
    )
    following = threading.Thread(target=lambda: results.update(second=function.invoke({})))
    busy.start()
    try:
        warning.read_text()  # returns once the first invocation is inside its handler
        # WHEN another invocation arrives while the function's only worker runs the first one
        following.start()
        pool = function.start_workers()
        wait_until(lambda: pool.waiting == 1, "the second invocation to wait for a worker")
        # THEN no second worker was started for it
        assert len(function.worker_pids()) == 1
    finally:
        fifo.write_text("fin")
        busy.join(timeout=30)
        following.join(timeout=30)
    # THEN once the first one ended, the second ran in the same worker
    assert results["second"]["pid"] == results["first"]["pid"]
    assert function.cold_starts == 1


def test_the_wait_for_a_worker_is_not_part_of_the_timeout(functions: list[Function], tmp_path: Path) -> None:
    from sam_emulator import deaths
    from sam_emulator.platform_faults import LambdaTimeout

    function = functions[1]  # Timeout 1 s
    function.max_workers = 1
    warning, fifo = tmp_path / "aviso", tmp_path / "nunca"
    os.mkfifo(warning)
    os.mkfifo(fifo)
    results: dict[str, Any] = {}

    def hung() -> None:
        try:
            function.invoke({"accion": "ocupar", "aviso": str(warning), "fifo": str(fifo)})
        except LambdaTimeout as error:
            results["first"] = error

    busy = threading.Thread(target=hung)
    busy.start()
    warning.read_text()
    # WHEN an invocation waits for the only worker while it hangs until killed at its Timeout
    second = function.invoke({})
    busy.join(timeout=30)
    # THEN the hung one timed out, and the waiting one got its whole Timeout in a new worker
    assert isinstance(results["first"], LambdaTimeout)
    assert [m[:2] for m in deaths.CONTROL.deaths] == [("segunda", "Sandbox.Timedout")]
    assert 0 < second["restante_ms"] <= 1000 and function.cold_starts == 2


def test_calls_of_the_worker_are_reported_under_the_function_and_a_planned_death_kills_it(
    moto_server: MotoServer, functions: list[Function]
) -> None:
    from sam_emulator import deaths
    from sam_emulator.deaths import Cut
    from sam_emulator.platform_faults import LambdaCrashed
    from sam_emulator.principal import add_call_listener, remove_call_listener

    function = functions[0]
    heard: list[Any] = []
    add_call_listener(heard.append)
    try:
        # GIVEN a handler making two SQS calls  WHEN invoked cleanly
        pid = function.invoke({"accion": "sqs"})["pid"]
        # THEN both calls are reported under the function's logical id
        assert [(c.principal, c.service, c.operation) for c in heard] == [("Primera", "sqs", "ListQueues")] * 2
        # WHEN a crash is planned once the first call has answered
        deaths.CONTROL.set_plan(lambda inv: Cut(LambdaCrashed, where="after:sqs.ListQueues"))
        with pytest.raises(LambdaCrashed):
            function.invoke({"accion": "sqs"})
    finally:
        remove_call_listener(heard.append)
        deaths.CONTROL.set_plan(None)
    # THEN the death is recorded where it happened and the dead environment is not reused
    assert [m[:3] for m in deaths.CONTROL.deaths] == [("primera", "Lambda.Unknown", "after:sqs.ListQueues")]
    assert function.invoke({})["pid"] != pid
