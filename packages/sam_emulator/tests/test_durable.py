"""Lambda durable functions run locally: a pipe's invoke starts an execution, the service replays it to its end."""

from __future__ import annotations

import datetime
import json
import textwrap
from typing import TYPE_CHECKING

import pytest
from sam_emulator.testing import wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from sam_emulator.durable import DurableExecution, DurableService
    from sam_emulator.functions import Function
    from sam_emulator.moto_server import MotoServer

pytestmark = pytest.mark.integration

# A saga of one step and one wait of an hour: the wait ends the first invocation and the service invokes the
# function again when it is over, which replays the step from its checkpoint.
HANDLER = textwrap.dedent(
    """
    from aws_durable_execution_sdk_python.config import Duration
    from aws_durable_execution_sdk_python.execution import durable_execution

    @durable_execution
    def lambda_handler(event, ctx):
        pedido_id = ctx.step(lambda _: event[0]["pedido_id"], name="leer")
        ctx.wait(Duration.from_seconds(3600), name="esperar-una-hora")
        return {"pedido_id": pedido_id, "fin": "Confirmado"}
    """
)
HOUR_IN_A_TENTH_OF_A_SECOND = 36_000.0
# On the compressed clock a day would last 2.4 s: the execution's bound is far above any run of these tests.
EXECUTION_TIMEOUT_S = 10**10


@pytest.fixture
def saga(tmp_path: Path) -> Function:
    from sam_emulator.functions import Function

    (tmp_path / "app.py").write_text(HANDLER)
    return Function(
        logical_id="SagaFunction", name="saga", code=tmp_path, timeout_s=30, durable_timeout_s=EXECUTION_TIMEOUT_S
    )


@pytest.fixture
def plan_reset() -> Iterator[None]:
    from sam_emulator import deaths

    deaths.CONTROL.reset()
    yield
    deaths.CONTROL.reset()


@pytest.fixture
def durable(saga: Function) -> Iterator[DurableService]:
    """The saga's durable service, its hour's wait lasting a tenth of a second."""
    from sam_emulator.durable import DurableService

    service = DurableService(saga, saga.durable_timeout_s or 0, HOUR_IN_A_TENTH_OF_A_SECOND)
    yield service
    service.stop()


def _run_once(function: Function) -> DurableExecution:
    """One execution of ``function`` on a durable service of its own, to its end."""
    from sam_emulator.durable import DurableService

    durable = DurableService(function, function.durable_timeout_s or 0, 1.0)
    try:
        durable.start([{"pedido_id": "PED-1"}])
        wait_until(lambda: durable.running() == 0, "the execution ended")
        (execution,) = durable.executions()
    finally:
        durable.stop()
    return execution


def test_a_pipe_invoking_a_durable_function_starts_one_execution_per_message_each_replayed_to_its_end(
    moto_server: MotoServer, saga: Function, durable: DurableService, plan_reset: None
) -> None:
    from sam_emulator.aws import client
    from sam_emulator.functions import Functions
    from sam_emulator.pipes import Target, sqs_pipe
    from sam_emulator.principal import AwsCall, add_call_listener, remove_call_listener

    # GIVEN three orders on a queue, and a pipe whose target is the durable function's alias (as the template's)
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="pedidos")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"pedido_id": f"PED-{i}"}))
    functions = Functions()
    functions.add(saga)
    functions.durable[saga.logical_id] = durable
    alias = "arn:aws:lambda:eu-south-2:123456789012:function:saga:live"
    target = Target(
        "pipe-durable",
        alias,
        {},
        '{"pedido_id": "<$.body.pedido_id>"}',
        functions,
    )
    pipe = sqs_pipe(
        "pipe-durable", queue_arn, target, {"SqsQueueParameters": {"BatchSize": 1}}, [], 30, logical_id="PipeDurable"
    )
    invokes: list[AwsCall] = []
    add_call_listener(invokes.append)

    # WHEN the pipe delivers them
    pipe.start()
    try:
        wait_until(lambda: len(durable.executions()) == 3 and durable.running() == 0, "three executions ended")
    finally:
        pipe.stop()
        remove_call_listener(invokes.append)

    # THEN each order ran one execution to its end, its hour's wait compressed, with the handler's own output
    executions = durable.executions()
    assert [e.status for e in executions] == ["SUCCEEDED"] * 3
    assert sorted(json.loads(e.result or "{}")["pedido_id"] for e in executions) == ["PED-0", "PED-1", "PED-2"]
    # AND the wait ended each execution's first invocation: the service invoked the function again to finish it
    assert saga.invocations == 6
    assert durable.running() == 0
    # AND each start was the pipe's Invoke of the alias, made with the pipe's role (what its grant must allow)
    invoked = [(c.principal, c.operation, c.params) for c in invokes]
    assert invoked == [("PipeDurable", "Invoke", {"FunctionName": alias})] * 3


