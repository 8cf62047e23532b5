"""One Lambda of the fleet tests: a ``CircuitBreaker`` in its own interpreter, driven by JSON lines on stdin.

Run by ``test_core_processes.py`` as ``python worker.py URL PREFIX CONFIG_JSON``. It answers each command
with one JSON line on stdout. The breaker's clock is the Redis key ``{PREFIX}reloj`` the test moves
(epoch seconds): the script's time and this process's cache age follow the test, never this machine's
speed. The dependency is a counter in Redis (``{PREFIX}llamadas``, every call that reached it), which
answers or fails as the command says.

Commands (one JSON object a line):

- ``{"call": "ok" | "fail"}``: one guarded call; answers ``{"result": "admitted" | "probe" | "refused"}``.
- ``{"until_refused": "fail", "max": n}``: calls until one is refused; answers ``{"calls": k, "refused": bool}``.
- ``{"acquire": true}``: asks leave and holds the permit; answers like ``call``.
- ``{"finish": "ok" | "fail"}``: reports the held permit's outcome; answers ``{"done": true}``.
- ``{"report": true}``: answers ``{"metrics": {name: count}, "round_trips": n}``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Any

import redis
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto

HANG_GUARD_S = 300  # a worker the test forgot ends on its own


def count_round_trips(client: redis.Redis) -> list[int]:
    """Count the breaker's script calls on ``client`` (one ``EVAL`` or ``EVALSHA`` a round trip made or tried)."""
    trips = [0]
    for name in ("eval", "evalsha"):
        original = getattr(client, name)

        def counted(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            trips[0] += 1
            return _original(*args, **kwargs)

        setattr(client, name, counted)
    return trips


class _Metrics:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.counts[nombre] += 1


class _Worker:
    def __init__(self, url: str, prefix: str, config: dict[str, Any]) -> None:
        self.client = redis.Redis.from_url(url, socket_timeout=HANG_GUARD_S)
        self.prefix, self.metrics = prefix, _Metrics()
        breaker_client = redis.Redis.from_url(url, socket_timeout=HANG_GUARD_S)
        self.round_trips = count_round_trips(breaker_client)
        self.breaker = CircuitBreaker(
            "pasarela",
            breaker_client,
            config=BreakerConfig(**config),
            prefix=prefix,
            metrics=self.metrics,
            clock=lambda: float(self.client.get(f"{prefix}reloj")),
        )
        self.held = None

    def dependency(self, outcome: str) -> None:
        self.client.incr(f"{self.prefix}llamadas")  # the call reached it
        if outcome == "fail":
            raise ConnectionResetError("reset by peer")

    def acquire(self) -> str:
        try:
            self.held = self.breaker.acquire()
        except CircuitoAbierto:
            return "refused"
        return "probe" if self.held.is_probe else "admitted"

    def finish(self, outcome: str) -> None:
        assert self.held is not None
        try:
            self.dependency(outcome)
        except ConnectionResetError:
            self.held.failure()
        else:
            self.held.success()
        self.held = None

    def handle(self, command: dict[str, Any]) -> dict[str, Any]:
        if "call" in command:
            result = self.acquire()
            if result != "refused":
                self.finish(command["call"])
            return {"result": result}
        if "until_refused" in command:
            calls = 0
            while calls < command["max"]:
                if self.acquire() == "refused":
                    return {"calls": calls, "refused": True}
                self.finish(command["until_refused"])
                calls += 1
            return {"calls": calls, "refused": False}
        if "acquire" in command:
            return {"result": self.acquire()}
        if "finish" in command:
            self.finish(command["finish"])
            return {"done": True}
        return {"metrics": dict(self.metrics.counts), "round_trips": self.round_trips[0]}


def main() -> None:
    url, prefix, config = sys.argv[1:4]
    worker = _Worker(url, prefix, json.loads(config))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        print(json.dumps(worker.handle(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
