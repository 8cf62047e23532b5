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

    from sam_emulator.functions import Funcion
    from sam_emulator.moto_server import ServidorMoto

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


def _funcion(carpeta: Path, logical_id: str, valor: str, timeout_s: float = 30.0) -> Funcion:
    from sam_emulator.functions import Funcion

    (carpeta / "app.py").write_text(HANDLER)
    return Funcion(
        logical_id=logical_id, nombre=logical_id.lower(), codigo=carpeta, entorno={"VALOR": valor},
        timeout_s=timeout_s, isolated=True,
    )  # fmt: skip


@pytest.fixture
def funciones(tmp_path: Path) -> Iterator[list[Funcion]]:
    from sam_emulator import deaths

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    creadas = [_funcion(tmp_path / "a", "Primera", "uno"), _funcion(tmp_path / "b", "Segunda", "dos", timeout_s=1)]
    deaths.CONTROL.reiniciar()
    try:
        yield creadas
    finally:
        for funcion in creadas:
            funcion.stop_workers()
        deaths.CONTROL.reiniciar()


def test_each_function_has_its_own_process_and_environment(
    funciones: list[Funcion], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two functions giving one variable different values  WHEN each is invoked
    primera, segunda = (f.invocar({}) for f in funciones)
    # THEN what each wrote on stdout and stderr is this process's stdout (the function's log, as in Lambda)
    salida = capsys.readouterr()
    assert "hola desde primera\naviso en stderr\n" in salida.out and "aviso" not in salida.err
    # THEN each read its own value at import, in a process that is neither this one nor the other's
    assert (primera["valor"], segunda["valor"]) == ("uno", "dos")
    assert len({primera["pid"], segunda["pid"], os.getpid()}) == 3
    assert "VALOR" not in os.environ or os.environ["VALOR"] not in ("uno", "dos")
    assert 0 < segunda["restante_ms"] <= 1000  # the context counts down from the function's Timeout


def test_an_exception_arrives_with_its_class_name_and_the_worker_is_reused(funciones: list[Funcion]) -> None:
    funcion = funciones[0]
    # WHEN the handler raises an exception defined in its own module
    with pytest.raises(Exception) as error:
        funcion.invocar({"accion": "fallar"})
    # THEN the caller sees the same class name and message; the environment survives an error (as Lambda's)
    assert type(error.value).__name__ == "ErrorPropio" and "de este módulo" in str(error.value)
    assert funcion.invocar({})["pid"] == funcion.invocar({})["pid"]
    assert funcion.cold_starts == 1 and funcion.errores == 1


def test_past_its_timeout_the_worker_is_killed_and_replaced(funciones: list[Funcion], tmp_path: Path) -> None:
    from sam_emulator import deaths
    from sam_emulator.platform_faults import LambdaTimeout

    funcion = funciones[1]  # Timeout 1 s
    antes = funcion.invocar({})["pid"]
    fifo = tmp_path / "nunca"
    os.mkfifo(fifo)
    # WHEN an invocation blocks on a read nobody will ever satisfy
    with pytest.raises(LambdaTimeout):
        funcion.invocar({"accion": "colgar", "fifo": str(fifo)})
    # THEN its process was killed, the death is recorded, and the next invocation gets a new environment
    with pytest.raises(ProcessLookupError):
        os.kill(antes, 0)
    assert [m[:2] for m in deaths.CONTROL.muertes] == [("segunda", "Sandbox.Timedout")]
    assert funcion.invocar({})["pid"] != antes
    assert funcion.cold_starts == 2


def test_one_invocation_per_worker_a_busy_worker_makes_the_pool_start_another(
    funciones: list[Funcion], tmp_path: Path
) -> None:
    funcion = funciones[0]
    aviso, fifo = tmp_path / "aviso", tmp_path / "fifo"
    os.mkfifo(aviso)
    os.mkfifo(fifo)
    resultado: dict[str, Any] = {}
    ocupada = threading.Thread(
        target=lambda: resultado.update(funcion.invocar({"accion": "ocupar", "aviso": str(aviso), "fifo": str(fifo)}))
    )
    ocupada.start()
    try:
        aviso.read_text()  # returns once the first invocation is inside its handler
        # WHEN another invocation arrives while the first one runs
        segunda = funcion.invocar({})
    finally:
        fifo.write_text("fin")
        ocupada.join(timeout=30)
    # THEN it ran in another worker (a second cold start), concurrently
    assert segunda["pid"] != resultado["pid"]
    assert funcion.cold_starts == 2


def test_calls_of_the_worker_are_reported_under_the_function_and_a_planned_death_kills_it(
    servidor_moto: ServidorMoto, funciones: list[Funcion]
) -> None:
    from sam_emulator import deaths
    from sam_emulator.deaths import Corte
    from sam_emulator.platform_faults import LambdaCrashed
    from sam_emulator.principal import add_call_listener, remove_call_listener

    funcion = funciones[0]
    oidas: list[Any] = []
    add_call_listener(oidas.append)
    try:
        # GIVEN a handler making two SQS calls  WHEN invoked cleanly
        pid = funcion.invocar({"accion": "sqs"})["pid"]
        # THEN both calls are reported under the function's logical id
        assert [(c.principal, c.service, c.operation) for c in oidas] == [("Primera", "sqs", "ListQueues")] * 2
        # WHEN a crash is planned once the first call has answered
        deaths.CONTROL.planificar(lambda inv: Corte(LambdaCrashed, donde="despues:sqs.ListQueues"))
        with pytest.raises(LambdaCrashed):
            funcion.invocar({"accion": "sqs"})
    finally:
        remove_call_listener(oidas.append)
        deaths.CONTROL.planificar(None)
    # THEN the death is recorded where it happened and the dead environment is not reused
    assert [m[:3] for m in deaths.CONTROL.muertes] == [("primera", "Lambda.Unknown", "despues:sqs.ListQueues")]
    assert funcion.invocar({})["pid"] != pid
