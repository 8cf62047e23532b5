"""The ONE place that makes a local Lambda invocation die the way a real one does.

A thread cannot be killed, but a dead process is, from outside, simply one that does no more
I/O. So an invocation is *marked* dead (a planned crash, its ``Timeout`` passed) and the next
time it reaches an I/O boundary a :class:`~sam_emulator.platform_faults.ProcessKilled`
(a ``BaseException``: handler code catching ``Exception`` cannot swallow it) is raised in its
thread. From that point nothing of that invocation reaches DynamoDB, SQS, SNS, EventBridge or a
provider; its caller gets the platform's error instead of a result.

I/O boundaries (each has a name, e.g. ``before:dynamodb.PutItem``, ``after:http POST /cobros``):

- botocore: a ``before-send`` hook (``before:<service>.<Operation>``, every HTTP attempt) and an
  ``after-call`` hook (``after:...``, the answer parsed, before the caller sees it), both
  registered on boto3's *default session* — every client a handler builds comes from it (and
  :func:`sam_emulator.aws.client`'s). botocore copies a session's hooks into a client when the
  client is created, so :func:`install` runs before the handlers' cold starts.
- the HTTP client's urllib3: ``urllib3.PoolManager.urlopen`` (``before:http <METHOD> <path>``
  before the request leaves, ``after:http ...`` once the answer arrived: the provider has
  processed it, the handler never sees the answer). botocore sends through connection pools,
  not ``PoolManager.urlopen``, so an AWS call is never counted twice.

PostgreSQL and Redis calls are not boundaries: a dead invocation may still run pure code and
Redis/PostgreSQL calls up to its next AWS or HTTP call. The one PostgreSQL write that matters,
the outbox relay's commit, comes after ``PutEvents``: a crash at ``after:events.PutEvents``
leaves the transaction uncommitted (the connection rolls back), exactly what a killed relay does.

What AWS documents and this follows:

- Lambda developer guide, "Configure Lambda function timeout": past ``Timeout`` the invocation
  is stopped; the caller gets an error. Here the deadline is checked at every boundary and
  when the handler returns (a result returned after the deadline is discarded): the caller sees
  ``Sandbox.Timedout`` (Step Functions developer guide, "Error handling": error names), the
  handler's later writes never happen. ``Timeout`` is in real seconds (the handlers' own
  HTTP timeouts are), never compressed.
- Step Functions "Error handling": ``Lambda.Unknown`` when the function's process died without
  an error payload (a crash, out of memory).
- Lambda developer guide, "Configuring reserved concurrency" / "Lambda function scaling":
  beyond ``ReservedConcurrentExecutions`` an invocation is throttled (``TooManyRequestsException``,
  ``Lambda.TooManyRequestsException`` in Step Functions; the handler does not run).
- "Using Lambda with Amazon SQS": a batch whose invocation failed or was throttled is not
  deleted; it is received again after the visibility timeout (the mappings do this already:
  any exception fails the batch).
- A killed execution environment is replaced by a new one on AWS. So it is here when the
  function runs in worker processes (:mod:`sam_emulator.workers`, the local run's default): the
  plan is decided in this process, the boundaries are the worker's, and a dead worker exits (a
  worker past its ``Timeout`` is also killed from outside, even in pure code). In-process
  functions (``Function(isolated=False)``) keep their module state (warm caches, pools) across a death.

Use::

    control = death.CONTROL                  # one per process, reset by LocalRuntime
    control.set_plan(lambda inv: Cut(LambdaCrashed, where="after:http POST /cobros"))
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sam_emulator.platform_faults import LambdaThrottled, LambdaTimeout, PlatformFault, ProcessKilled

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@dataclass(frozen=True)
class Cut:
    """A planned death: ``failure`` at the ``en``-th boundary, or at the first boundary named like ``where``."""

    failure: type[PlatformFault]
    at: int | None = None  # 1-based boundary number
    where: str | None = None  # substring of a boundary name ("after:http POST /cobros")

    def hits(self, boundary: str, number: int) -> bool:
        if self.where is not None:
            return self.where in boundary
        return self.at is not None and number >= self.at


@dataclass(frozen=True)
class Throttle:
    """A planned throttle: the invocation is refused before the handler runs."""


@dataclass
class Invocation:
    """One running invocation: where it is, and whether it is dead."""

    function: str
    event: Any
    deadline: float  # time.monotonic() deadline (the function's Timeout)
    cut: Cut | None = None
    boundaries: list[str] = field(default_factory=list)
    dead: type[PlatformFault] | None = None
    died_at: str | None = None

    def boundary(self, name: str) -> None:
        """An I/O boundary: raise :class:`ProcessKilled` if the invocation is, or now becomes, dead."""
        if self.dead is None:
            self.boundaries.append(name)
            if time.monotonic() > self.deadline:
                self._die(LambdaTimeout, name)
            elif self.cut is not None and self.cut.hits(name, len(self.boundaries)):
                self._die(self.cut.failure, name)
        if self.dead is not None:
            raise ProcessKilled(self.dead, f"{self.function} died at {self.died_at}")

    def _die(self, failure: type[PlatformFault], name: str) -> None:
        self.dead, self.died_at = failure, name


@dataclass
class PlatformControl:
    """What the platform does to each invocation: the plan, reserved concurrency, and a record."""

    plan: Callable[[Invocation], Cut | Throttle | None] | None = None
    in_flight: Counter[str] = field(default_factory=Counter)
    throttled: Counter[str] = field(default_factory=Counter)
    deaths: list[tuple[str, str, str, Any]] = field(default_factory=list)  # (function, error, boundary, event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set_plan(self, plan: Callable[[Invocation], Cut | Throttle | None] | None) -> None:
        self.plan = plan

    def reset(self) -> None:
        with self._lock:
            self.plan = None
            self.in_flight.clear()
            self.throttled.clear()
            self.deaths.clear()

    @contextmanager
    def invocation(self, function: str, event: Any, timeout_s: float, reserved: int | None) -> Iterator[Invocation]:
        """Admit one invocation (or throttle it), make it current in this thread, account for its death."""
        inv = Invocation(function, event, time.monotonic() + timeout_s)
        decision = self.plan(inv) if self.plan is not None else None
        with self._lock:
            if isinstance(decision, Throttle) or (reserved is not None and self.in_flight[function] >= reserved):
                self.throttled[function] += 1
                raise LambdaThrottled(f"Rate Exceeded: {function} has no concurrency left (reserved {reserved})")
            self.in_flight[function] += 1
        inv.cut = decision if isinstance(decision, Cut) else None
        token = _CURRENT.set(inv)
        try:
            yield inv
        except ProcessKilled as death:
            self._note(inv)
            raise death.fault(str(death)) from None
        finally:
            _CURRENT.reset(token)
            with self._lock:
                self.in_flight[function] -= 1
        if inv.dead is None and time.monotonic() > inv.deadline:  # returned after its Timeout
            inv._die(LambdaTimeout, "fin")
        if inv.dead is not None:  # died, but the handler swallowed nothing it could: report the death
            self._note(inv)
            raise inv.dead(f"{function} died at {inv.died_at}")

    def _note(self, inv: Invocation) -> None:
        assert inv.dead is not None
        with self._lock:
            self.deaths.append((inv.function, inv.dead.error_type, inv.died_at or "?", inv.event))


CONTROL = PlatformControl()
_CURRENT: contextvars.ContextVar[Invocation | None] = contextvars.ContextVar("mf_invocacion", default=None)


def boundary(name: str) -> None:
    """Called at each I/O boundary by the hooks; a no-op outside a local invocation."""
    inv = _CURRENT.get()
    if inv is not None:
        inv.boundary(name)


# ---------------------------------------------------------------- the hooks
_ID_BEFORE = "sam-emulator-death-before"
_ID_AFTER = "sam-emulator-death-after"
_installed: dict[str, Any] = {}


def _before_send(event_name: str = "", **_: Any) -> None:
    boundary("before:" + ".".join(event_name.split(".")[1:3]))


def _after_call(event_name: str = "", **_: Any) -> None:
    boundary("after:" + ".".join(event_name.split(".")[1:3]))


def install() -> None:
    """Install the boundary hooks (idempotent). Run before any handler creates its clients."""
    import boto3
    import urllib3

    session = boto3._get_default_session()
    # unique_id makes registering twice a no-op; a replaced default session gets the hooks too
    session.events.register("before-send", _before_send, unique_id=_ID_BEFORE)
    session.events.register("after-call", _after_call, unique_id=_ID_AFTER)
    if _installed:
        return
    original = urllib3.PoolManager.urlopen

    def urlopen(self: Any, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:
        name = f"http {method} {urlsplit(url).path}"
        boundary(f"before:{name}")
        response = original(self, method, url, redirect, **kw)
        boundary(f"after:{name}")
        return response

    urllib3.PoolManager.urlopen = urlopen  # type: ignore[method-assign]
    _installed.update(session=session, urlopen=original)


def uninstall() -> None:
    import urllib3

    if not _installed:
        return
    session = _installed.pop("sesion")
    session.events.unregister("before-send", unique_id=_ID_BEFORE)
    session.events.unregister("after-call", unique_id=_ID_AFTER)
    urllib3.PoolManager.urlopen = _installed.pop("urlopen")  # type: ignore[method-assign]
