"""Three shared circuit breakers side by side, in one run: this layer's, Powertools 3.37's and pybreaker 1.4.1's.

Eight real processes (``--worker``) call a loopback stand-in of the payment gateway through each
breaker in turn, with the same settings: failure threshold 5, recovery 2 s, one probe success
closes. What is counted, per breaker:

- store round trips per guarded call, amortised: healthy (8 x 500 calls), tripping (every call
  from the gateway's death until each process is refused), open (8 x 500 refused calls), a call
  refused while the half-open probe is out, and the probe call itself;
- calls that reached the dead gateway before all 8 processes stopped calling it, and how many
  times that one outage was announced (the metric the alarm reads);
- whether failures spread over the fleet (4 per process, fewer than the threshold) open it;
- probes when 8 processes meet a half-open breaker, the time from the gateway's recovery until
  every process calls it again, and the calls refused after the breaker had closed;
- the store unreachable: time per guarded call, calls let through, errors raised, and whether a
  dead gateway still gets stopped.

Stores. Ours and pybreaker (``CircuitRedisStorage``) share the local Redis. Powertools 3.37 keeps
its state in DynamoDB only, served here by moto's server in a process of its own (``--store``),
with the project's atomic-writes patch (``sam_emulator.moto_patches.atomic_dynamodb_writes``):
moto checks a write's condition and then writes with no lock while its server answers requests
in parallel threads, so without it two processes could both win Powertools' probe election, a
fault of the stand-in that DynamoDB does not have. A persistence layer on Valkey written for
Powertools' interface was the other choice; it would measure our code, not the backend a
Powertools user runs. Round trips do not depend on the store's speed.

Round trips are counted, never timed: a redis-py connection that counts its writes (one per
command or pipeline, each followed by its reply) and botocore's ``before-send`` event (one per
HTTP attempt, the SDK's retries included). "Unreachable" is a loopback port nobody listens on.

    .venv/bin/python bench/bench_breaker.py [--redis-url redis://127.0.0.1:6379/0] [--calls 500]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROCESSES = 8
THRESHOLD = 5
RECOVERY_S = 2
KINDS = ("ours", "powertools", "pybreaker")
TITLES = {"ours": "this layer", "powertools": "Powertools 3.37", "pybreaker": "pybreaker 1.4.1"}
TABLE = "mf-bench-circuitos"
REGION = "eu-south-2"
WARM_CALLS = 20  # healthy calls before an outage: each process has read the state, as in production
PROBE_LATENCY_S = 0.2  # the recovered gateway's answer time: the probe is out that long
PACE_S = 0.05  # one call per process every 50 ms while the gateway recovers (20 calls/s, a busy Lambda)
POWERTOOLS_CACHE_S = 5  # CircuitBreakerConfig.local_cache_max_age's default, kept
RECOVER_AFTER_S = 1.0  # the gateway recovers this long after the breaker opened, half-way through its open period
RECOVERY_WATCH_S = RECOVERY_S + POWERTOOLS_CACHE_S + 3  # long enough to see every breaker's tail
DEAD_STORE_CALLS = {"ours": 20, "powertools": 1, "pybreaker": 20}  # Powertools: 25 s a call (SDK retries)
DEAD_STORE_DEAD_GATEWAY_CALLS = 10  # > the degraded local breaker's threshold (5)


# ---------------------------------------------------------------------------------------------- workers


class GatewayError(Exception):
    """The stand-in answered 5xx."""


class Worker:
    """One process: the three breakers on a gateway stand-in, its store round trips counted per breaker."""

    def __init__(self, urls: dict[str, str], prefix: str) -> None:
        import urllib3

        self.urls, self.prefix = urls, prefix
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=2, read=10))
        self.round_trips: Counter[str] = Counter()
        self.openings: Counter[str] = Counter()  # (kind:circuit) -> openings this process announced
        self.gateway_calls = 0
        self._guards: dict[tuple[str, str, str], Any] = {}
        self._clients: dict[tuple[str, str], Any] = {}

    def gateway(self) -> None:
        self.gateway_calls += 1
        if self.http.request("GET", self.urls["gateway"]).status >= 500:
            raise GatewayError

    def attempt(self, kind: str, circuit: str, store: str) -> tuple[str, int]:
        """One guarded call: ``ok``, ``fail`` (it reached the gateway and failed), ``refused`` or ``error``."""
        import pybreaker
        from aws_lambda_powertools.utilities.circuit_breaker import CircuitBreakerOpenError
        from mercadofresco.errors import CircuitoAbierto

        trips, calls = self.round_trips[kind], self.gateway_calls
        try:
            self._guard(kind, circuit, store)()
        except GatewayError:
            outcome = "fail"
        except (CircuitoAbierto, CircuitBreakerOpenError, pybreaker.CircuitBreakerError):
            # pybreaker raises its error on the call whose failure trips it too: that one did reach the gateway
            outcome = "refused" if self.gateway_calls == calls else "fail"
        except Exception:
            outcome = "error"  # the breaker itself raised (a store it cannot reach, at construction)
        else:
            outcome = "ok"
        return outcome, self.round_trips[kind] - trips

    def _guard(self, kind: str, circuit: str, store: str) -> Any:
        key = (kind, circuit, store)
        if key not in self._guards:
            self._guards[key] = getattr(self, f"_{kind}")(circuit, store)  # not kept if it raised
        return self._guards[key]

    def _opened(self, kind: str, circuit: str) -> None:
        self.openings[f"{kind}:{circuit}"] += 1

    def _ours(self, circuit: str, store: str) -> Any:
        from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker

        worker = self

        class Metrics:
            def count(self, name: str, dependency: str, value: float = 1) -> None:
                if name == "CircuitoAbierto":
                    worker._opened("ours", circuit)

        # The same policy as the others: a constant open period (in production it doubles per failed probe).
        config = BreakerConfig(consecutive_failures=THRESHOLD, open_base_s=RECOVERY_S, open_max_s=RECOVERY_S)
        breaker = CircuitBreaker(
            circuit, self._redis("ours", store), config=config, prefix=self.prefix, metrics=Metrics()
        )
        return lambda: breaker.call(self.gateway)

    def _powertools(self, circuit: str, store: str) -> Any:
        from aws_lambda_powertools.utilities.circuit_breaker import CircuitBreakerConfig, CircuitState, circuit_breaker

        def on_transition(transition: Any) -> None:
            if transition.to_state is CircuitState.OPEN:
                self._opened("powertools", circuit)

        config = CircuitBreakerConfig(
            failure_threshold=THRESHOLD, recovery_timeout=RECOVERY_S, success_threshold=1,
            local_cache_max_age=POWERTOOLS_CACHE_S,
        )  # fmt: skip
        store_layer = self._dynamodb(store)
        return circuit_breaker(circuit, store_layer, on_transition=on_transition, config=config)(self.gateway)

    def _pybreaker(self, circuit: str, store: str) -> Any:
        import pybreaker

        worker = self

        class Listener(pybreaker.CircuitBreakerListener):
            def state_change(self, cb: Any, old_state: Any, new_state: Any) -> None:
                if new_state.name == pybreaker.STATE_OPEN:
                    worker._opened("pybreaker", circuit)

        storage = pybreaker.CircuitRedisStorage(
            pybreaker.STATE_CLOSED, self._redis("pybreaker", store), namespace=f"{self.prefix}{circuit}"
        )
        breaker = pybreaker.CircuitBreaker(
            fail_max=THRESHOLD, reset_timeout=RECOVERY_S, success_threshold=1, state_storage=storage,
            listeners=[Listener()],
        )  # fmt: skip
        return lambda: breaker.call(self.gateway)

    def _redis(self, kind: str, store: str) -> Any:
        """A client whose connections count their writes; ours as the functions build it (``valkey_client``)."""
        if (kind, store) not in self._clients:
            import redis
            from mercadofresco.valkey import valkey_client

            url = self.urls["redis" if store == "main" else "dead_redis"]
            # A loaded 2-core machine may answer later than the functions' 50 ms: that must not read as "down".
            client = valkey_client(url, socket_timeout_ms=2000) if kind == "ours" else redis.Redis.from_url(url)
            pool, counter = client.connection_pool, self.round_trips

            class CountedConnection(pool.connection_class):  # type: ignore[name-defined, misc]
                def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                    counter[kind] += 1
                    super().send_packed_command(command, check_health)

            pool.connection_class = CountedConnection
            self._clients[(kind, store)] = client
        return self._clients[(kind, store)]

    def _dynamodb(self, store: str) -> Any:
        """Powertools' DynamoDB persistence on moto's server (or on nothing), its HTTP attempts counted."""
        if ("powertools", store) not in self._clients:
            import boto3
            from aws_lambda_powertools.utilities.circuit_breaker.persistence import CircuitBreakerDynamoDBPersistence
            from botocore.config import Config

            url = self.urls["store" if store == "main" else "dead_store"]
            # "dead-fast": the SDK's retries off, so that 10 calls do not take 4 minutes (each waits 25 s otherwise).
            config = Config(retries={"max_attempts": 1, "mode": "standard"}) if store == "dead-fast" else None
            client = boto3.client("dynamodb", endpoint_url=url, region_name=REGION, config=config)

            def count(**_: Any) -> None:
                self.round_trips["powertools"] += 1

            client.meta.events.register("before-send.dynamodb", count)
            self._clients[("powertools", store)] = CircuitBreakerDynamoDBPersistence(TABLE, boto3_client=client)
        return self._clients[("powertools", store)]

    def run(self, command: dict[str, Any]) -> dict[str, Any]:
        """Calls as ``command`` says; every attempt logged as (start, end, outcome, round trips)."""
        kind, circuit, store = command["kind"], command["circuit"], command.get("store", "main")
        pace_s = command.get("pace_s", 0.0)

        def calls(n: int, stop_when_refused: bool = False, until: float | None = None) -> list[Any]:
            log: list[Any] = []
            while (until is not None and time.time() < until) or (until is None and len(log) < n):
                start = time.time()
                outcome, trips = self.attempt(kind, circuit, store)
                log.append((start, time.time(), outcome, trips))
                if stop_when_refused and outcome == "refused":
                    break
                if pace_s:
                    time.sleep(pace_s)
            return log

        first = calls(command.get("calls", 0), command.get("stop_when_refused", False), command.get("until"))
        then = calls(command.get("then", 0))
        return {"log": first, "then": then, "openings": self.openings[f"{kind}:{circuit}"]}


def worker_main(urls: dict[str, str], prefix: str) -> None:
    logging.disable(logging.CRITICAL)  # every breaker logs its (expected) failures and openings
    worker = Worker(urls, prefix)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        print(json.dumps(worker.run(json.loads(line))), flush=True)


def store_main(port: int) -> None:
    """moto's server for Powertools' DynamoDB table, its conditional writes atomic; runs until stdin closes."""
    from moto.server import ThreadedMotoServer
    from sam_emulator.moto_patches import atomic_dynamodb_writes

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with atomic_dynamodb_writes():
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        print("ready", flush=True)
        sys.stdin.read()
        server.stop()


# ------------------------------------------------------------------------------------------ the bench


class Gateway:
    """The payment gateway's loopback stand-in: 200, 503 (``down``) or 200 after a delay; every request logged."""

    def __init__(self) -> None:
        self.mode, self.delay_s = "up", 0.0
        self.requests: list[tuple[float, float, int]] = []
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                start = time.time()
                status = 503 if gateway.mode == "down" else 200
                if status == 200 and gateway.delay_s:
                    time.sleep(gateway.delay_s)  # the stand-in's answer time, not a synchronisation
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                gateway.requests.append((start, time.time(), status))

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/cobros"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def set(self, mode: str, delay_s: float = 0.0) -> None:
        self.mode, self.delay_s = mode, delay_s
        self.requests = []


