"""Eight real processes on one breaker: the bounds of ``core.py`` under real concurrency, on the real Redis.

Each process is ``worker.py``, driven over its stdin; their clock is one Redis key the test moves, so a
process's cache age is an exact instant, and no assertion depends on how fast this machine starts or
schedules the processes. Where the processes run free (``until_refused``), the assertion is a bound
that holds for every interleaving; where they run in rounds, the counts are exact.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco.circuit_breaker import BreakerConfig, BreakerState, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto

from tests.conftest import HANG_GUARD_S

if TYPE_CHECKING:
    from collections.abc import Iterator

    import redis

pytestmark = pytest.mark.integration

WORKER = Path(__file__).with_name("worker.py")
PROCESSES = 8
THRESHOLD = 5
CONFIG = {"consecutive_failures": THRESHOLD, "open_base_s": 30.0, "open_max_s": 300.0, "probe_reservation_s": 15.0}
CACHE_S = BreakerConfig(**CONFIG).cache_max_age_s
START_S = 1_800_000_000.0


class _SharedClock:
    """Epoch seconds in the Redis key ``{prefix}reloj``: the clock of this test's breaker and every worker's."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self._client, self._key = client, f"{prefix}reloj"
        client.set(self._key, START_S)

    def __call__(self) -> float:
        return float(self._client.get(self._key))

    def advance(self, seconds: float) -> None:
        self._client.incrbyfloat(self._key, seconds)


class _Fleet:
    """The worker processes: a command goes to each (they run it concurrently), then every answer is read."""

    def __init__(self, redis_url: str, prefix: str) -> None:
        args = [sys.executable, str(WORKER), redis_url, prefix, json.dumps(CONFIG)]
        self.processes = [
            subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(PROCESSES)
        ]
        assert self._answers(self.processes) == [{"ready": True}] * PROCESSES

    def send(self, command: dict[str, Any], processes: list[subprocess.Popen[str]] | None = None) -> list[Any]:
        targets = self.processes if processes is None else processes
        for process in targets:
            assert process.stdin is not None
            process.stdin.write(json.dumps(command) + "\n")
            process.stdin.flush()
        return self._answers(targets)

    @staticmethod
    def _answers(processes: list[subprocess.Popen[str]]) -> list[Any]:
        return [json.loads(p.stdout.readline()) for p in processes]  # type: ignore[union-attr]

    def results(self, command: dict[str, Any], processes: list[subprocess.Popen[str]] | None = None) -> list[str]:
        return sorted(answer["result"] for answer in self.send(command, processes))

    def acquire(self, processes: list[subprocess.Popen[str]]) -> tuple[list[str], list[subprocess.Popen[str]]]:
        """Every process asks leave and holds it: (the sorted answers, the processes that hold a permit)."""
        answers = [answer["result"] for answer in self.send({"acquire": True}, processes)]
        holders = [p for p, answer in zip(processes, answers, strict=True) if answer != "refused"]
        return sorted(answers), holders

    def openings_announced(self) -> int:
        return sum(answer["metrics"].get("CircuitoAbierto", 0) for answer in self.send({"report": True}))

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.stdin.close()  # type: ignore[union-attr]
            process.wait(HANG_GUARD_S)


@pytest.fixture
def clock(cliente: redis.Redis, redis_prefix: str) -> _SharedClock:
    return _SharedClock(cliente, redis_prefix)


@pytest.fixture
def fleet(redis_url: str, redis_prefix: str, clock: _SharedClock) -> Iterator[_Fleet]:
    started = _Fleet(redis_url, redis_prefix)
    yield started
    started.close()


def _breaker(client: redis.Redis, prefix: str, clock: _SharedClock) -> CircuitBreaker:
    return CircuitBreaker("pasarela", client, config=BreakerConfig(**CONFIG), prefix=prefix, clock=clock)


def _trip(breaker: CircuitBreaker) -> None:
    def fail() -> None:
        raise ConnectionResetError("reset by peer")

    for _ in range(THRESHOLD):
        with pytest.raises(ConnectionResetError):
            breaker.call(fail)
    with pytest.raises(CircuitoAbierto):
        breaker.call(fail)


def _calls(client: redis.Redis, prefix: str) -> int:
    """Calls that reached the dependency, as the workers counted them in Redis."""
    return int(client.get(f"{prefix}llamadas") or 0)


def test_fleet_failures_spread_so_no_process_sees_threshold_in_a_row_still_open_it(
    cliente: redis.Redis, redis_prefix: str, clock: _SharedClock, fleet: _Fleet
):
    # GIVEN 8 processes whose last call succeeded (a view "closed", a success not reported yet)
    assert fleet.results({"call": "ok"}) == ["admitted"] * PROCESSES
    clock.advance(CACHE_S / 2)
    # WHEN the dependency dies and each process calls it once, all at the same time
    first = fleet.results({"call": "fail"})
    # THEN every call went out (each view was fresh), and the fleet's 8 failures opened the breaker: the
    # threshold counts failures across processes, and the old successes reset nothing
    assert first == ["admitted"] * PROCESSES
    assert _breaker(cliente, redis_prefix, clock).state().state is BreakerState.ABIERTO
    # WHEN each calls once more
    # THEN none does: a process whose failure was answered "closed" asks Valkey before its next call (the
    # view is not trusted after its own failure), and the others learnt "open" from their failure's answer
    assert fleet.results({"call": "fail"}) == ["refused"] * PROCESSES
    # AND no process saw more than one failure, the dead dependency got one call per process (what was in
    # flight when it died: the least any breaker can do), and the opening was announced (metric
    # CircuitoAbierto) once across the fleet
    assert _calls(cliente, redis_prefix) == PROCESSES + PROCESSES
    assert fleet.openings_announced() == 1


