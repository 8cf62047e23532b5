"""The contract suite's engine: every test here runs once per engine of the order workflow (``motor``).

``MF_MOTORES_INFORME=<file>`` appends, per test and engine, the executions it ran (outcome, billed
units, waits, latency, invocations, bytes checkpointed) and whether it passed, one JSON line each:
``bench/bench_motores.py`` runs this suite once and prints both engines side by side from it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import pytest

from tests.contract.motores import MOTORES, Motor, MotorDurable, MotorStepFunctions, entorno_durable, reloj_del_runner
from tests.fixtures.flujo import tiempos_plantilla

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.fixtures.flujo import Flujo, Reloj

# The gateway's read timeout in these tests: a latency fault past it costs a fraction of a second, not 8.
READ_TIMEOUT_S = 0.3
INFORME = "MF_MOTORES_INFORME"


@pytest.fixture
def entorno_flujo() -> dict[str, str]:
    return {"PASARELA_READ_TIMEOUT_S": str(READ_TIMEOUT_S)}


@pytest.fixture(params=MOTORES)
def motor(request: pytest.FixtureRequest, flujo: Flujo) -> Iterator[Motor]:
    """Each engine in turn, on the same provisioned world."""
    if request.param == "durable":
        yield request.getfixturevalue("motor_durable")  # which reports itself
        return
    elegido = MotorStepFunctions(flujo, tiempos_plantilla().workflows["ProcesarPedido"].waits_s)
    yield elegido
    _informar(request, elegido)


@pytest.fixture
def motor_durable(
    request: pytest.FixtureRequest,
    flujo: Flujo,
    app_module: Callable[..., Any],
    reloj: Reloj,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[MotorDurable]:
    """``functions/pedido_durable`` on the SDK's local runner, on the provisioned world of ``flujo``."""
    from aws_durable_execution_sdk_python_testing import runner as modulo_runner
    from aws_durable_execution_sdk_python_testing.executor import Executor
    from aws_durable_execution_sdk_python_testing.runner import DurableFunctionTestRunner

    # The runner's clock is the tests' (its skipped waits move the handlers' clock) and a failed
    # invocation is invoked again at once instead of after 5 real seconds: the time between them
    # decides nothing here, the leases are decided by the waits.
    monkeypatch.setattr(modulo_runner, "SkipClock", lambda: reloj_del_runner(reloj))
    monkeypatch.setattr(Executor, "RETRY_BACKOFF_SECONDS", 0)
    app = app_module("pedido_durable", **entorno_durable(flujo))
    app.reloj_s = reloj
    _ = app.pasos  # built now, while the environment is this function's
    durable = MotorDurable(flujo, app, runner=None)
    with DurableFunctionTestRunner(handler=durable.invocar) as runner:
        durable.runner = runner
        yield durable
    _informar(request, durable)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    informe = yield
    if informe.when == "call":
        item.stash[_RESULTADO] = informe.outcome
    return informe


_RESULTADO = pytest.StashKey[str]()


def _informar(request: pytest.FixtureRequest, motor: Motor) -> None:
    if not (ruta := os.environ.get(INFORME)):
        return
    linea = {
        "prueba": request.node.originalname,
        "motor": motor.nombre,
        "resultado": request.node.stash.get(_RESULTADO, "error"),
        "ejecuciones": [{"pedido_id": p, **asdict(r)} for p, r in motor.resultados],
    }
    with open(ruta, "a", encoding="utf-8") as salida:
        salida.write(json.dumps(linea) + "\n")
