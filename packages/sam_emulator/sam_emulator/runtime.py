"""The whole template running locally: moto + the handlers (in workers, or in process) + what moto does not run.

``LocalRuntime`` is the one object a scenario holds::

    with LocalRuntime(local_environment={"PROVIDER_URL": stand_in.url}, compression=30) as rt:
        rt.start_consuming()          # mappings, pipes, schedules, TTL sweeper
        ...                            # put orders in, rt.wait_for_quiet()
        rt.stop_consuming()

Order of start-up: moto's server (:mod:`sam_emulator.moto_server`), every resource of ``template.yaml``
(:mod:`sam_emulator.provisioning`), moto's Lambda invoke hooked to the functions
(:mod:`sam_emulator.moto_lambda`, so the state machine's Lambda tasks run the real code), the functions'
cold starts (one worker each, :mod:`sam_emulator.workers`; in this process with
``isolated_functions=False`` or ``SAM_EMULATOR_WORKERS=0``), then the
event source mappings (:mod:`sam_emulator.event_sources`), the Pipes (:mod:`sam_emulator.pipes`), the
schedules (:mod:`sam_emulator.scheduler`) and DynamoDB's TTL (:mod:`sam_emulator.ttl`).

``compression`` is the run's single time-compression factor: queue visibility timeouts,
batching windows, schedule periods and the state machine's Retry waits last
``1/compression`` of what the template says. Nothing else is shortened: provider latencies
are set by the scenario in real seconds. A consumer's visibility never drops below its
function's (uncompressed) ``Timeout``, as AWS requires of an SQS trigger (:mod:`sam_emulator.event_sources`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from template_model.messaging import dead_letter_queues

from sam_emulator import deaths
from sam_emulator.aws import client
from sam_emulator.background import stop_all
from sam_emulator.durable import DurableService
from sam_emulator.event_sources import EventSourceMapping, mappings_from_template
from sam_emulator.functions import restore_environment, shared_environment
from sam_emulator.moto_server import MotoServer
from sam_emulator.pipes import PipeStream, pipes_from_template
from sam_emulator.provisioning import Provisioner
from sam_emulator.scheduler import Schedule, schedules_from_template
from sam_emulator.template import Template
from sam_emulator.ttl import TtlSweeper
from sam_emulator.workers import MAX_WORKERS

if TYPE_CHECKING:
    from collections.abc import Callable

    from sam_emulator.functions import Function, Functions


_DEPTH = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


def messages_in_queue(url: str) -> int:
    """Messages visible + in flight + delayed in an SQS queue."""
    attributes = client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=list(_DEPTH))["Attributes"]
    return sum(int(attributes.get(n, 0)) for n in _DEPTH)


@dataclass
class LocalRuntime:
    """``template.yaml`` provisioned in a loopback moto, with its event plumbing runnable."""

    local_environment: dict[str, str] = field(default_factory=dict)
    compression: float = 30.0
    template: Template = field(default_factory=Template)
    concurrency_cap: int | None = None  # cap each mapping's pollers (a laptop is not Lambda)
    server: MotoServer | None = None
    provisioner: Provisioner | None = None
    mappings: list[EventSourceMapping] = field(default_factory=list)
    pipes: list[EventSourceMapping | PipeStream] = field(default_factory=list)
    schedules: list[Schedule] = field(default_factory=list)
    sweeper: TtlSweeper | None = None
    # Compress the bounds a compressed Wait must keep its ratio to (the chaos scenario): the
    # workflow's Wait states here, and whatever the application derives from them (leases, HTTP
    # timeouts) by ``compress_function``, called on each function before its cold start.
    compressed_deadlines: bool = False
    compress_function: Callable[[Function, float], None] | None = None
    # Called at start and at stop, as new execution environments would begin: the application
    # forgets its per-environment caches (clients, pools) bound to the previous run's endpoints.
    new_environments: Callable[[], None] = lambda: None
    lambda_registry: Any = None  # moto_lambda's Registry: Lambda-task invocations and errors
    # True (the default; SAM_EMULATOR_WORKERS=0 turns it off): each function in worker processes of
    # its own (sam_emulator.workers), as Lambda runs it; a cold start and ~70 MB each, at most
    # ``max_workers`` per function (see the workers' module docstring for what a run costs).
    # False: every handler imported into this process, for tests that reach into a handler
    # module's state (they pass it explicitly).
    isolated_functions: bool = field(default_factory=lambda: os.environ.get("SAM_EMULATOR_WORKERS") != "0")
    max_workers: int = MAX_WORKERS  # isolated_functions: each function's workers at most (sam_emulator.workers)
    _undo: list[Callable[[], None]] = field(default_factory=list)

    @property
    def functions(self) -> Functions:
        assert self.provisioner is not None, "call start() first"
        return self.provisioner.functions

    def start(self) -> LocalRuntime:
        self.new_environments()
        self._undo.append(self.new_environments)
        # Last to undo: the functions' variables (REDIS_URL of a private Redis...) leave with the run,
        # so a second run in the same process (the e2e suite) starts from the process's own environment.
        self._undo.append(restore_environment)
        # Platform faults: boundary hooks before any handler builds a client; a clean plan per run.
        deaths.CONTROL.reset()
        deaths.install()
        self._undo.append(deaths.CONTROL.reset)
        self.server = MotoServer(
            region=self.template.region, compression=self.compression, compress_waits=self.compressed_deadlines
        ).start()
        self._undo.append(self.server.stop)
        self.provisioner = Provisioner(self.template, local_environment=dict(self.local_environment)).provision()
        if self.compressed_deadlines and self.compress_function is not None:
            for function in self.functions.by_id.values():
                self.compress_function(function, self.compression)
        self._hook_lambda()
        self._durable_services()
        if self.isolated_functions:
            self._start_workers()
        else:
            # Cold starts, one at a time, before any poller runs: importing handlers from several
            # threads at once trips over circular imports inside Powertools.
            for function in self.functions.by_id.values():
                function.load()
            shared_environment(list(self.functions.by_id.values()))
        # The root's plumbing and every created unit's (decision 0130: a component may live in a nested unit).
        units = list(self.template.walk())
        self.mappings = [
            mapping
            for unit_path, t in units
            for mapping in mappings_from_template(t, self.functions, self.compression, unit_path)
        ]
        if self.concurrency_cap is not None:
            for mapping in self.mappings:
                mapping.concurrency = min(mapping.concurrency, self.concurrency_cap)
        self.sweeper = TtlSweeper.of_tables_with_streams()
        self.pipes = [
            pipe
            for unit_path, t in units
            for pipe in pipes_from_template(t, self.functions, self.sweeper, self.compression, unit_path)
        ]
        self.schedules = [
            s
            for unit_path, t in units
            for s in schedules_from_template(t, self.functions, self.compression, unit_path=unit_path)
        ]
        return self

    def _durable_services(self) -> None:
        """A durable service per durable function, its timers compressed as the run's Wait states are."""
        for function in self.functions.by_id.values():
            if function.durable_timeout_s is not None:
                self.functions.durable[function.logical_id] = DurableService(
                    function, function.durable_timeout_s, self.compression if self.compressed_deadlines else 1.0
                )
        services = list(self.functions.durable.values())
        self._undo.append(lambda: stop_all(s.stop for s in services))

    def _start_workers(self) -> None:
        """One execution environment per function, cold-started in parallel before any poller runs.

        A durable function stays in this process (the runner's checkpoint client cannot cross into a
        worker, :mod:`sam_emulator.durable`): its cold start follows the workers', so its variables are
        not every worker's.
        """
        functions = [f for f in self.functions.by_id.values() if f.logical_id not in self.functions.durable]
        self._undo.append(lambda: stop_all(f.stop_workers for f in functions))
        for function in functions:
            function.isolated = True
            function.max_workers = self.max_workers
            function.start_workers()
        for function in functions:
            function.wait_workers()
        for logical_id in self.functions.durable:
            self.functions.by_id[logical_id].load()

    def worker_pids(self) -> list[int]:
        """The process ids of every function's workers now (their sockets are theirs, not this process's)."""
        return [pid for function in self.functions.by_id.values() for pid in function.worker_pids()]

    def _hook_lambda(self) -> None:
        """Route moto's Lambda invoke (Step Functions tasks) to the in-process handlers."""
        from sam_emulator.moto_lambda import in_process

        active = in_process(self.functions.handlers())
        self.lambda_registry = active.__enter__()
        self._undo.append(lambda: active.__exit__(None, None, None))

    def start_consuming(self) -> None:
        """Start every poller, pipe, schedule and the TTL sweeper."""
        for part in self._parts():
            part.start()

    def stop_consuming(self) -> None:
        stop_all(part.stop for part in reversed(self._parts()))

    def check_consuming(self) -> None:
        """Raise if a poller, pipe, schedule or the TTL sweeper has died (its loop's error is the cause)."""
        for part in self._parts():
            part.check()

    def _parts(self) -> list[Any]:
        sweeper = [self.sweeper] if self.sweeper and self.sweeper.tables else []
        return [*self.mappings, *self.pipes, *self.schedules, *sweeper]

    def stop(self) -> None:
        undo, self._undo = self._undo, []
        stop_all([self.stop_consuming, *reversed(undo)])

    def __enter__(self) -> LocalRuntime:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ observation
    # A queue is named by its path, as Template.walk() names a unit's resource: ``ColaPedidos`` in the root,
    # ``Carritos/ColaCarritosFallidos`` in a unit.
    def queue_url_of(self, path: str) -> str:
        template, logical_id = self.template.locate(path)
        return template.ref(logical_id)

    def depth(self, path: str) -> int:
        """Messages visible + in flight + delayed in one of the template's queues."""
        return messages_in_queue(self.queue_url_of(path))

    def queues(self) -> dict[str, str]:
        """Path -> queue name, for every queue of the template and of its created units."""
        return {
            f"{prefix}{lid}": template.get_att(lid, "QueueName")
            for prefix, template in self.template.walk()
            for lid in template.of_type("AWS::SQS::Queue")
        }

    def is_dlq(self, path: str) -> bool:
        """A queue its template names as a dead-letter target (a queue's RedrivePolicy, a pipe's, a rule
        target's, a subscription's: ``template_model.messaging.dead_letter_queues``)."""
        holder, logical_id = self.template.locate(path)
        return logical_id in dead_letter_queues(holder)

    def executions_running(self) -> int:
        """Workflow executions not ended yet: the state machines' and the durable functions'."""
        sfn = client("stepfunctions")
        assert self.provisioner is not None
        return sum(
            len(sfn.list_executions(stateMachineArn=arn, statusFilter="RUNNING")["executions"])
            for arn in self.provisioner.state_machines.values()
        ) + sum(service.running() for service in self.functions.durable.values())

    def wait_for_quiet(
        self, timeout_s: float, stable_s: float = 1.0, on_advance: Callable[[], None] | None = None
    ) -> float:
        """Wait until no queue holds a message and no execution runs (for ``stable_s``); return seconds waited."""
        start_time = time.monotonic()
        quiet_since: float | None = None
        while time.monotonic() - start_time < timeout_s:
            self.check_consuming()  # a dead pipe would otherwise show up as a drain that never ends
            if on_advance is not None:
                on_advance()
            busy = self.executions_running() + sum(self.depth(lid) for lid in self.queues() if not self.is_dlq(lid))
            if busy == 0:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since >= stable_s:
                    return time.monotonic() - start_time
            else:
                quiet_since = None
            time.sleep(1.0)
        busy_queues = {lid: n for lid in self.queues() if not self.is_dlq(lid) and (n := self.depth(lid))}
        raise TimeoutError(
            f"the system did not drain in {timeout_s:.0f} s: "
            f"{self.executions_running()} executions running, messages in {busy_queues or 'no queue'}"
        )