def test_fleet_dead_dependency_gets_at_most_threshold_plus_one_call_per_process(
    cliente: redis.Redis, redis_prefix: str, clock: _SharedClock, fleet: _Fleet
):
    # GIVEN 8 processes whose last call succeeded before the outage (views fresh, successes not reported)
    fleet.send({"call": "ok"})
    clock.advance(CACHE_S / 2)
    before = _calls(cliente, redis_prefix)
    # WHEN the dependency dies and every process calls it in a loop until the breaker refuses, all at once
    answers = fleet.send({"until_refused": "fail", "max": 50})
    # THEN every process stopped, and whatever the interleaving, the dead dependency got at most
    # threshold - 1 + one call per process (each process calls again only after an answer "closed", and
    # only threshold - 1 failures are answered so); the late successes from before the outage reset nothing
    dead_calls = _calls(cliente, redis_prefix) - before
    assert all(answer["refused"] for answer in answers)
    assert sum(answer["calls"] for answer in answers) == dead_calls
    assert PROCESSES <= dead_calls <= THRESHOLD - 1 + PROCESSES
    assert fleet.openings_announced() == 1


def test_fleet_view_lags_another_process_opening_by_cache_age_at_most(
    cliente: redis.Redis, redis_prefix: str, clock: _SharedClock, fleet: _Fleet
):
    # GIVEN 8 processes that made 100 healthy calls each, at one instant: one round trip each
    for _ in range(100):
        fleet.send({"call": "ok"})
    assert [a["round_trips"] for a in fleet.send({"report": True})] == [1] * PROCESSES
    # WHEN another Lambda trips the breaker at that instant
    _trip(_breaker(cliente, redis_prefix, clock))
    # THEN a process whose view is younger than cache_max_age_s still calls a dependency that answers...
    clock.advance(CACHE_S - 0.001)
    stale = fleet.results({"call": "ok"})
    # ...and from cache_max_age_s on every process sees the open circuit, on its second round trip
    clock.advance(0.001)
    fresh = fleet.results({"call": "ok"})
    assert (stale, fresh) == (["admitted"] * PROCESSES, ["refused"] * PROCESSES)
    assert [a["round_trips"] for a in fleet.send({"report": True})] == [2] * PROCESSES
    assert _calls(cliente, redis_prefix) == 100 * PROCESSES + PROCESSES


def test_half_open_with_8_processes_admits_exactly_one_probe_and_no_refusal_after_it_closes(
    cliente: redis.Redis, redis_prefix: str, clock: _SharedClock, fleet: _Fleet
):
    # GIVEN a breaker opened by failures, whose cool-down has passed (on the clock every process reads)
    breaker = _breaker(cliente, redis_prefix, clock)
    _trip(breaker)
    clock.advance(CONFIG["open_base_s"])
    # WHEN 8 processes ask leave at the same instant (the probe holds its call until all have asked)
    asked, prober = fleet.acquire(fleet.processes)
    # THEN exactly one of them probes; the other 7 are refused
    assert asked == ["probe"] + ["refused"] * (PROCESSES - 1)
    fleet.send({"finish": "ok"}, prober)
    # AND the probe's success closed the breaker for everyone
    assert breaker.state().state is BreakerState.CERRADO
    # WHEN every process calls again at that same instant
    # THEN all 8 are admitted: no process goes on refusing from a half-open view (it is never cached)
    assert fleet.results({"call": "ok"}) == ["admitted"] * PROCESSES
    assert _calls(cliente, redis_prefix) == 1 + PROCESSES


def test_probe_killed_releases_reservation_after_it_expires(
    cliente: redis.Redis, redis_prefix: str, clock: _SharedClock, fleet: _Fleet
):
    # GIVEN an open breaker whose probe is taken by a process that is then SIGKILLed
    breaker = _breaker(cliente, redis_prefix, clock)
    _trip(breaker)
    clock.advance(CONFIG["open_base_s"])
    hung, *others = fleet.processes
    assert fleet.acquire([hung])[0] == ["probe"]
    hung.kill()
    hung.wait(HANG_GUARD_S)
    # WHEN others ask while the dead probe's reservation is still live
    with pytest.raises(CircuitoAbierto, match="semiabierto"):
        breaker.acquire()
    # AND again after the reservation has expired, 7 processes at once
    clock.advance(CONFIG["probe_reservation_s"] + 0.1)
    asked, prober = fleet.acquire(others)
    # THEN exactly one new probe ran, and its failure re-opened the breaker (second trip; the doubled
    # duration itself is asserted with an injected clock in test_shared.py)
    assert asked == ["probe"] + ["refused"] * (len(others) - 1)
    fleet.send({"finish": "fail"}, prober)
    estado = breaker.state()
    assert (estado.state, estado.openings) == (BreakerState.ABIERTO, 2)
    assert _calls(cliente, redis_prefix) == 1