def test_a_throttled_invocation_is_retried_by_the_service_and_the_execution_still_ends(
    moto_server: MotoServer, durable: DurableService, plan_reset: None
) -> None:
    from sam_emulator import deaths

    # GIVEN a platform that throttles the function's first invocation
    throttled_first = iter([deaths.Throttle()])
    deaths.CONTROL.set_plan(lambda _invocation: next(throttled_first, None))

    # WHEN an order's execution starts
    arn = durable.start([{"pedido_id": "PED-9"}])
    wait_until(lambda: durable.running() == 0, "the execution ended")
    (execution,) = durable.executions()

    # THEN the service invoked it again and the execution succeeded, after exactly one throttle
    assert execution.arn == arn and execution.status == "SUCCEEDED"
    assert json.loads(execution.result or "{}") == {"pedido_id": "PED-9", "fin": "Confirmado"}
    assert deaths.CONTROL.throttled["saga"] == 1


def test_an_execution_that_raises_reports_failed_with_its_error_type(
    moto_server: MotoServer, tmp_path: Path, plan_reset: None
) -> None:
    from sam_emulator.functions import Function

    # GIVEN a durable function whose saga ends in a business error
    (tmp_path / "app.py").write_text(
        textwrap.dedent(
            """
            from aws_durable_execution_sdk_python.execution import durable_execution

            class PedidoCancelado(Exception):
                pass

            @durable_execution
            def lambda_handler(event, ctx):
                raise PedidoCancelado("refunded")
            """
        )
    )
    function = Function(logical_id="F", name="f", code=tmp_path, timeout_s=30, durable_timeout_s=600)

    # WHEN it runs
    execution = _run_once(function)

    # THEN it is reported failed, named by its error's class (what the local run's report maps to a final state)
    assert execution.status == "FAILED"
    assert execution.error_type == "PedidoCancelado"
    assert execution.result is None


def test_the_compressed_clock_runs_its_time_faster_and_arms_a_timer_for_its_gap_divided_by_the_compression() -> None:
    from sam_emulator.durable import CompressedClock

    # GIVEN a clock compressed 10x
    clock = CompressedClock(10.0)
    # WHEN a timer is armed 1000 s ahead of its now  THEN it fires in at most 100 real seconds, never before now
    assert 0.0 < clock.arm(clock.now() + datetime.timedelta(seconds=1000)) <= 100.0
    assert clock.arm(clock.now() - datetime.timedelta(seconds=5)) == 0.0
    # AND its now never runs behind the wall clock's (time since its start is multiplied, not shifted)
    assert clock.now() >= datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=1)


def test_a_step_calls_aws_as_its_function_and_the_platform_can_cut_it_there(
    moto_server: MotoServer, tmp_path: Path, plan_reset: None
) -> None:
    from sam_emulator import deaths
    from sam_emulator.aws import client
    from sam_emulator.functions import Function
    from sam_emulator.platform_faults import LambdaCrashed
    from sam_emulator.principal import record_calls

    # GIVEN a saga whose step sends a message, the SDK running the step in a thread of its own; a platform
    # that kills the function's first invocation right after the send, before the step is checkpointed
    url = client("sqs").create_queue(QueueName="avisos")["QueueUrl"]
    (tmp_path / "app.py").write_text(
        textwrap.dedent(
            f"""
            import boto3
            from aws_durable_execution_sdk_python.execution import durable_execution

            @durable_execution
            def lambda_handler(event, ctx):
                sqs = boto3.client("sqs")
                ctx.step(lambda _: sqs.send_message(QueueUrl="{url}", MessageBody="aviso")["MessageId"], name="avisar")
                return {{"fin": "Confirmado"}}
            """
        )
    )
    deaths.install()
    recorder = record_calls()
    first = iter([deaths.Cut(LambdaCrashed, where="after:sqs.SendMessage")])
    deaths.CONTROL.set_plan(lambda _invocation: next(first, None))
    function = Function(logical_id="AvisoFunction", name="aviso", code=tmp_path, timeout_s=30, durable_timeout_s=600)

    # WHEN an execution runs
    execution = _run_once(function)

    # THEN the invocation died where planned, the service invoked it again, and the step ran again (at least
    # once: the message twice), the execution succeeding
    assert [(f, e) for f, e, *_ in deaths.CONTROL.deaths] == [("aviso", "Lambda.Unknown")]
    assert execution.status == "SUCCEEDED" and function.invocations == 2
    sends = [c for c in recorder.take() if c.operation == "SendMessage"]
    assert len(sends) == 2
    # AND each send was the function's call, though made on the SDK's thread
    assert {c.principal for c in sends} == {"AvisoFunction"}