class Fleet:
    """The worker processes: a command goes to each (they run it concurrently), then every answer is read."""

    def __init__(self, urls: dict[str, str], prefix: str) -> None:
        args = [sys.executable, __file__, "--worker", json.dumps(urls), "--prefix", prefix]
        self.processes = [
            subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(PROCESSES)
        ]
        for process in self.processes:
            assert json.loads(process.stdout.readline()) == {"ready": True}  # type: ignore[union-attr]

    def send(self, command: dict[str, Any]) -> list[dict[str, Any]]:
        for process in self.processes:
            process.stdin.write(json.dumps(command) + "\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
        answers = [process.stdout.readline() for process in self.processes]  # type: ignore[union-attr]
        if not all(answers):
            raise RuntimeError("a worker died: its counts would be missing")
        return [json.loads(a) for a in answers]

    def close(self) -> None:
        for process in self.processes:
            process.stdin.close()  # type: ignore[union-attr]
            process.wait(60)


def _attempts(answers: list[dict[str, Any]], part: str = "log") -> list[tuple[float, float, str, int]]:
    return [tuple(a) for answer in answers for a in answer[part]]  # type: ignore[misc]


def _per_call(attempts: list[Any]) -> float:
    return sum(a[3] for a in attempts) / len(attempts) if attempts else float("nan")


def measure(kind: str, fleet: Fleet, gateway: Gateway, calls: int) -> dict[str, Any]:
    """Every measure of one breaker, on fresh circuits (each phase its own name, so phases do not mix)."""
    run = uuid.uuid4().hex[:6]
    m: dict[str, Any] = {}

    def send(circuit: str, **command: Any) -> list[dict[str, Any]]:
        return fleet.send({"kind": kind, "circuit": f"{circuit}-{run}", **command})

    gateway.set("up")
    healthy = _attempts(send("sano", calls=calls))
    m["rt_healthy"], m["healthy_ms"] = _per_call(healthy), _ms_per_call(healthy)

    # The outage: warm processes, then the gateway dies; each process calls until it is refused.
    send("caida", calls=WARM_CALLS)
    gateway.set("down")
    answers = send("caida", calls=100, stop_when_refused=True)
    tripping = _attempts(answers)
    m["rt_tripping"] = _per_call(tripping)
    m["dead_calls"] = sum(1 for r in gateway.requests if r[2] == 503)
    m["all_stopped"] = all(answer["log"][-1][2] == "refused" for answer in answers)
    m["announced"] = sum(answer["openings"] for answer in answers)
    opened_at = min(a[0] for a in tripping if a[2] == "refused")

    # Recovery, at the same moment of every breaker's open period (1 s after it opened): the gateway
    # answers again (in 200 ms); every process calls every 50 ms for 10 s.
    time.sleep(max(0.0, opened_at + RECOVER_AFTER_S - time.time()))  # the bench's schedule, not a synchronisation
    recovered_at = time.time()
    gateway.set("up", delay_s=PROBE_LATENCY_S)
    answers = send("caida", until=recovered_at + RECOVERY_WATCH_S, pace_s=PACE_S)
    m.update(_recovery(answers, recovered_at, opened_at))

    # Open: another outage, and 500 calls per process once each is refused.
    send("abierto", calls=1)
    gateway.set("down")
    answers = send("abierto", calls=100, stop_when_refused=True, then=calls)
    m["rt_open"] = _per_call([a for a in _attempts(answers, "then") if a[2] == "refused"])

    # Failures spread over the fleet: each process calls a dead gateway 4 times (fewer than the threshold).
    gateway.set("up")
    send("reparto", calls=1)
    gateway.set("down")
    answers = send("reparto", calls=THRESHOLD - 1)
    spread = _attempts(answers)
    m["spread_opens"] = any(a[2] == "refused" for a in spread) or sum(a["openings"] for a in answers) > 0
    m["spread_calls"] = sum(1 for a in spread if a[2] == "fail")

    # The store unreachable: a healthy gateway, then a dead one.
    gateway.set("up")
    down = _attempts(send("sin-almacen", store="dead", calls=DEAD_STORE_CALLS[kind]))
    m["dead_store_ms"] = _ms_per_call(down)
    m["dead_store_through"] = sum(1 for a in down if a[2] == "ok")
    m["dead_store_errors"] = sum(1 for a in down if a[2] == "error")
    m["dead_store_tried"] = len(down)
    gateway.set("down")
    store = "dead-fast" if kind == "powertools" else "dead"
    both = _attempts(send("sin-almacen-caida", store=store, calls=DEAD_STORE_DEAD_GATEWAY_CALLS))
    m["dead_store_dead_calls"] = sum(1 for a in both if a[2] == "fail")
    m["dead_store_dead_tried"] = len(both)
    return m


def _ms_per_call(attempts: list[Any]) -> float:
    return 1000 * sum(a[1] - a[0] for a in attempts) / len(attempts)


def _recovery(answers: list[dict[str, Any]], recovered_at: float, opened_at: float) -> dict[str, Any]:
    """Probes, time to closed, refusals after closing, round trips while half-open, from every process's log."""
    attempts = _attempts(answers)
    admitted = sorted((a for a in attempts if a[2] in ("ok", "fail")), key=lambda a: a[0])
    first_ok = min((a for a in attempts if a[2] == "ok"), key=lambda a: a[1], default=None)
    if first_ok is None:
        return {"probes": len(admitted), "closed_s": float("inf"), "all_calling_s": float("inf")}
    closed_at = first_ok[1]  # the first success (the probe that closed it) had returned: the breaker was closed
    probe_start = admitted[0][0]
    firsts = [min((a[0] for a in answer["log"] if a[2] == "ok"), default=float("inf")) for answer in answers]
    refused_out = [a for a in attempts if a[2] == "refused" and probe_start <= a[0] < closed_at]
    return {
        "probes": sum(1 for a in admitted if a[0] < closed_at),
        "open_period_s": probe_start - opened_at,
        "rt_probe": first_ok[3],
        "rt_half_open": _per_call(refused_out),
        "closed_s": closed_at - recovered_at,
        "all_calling_s": max(firsts) - recovered_at,
        "tail_s": max(firsts) - probe_start,
        "refused_after_close": sum(1 for a in attempts if a[2] == "refused" and a[0] > closed_at),
    }


ROWS: list[tuple[str, str, str]] = [
    # (key, label, format): "nD" a number, lower is better, with ratios; "iD" a number to explain others; "t" text
    ("rt_healthy", f"store round trips per call: healthy ({PROCESSES} x {{calls}} calls)", "n3"),
    ("rt_tripping", "  tripping (from the gateway's death until refused)", "n3"),
    ("rt_open", f"  open ({PROCESSES} x {{calls}} refused calls)", "n3"),
    ("rt_half_open", "  half-open: a call refused while the probe is out", "n3"),
    ("rt_probe", "  half-open: the probe call", "n0"),
    ("dead_calls", f"calls reaching a dead gateway before all {PROCESSES} stop", "n0"),
    ("announced", "openings announced for that one outage (metric, alarm)", "n0"),
    ("spread", f"failures spread: {THRESHOLD - 1} per process ({PROCESSES * (THRESHOLD - 1)} in all)", "t"),
    ("probes", f"probes when {PROCESSES} processes meet half-open", "n0"),
    ("open_period_s", "open period as observed: first refusal -> first probe (s)", "i2"),
    ("closed_s", "gateway recovered -> first probe closed it (s)", "n2"),
    ("all_calling_s", f"gateway recovered -> all {PROCESSES} processes calling again (s)", "n2"),
    ("tail_s", f"first probe -> all {PROCESSES} processes calling again (s)", "n2"),
    ("refused_after_close", "calls refused after the breaker had closed", "n0"),
    ("healthy_ms", "ms per guarded call, healthy (the gateway's time included)", "n2"),
    ("dead_store_ms", "store unreachable: ms per guarded call", "n1"),
    ("dead_store", "  calls let through / errors raised", "t"),
    ("dead_store_dead", "  dead gateway too: calls reaching it / tried", "t"),
]


def _cell(m: dict[str, Any], key: str, fmt: str) -> str:
    if key == "spread":
        return f"{'opens' if m['spread_opens'] else 'never opens'} ({m['spread_calls']} calls)"
    if key == "dead_store":
        return f"{m['dead_store_through']}/{m['dead_store_tried']}, {m['dead_store_errors']} errors"
    if key == "dead_store_dead":
        return f"{m['dead_store_dead_calls']}/{m['dead_store_dead_tried']}"
    value = m.get(key, float("nan"))
    return f"{value:.{fmt[1]}f}"


def _ratio(ours: Any, other: Any) -> str:
    """How many times ours' figure the other's is (lower is better: > 1 means ours is ahead)."""
    if not isinstance(ours, int | float) or not isinstance(other, int | float):
        return ""
    if ours == other:
        return "1.00x"
    return "inf x" if ours == 0 else f"{other / ours:.2f}x"


def report(results: dict[str, dict[str, Any]], calls: int) -> None:
    widths = (61, 24, 24, 24, 11, 11)
    head = ("measure", *(TITLES[k] for k in KINDS), "PT/ours", "pyb/ours")
    print("".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for key, label, fmt in ROWS:
        cells = [_cell(results[k], key, fmt) for k in KINDS]
        compared = fmt.startswith("n")  # "i": informational, "t": text
        ratios = [_ratio(results["ours"].get(key), results[k].get(key)) if compared else "" for k in KINDS[1:]]
        row = (label.format(calls=calls), *cells, *ratios)
        print("".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--calls", type=int, default=500, help="healthy and open calls per process")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--prefix", help=argparse.SUPPRESS)
    ap.add_argument("--store", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker_main(json.loads(a.worker), a.prefix)
        return 0
    if a.store:
        store_main(a.store)
        return 0
    from sam_emulator.moto_server import LOCAL_CREDENTIALS, free_port

    os.environ.update({**LOCAL_CREDENTIALS, "AWS_DEFAULT_REGION": REGION})
    port = free_port()
    store = subprocess.Popen(
        [sys.executable, __file__, "--store", str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    prefix = f"bench:{uuid.uuid4().hex[:8]}:"
    fleet = None
    try:
        assert store.stdout is not None and store.stdout.readline().strip() == "ready"
        _create_table(f"http://127.0.0.1:{port}")
        gateway = Gateway()
        urls = {
            "gateway": gateway.url,
            "redis": a.redis_url,
            "dead_redis": f"redis://127.0.0.1:{free_port()}/0",
            "store": f"http://127.0.0.1:{port}",
            "dead_store": f"http://127.0.0.1:{free_port()}",
        }
        fleet = Fleet(urls, prefix)
        results = {kind: measure(kind, fleet, gateway, a.calls) for kind in KINDS}
    finally:
        if fleet is not None:
            fleet.close()
        with contextlib.suppress(OSError):
            store.stdin.close()  # type: ignore[union-attr]
        store.wait(60)
        _clean(a.redis_url, prefix)
    report(results, a.calls)
    print(json.dumps(results))
    return 0


def _create_table(url: str) -> None:
    import boto3

    boto3.client("dynamodb", endpoint_url=url, region_name=REGION).create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def _clean(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        client.delete(key)


if __name__ == "__main__":
    sys.exit(main())
