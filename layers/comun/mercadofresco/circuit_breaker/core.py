"""The circuit breaker callers use: ``with breaker.guard(): ...``, ``breaker.call(fn)`` or ``@breaker.protect``.

What a guarded call costs in Valkey round trips, per process (T = ``cache_max_age_s``, 1 s):

- **closed, healthy**: one per T, whatever the call rate. ``acquire`` answers from the state this
  process last read while that answer is younger than T. A success is not written: the process
  counts it and reports it with its next round trip, stamped with when it ended.
- **a failed call**: one, at once (op ``failure``), and its process asks again before its next call
  (its view is not trusted after its own failure). Failures are counted fleet-wide, so
  ``consecutive_failures`` failures across all processes open the breaker however they are spread,
  and the answer carries the state: the process whose call failed learns at once that it opened.
- **open**: one per T (fewer if the open period ends first; then the next call asks).
- **half-open**: never cached. The probe asks and reports (two round trips, once per cool-down); a
  process refused while the probe is out asks again with its next call, so once the probe has
  closed the breaker no process goes on refusing calls from a stale view.

The staleness this allows, and why the invariants hold under it (threshold 5)::

    time ------------------------------------------------------------------------------------------>
    A      read "closed" |---------- A trusts its view (< T) ----------| reads again: "open"
    B..H                     F  F  F  F  F <- the 5th failure written opens it; each answer carries the state
    A's calls inside its window are admitted: the first that fails is written, its answer says "open",
    and A stops there. A success proves nothing against an opening: it is only counted.

- A process may go on calling for up to T after another opened the breaker; at most **one** of
  those calls fails. A dead dependency gets at most ``consecutive_failures`` - 1 + one call per
  process (per thread with a call in flight, if a process calls from several), however the calls
  interleave: a process calls again only after an answer "closed", and only the first
  ``consecutive_failures`` - 1 failures get one.
- An operator's override (``mf-circuito``) reaches every process within T.
- A success reaches the fleet's count within T if its process keeps calling (a frozen or reclaimed
  process loses it), carrying the time it ended: a success from before an outage that arrives after
  the outage's failures does not reset their streak (``shared.lua``).
- T <= ``open_base_s`` (checked by :class:`BreakerConfig`): a view read before an opening has
  expired when the half-open period starts, so exactly one probe runs.
- An outcome counts only in the epoch (the state's generation) its call was admitted in: a slow
  call that ends after a transition changes nothing.

Every transition is announced once, by the process whose request made it: a log line, the metric
``CircuitoAbierto`` on each opening (the alarm reads it), then the ``on_transition`` hook.

Degraded mode: if Valkey errors or exceeds the client's socket timeout (tens of ms, see
``mercadofresco.valkey``), the call goes on under :class:`LocalBreaker` (< 1 ms), the metric
``EstadoCompartidoNoDisponible`` is emitted, and Valkey is tried again after ``shared_retry_s``.
"""

from __future__ import annotations

import functools
import itertools
import logging
import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mercadofresco.circuit_breaker.config import BreakerConfig
from mercadofresco.circuit_breaker.local import LocalBreaker
from mercadofresco.circuit_breaker.state import BreakerState, Decision, SharedStateUnavailableError, Transition
from mercadofresco.errors import CircuitoAbierto, PermanentError
from mercadofresco.metrics import CIRCUIT_OPEN, SHARED_STATE_UNAVAILABLE, as_metrics
from mercadofresco.valkey import KEY_PREFIX

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import redis

T = TypeVar("T")
logger = logging.getLogger("mercadofresco.circuit_breaker")
_ADMITTING = frozenset({BreakerState.CERRADO, BreakerState.FORZADO_CERRADO})
_LOG_MESSAGES = {
    BreakerState.SEMIABIERTO: "circuit half-open: one probe admitted",
    BreakerState.CERRADO: "circuit closed",
}


class Permit:
    """Leave to make one call; report its outcome with :meth:`success` / :meth:`failure` (``guard`` does it)."""

    __slots__ = ("_breaker", "epoch", "is_probe", "local", "recorded", "token")

    def __init__(self, breaker: CircuitBreaker, *, is_probe: bool, token: str, local: bool, epoch: int) -> None:
        self._breaker, self.is_probe, self.token, self.local, self.epoch = breaker, is_probe, token, local, epoch
        self.recorded = False

    def success(self) -> None:
        """The dependency answered (a business refusal counts: it is up)."""
        self._breaker._record(self, success=True)

    def failure(self) -> None:
        """The dependency failed (5xx, 429, timeout, reset...)."""
        self._breaker._record(self, success=False)


@dataclass(frozen=True, slots=True)
class _View:
    """The state this process last read, and until when (its local clock) it trusts it."""

    decision: Decision
    asked_at_s: float  # when the request left: the answer is at least this fresh
    valid_until_s: float


class _Successes:
    """Successes not yet reported: of one epoch (an older epoch's are dropped), how many, when the last ended."""

    __slots__ = ("count", "epoch", "last_s")

    def __init__(self) -> None:
        self.epoch, self.count, self.last_s = 0, 0, 0.0

    def add(self, epoch: int, now_s: float) -> None:
        if epoch != self.epoch:
            if self.count and epoch < self.epoch:
                return
            self.epoch, self.count = epoch, 0
        self.count += 1
        self.last_s = now_s

    def take(self, now_s: float) -> str:
        """``"epoch count age_us"`` for the script (empty when there are none), and forget them."""
        if not self.count:
            return ""
        report = f"{self.epoch} {self.count} {max(0, int((now_s - self.last_s) * 1_000_000))}"
        self.count = 0
        return report


class CircuitBreaker:
    """A breaker for one dependency, shared by every process through Valkey.

    Parameters
    ----------
    dependency:
        ``pasarela``, ``erp``, ``correo-principal``...: one breaker (one key) per dependency.
    redis_client:
        From :func:`mercadofresco.valkey.valkey_client` (short socket timeouts), or ``None``
        for a process-local breaker only.
    config:
        Thresholds, durations and the cache's age, :class:`BreakerConfig` defaults otherwise.
    metrics:
        A :class:`~mercadofresco.metrics.MetricsSink`, a Powertools ``Metrics``
        (its namespace is used) or ``None`` (Powertools EMF in ``MercadoFresco/Tienda``).
    prefix:
        Key prefix; the key is ``{prefix}circuito:{dependency}``.
    clock:
        Seconds since the epoch, for tests: the script's time and this process's cache age both
        follow it. ``None``: Valkey's ``TIME`` decides (one clock for every Lambda) and the cache
        and the degraded mode use ``time.monotonic``.
    on_transition:
        Called with a :class:`Transition` after each change this process made (opened, half-open,
        closed), after the log line and the ``CircuitoAbierto`` metric; what it raises is logged
        and ignored (Powertools' ``on_transition``).

    Raises
    ------
    mercadofresco.errors.CircuitoAbierto
        From :meth:`guard`/:meth:`call`/:meth:`protect` when open: the dependency is not called.

    Examples
    --------
    >>> breaker = CircuitBreaker("pasarela", None)
    >>> breaker.call(lambda: "ok")
    'ok'
    """

    def __init__(
        self,
        dependency: str,
        redis_client: redis.Redis | None,
        *,
        config: BreakerConfig | None = None,
        metrics: Any = None,
        prefix: str = KEY_PREFIX,
        clock: Callable[[], float] | None = None,
        on_transition: Callable[[Transition], object] | None = None,
    ) -> None:
        self.dependency = dependency
        self.config = config or BreakerConfig()
        self.key = f"{prefix}circuito:{dependency}"
        self._metrics = as_metrics(metrics)
        self._on_transition = on_transition
        self._clock = clock
        self._local_clock = clock or time.monotonic
        self._local = LocalBreaker(self.config, self._local_clock)
        self._shared = None
        if redis_client is not None:
            from mercadofresco.circuit_breaker.shared import SharedBreakerState  # imports redis

            self._shared = SharedBreakerState(self.key, redis_client, self.config)
        self._lock = threading.Lock()
        self._view: _View | None = None
        self._successes = _Successes()
        # Probe tokens: unique per process (random base) and per call (a counter, whose next() is atomic
        # under the GIL, unlike a generator's); no syscall per call.
        self._token_base, self._counter = secrets.token_hex(6), itertools.count()
        self._degraded_until_s: float | None = None  # set while Valkey is considered unavailable

    @contextmanager
    def guard(self) -> Iterator[Permit]:
        """Admit one call or raise :class:`CircuitoAbierto`; record how the block ended.

        An exception out of the block is a failure, except :class:`PermanentError` (the
        dependency answered, with a no). Call ``permit.failure()`` inside to record a failure
        the block does not raise (a 503 response returned as a value).
        """
        permit = self.acquire()
        with self._outcome_of(permit):
            yield permit

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` under :meth:`guard`."""
        with self.guard():
            return fn(*args, **kwargs)

    def protect(self, fn: Callable[..., T] | None = None, *, on_circuit_open: Callable[..., T] | None = None) -> Any:
        """Decorator: ``@breaker.protect`` or ``@breaker.protect(on_circuit_open=plan)``.

        While open the function is not called: ``plan(*args, **kwargs, circuit=error)`` answers
        instead (the caller's open-circuit plan: a fallback provider, a deferral), with the
        :class:`CircuitoAbierto` it would have raised (``error.retry_in_s``); without a plan that
        error is raised. As Powertools' ``@circuit_breaker(on_circuit_open=...)``.

        Examples
        --------
        >>> breaker = CircuitBreaker("correo-principal", None)
        >>> def by_secondary(correo, *, circuit):
        ...     return f"secundario: {correo}"
        >>> @breaker.protect(on_circuit_open=by_secondary)
        ... def send(correo):
        ...     return f"principal: {correo}"
        >>> send("pedido confirmado")
        'principal: pedido confirmado'
        """

        def decorate(function: Callable[..., T]) -> Callable[..., T]:
            @functools.wraps(function)
            def protected(*args: Any, **kwargs: Any) -> T:
                try:
                    permit = self.acquire()
                except CircuitoAbierto as error:
                    if on_circuit_open is None:
                        raise
                    return on_circuit_open(*args, **kwargs, circuit=error)
                with self._outcome_of(permit):
                    return function(*args, **kwargs)

            return protected

        return decorate if fn is None else decorate(fn)

    def acquire(self) -> Permit:
        """Ask leave for one call: from this process's view while it is fresh, else one round trip."""
        if self._uses_shared():
            now_s = self._local_clock()
            view = self._fresh_view(now_s)
            if view is not None:
                return self._permit(view.decision, now_s - view.asked_at_s, local=False)
            token = f"{self._token_base}-{next(self._counter)}"
            try:
                decision = self._execute("acquire", value=token)
            except SharedStateUnavailableError as exc:
                self._degrade(exc)
            else:
                return self._permit(decision, 0.0, token=token if decision.is_probe else "", local=False)
        decision = self._local.acquire()
        if decision.is_probe:
            self._announce(self._local_transition(BreakerState.ABIERTO, BreakerState.SEMIABIERTO, ""))
        return self._permit(decision, 0.0, local=True)

    def state(self) -> Decision:
        """The current state, read now (reporting pending successes first); degraded: the local breaker's."""
        if self._uses_shared():
            try:
                return self._execute("read")
            except SharedStateUnavailableError as exc:
                self._degrade(exc)
        return self._local.snapshot()

    def shared_state(self) -> Decision:
        """The state as Valkey holds it, for operators: never the local fallback.

        Raises
        ------
        SharedStateUnavailableError
            Valkey did not answer (nothing was read or changed).
        ValueError
            This breaker has no Valkey client.
        """
        if self._shared is None:
            raise ValueError("reading the shared state needs a Valkey client")
        return self._execute("read")

    def flush(self) -> None:
        """Report pending successes now (e.g. at the end of an invocation)."""
        with self._lock:
            if not self._successes.count:
                return
        self.state()

    def force(self, mode: Literal["abierto", "cerrado", ""]) -> Decision:
        """Operator override: ``abierto``/``cerrado`` until ``""`` (back to automatic, reset to closed).

        Every process sees it within ``cache_max_age_s``. Raises :class:`SharedStateUnavailableError`
        when Valkey does not answer (nothing changed).
        """
        if self._shared is None:
            raise ValueError("forcing needs the shared state: this breaker has no Valkey client")
        return self._execute("force", value=mode)

    @contextmanager
    def _outcome_of(self, permit: Permit) -> Iterator[None]:
        """Record how the guarded block ended (see :meth:`guard`)."""
        try:
            yield
        except PermanentError:
            permit.success()
            raise
        except BaseException:
            permit.failure()
            raise
        permit.success()

    def _execute(self, op: str, *, value: str = "") -> Decision:
        """One round trip: report pending successes, run ``op``, remember the answer, announce a transition."""
        asked_at_s = self._local_clock()
        with self._lock:
            successes = self._successes.take(asked_at_s)
        assert self._shared is not None
        now_s = None if self._clock is None else self._clock()  # None: the script reads the server's TIME
        decision = self._shared.execute(op, now_s=now_s, successes=successes, value=value)
        if self._degraded_until_s is not None:
            self._degraded_until_s = None
            logger.info("circuit breaker shared state available again", extra={"dependencia": self.dependency})
        self._remember(op, decision, asked_at_s)
        if decision.transition is not None:
            self._announce(self._shared_transition(decision))
        return decision

    def _remember(self, op: str, decision: Decision, asked_at_s: float) -> None:
        """Keep the answer as this process's view, for as long as the cache allows in that state."""
        if decision.state is BreakerState.SEMIABIERTO:
            trust_s = 0.0  # the probe's outcome may close it any moment: ask every time
        elif op == "failure" and decision.state is BreakerState.CERRADO:
            trust_s = 0.0  # this process has just failed: other processes' failures may open it any moment
        elif decision.state is BreakerState.ABIERTO:
            trust_s = min(self.config.cache_max_age_s, max(0.0, (decision.open_until_ms - decision.now_ms) / 1000))
        else:
            trust_s = self.config.cache_max_age_s
        # What the view answers the next calls: admitted while closed, refused while open; never a probe.
        seen = replace(decision, admitted=decision.state in _ADMITTING, is_probe=False, open_reason="", transition=None)
        with self._lock:
            # Two threads' answers may arrive out of order: keep the one whose request left last.
            if self._view is None or asked_at_s >= self._view.asked_at_s:
                self._view = _View(seen, asked_at_s, asked_at_s + trust_s)

    def _fresh_view(self, now_s: float) -> _View | None:
        view = self._view
        return view if view is not None and now_s < view.valid_until_s else None

    def _permit(self, decision: Decision, age_s: float, *, local: bool, token: str = "") -> Permit:
        if not decision.admitted:
            wait_s = max(0.0, (decision.open_until_ms - decision.now_ms) / 1000 - age_s)
            raise CircuitoAbierto(
                f"circuit '{self.dependency}' is {decision.state.value}: not calling; retry in {wait_s:.0f} s",
                dependency=self.dependency,
                retry_in_s=wait_s,
            )
        return Permit(self, is_probe=decision.is_probe, token=token, local=local, epoch=decision.epoch)

    def _record(self, permit: Permit, *, success: bool) -> None:
        if permit.recorded:
            return
        permit.recorded = True
        if permit.local:
            self._record_local(permit, success)
            return
        if success and not permit.is_probe:
            with self._lock:
                self._successes.add(permit.epoch, self._local_clock())
            return
        if permit.is_probe:
            op, value = "probe", f"{permit.token} {'E' if success else 'F'}"
        else:
            op, value = "failure", str(permit.epoch)
        try:
            self._execute(op, value=value)
        except SharedStateUnavailableError as exc:
            self._degrade(exc)  # a probe's reservation expires on its own: nothing is wedged

    def _record_local(self, permit: Permit, success: bool) -> None:
        reason = self._local.record(success, is_probe=permit.is_probe)
        source = BreakerState.SEMIABIERTO if permit.is_probe else BreakerState.CERRADO
        if reason:
            self._announce(self._local_transition(source, BreakerState.ABIERTO, reason))
        elif permit.is_probe and success:
            self._announce(self._local_transition(source, BreakerState.CERRADO, ""))

    def _uses_shared(self) -> bool:
        if self._shared is None:
            return False
        return self._degraded_until_s is None or self._local_clock() >= self._degraded_until_s

    def _degrade(self, exc: Exception) -> None:
        self._degraded_until_s = self._local_clock() + self.config.shared_retry_s
        with self._lock:
            self._view = None  # when Valkey answers again, the first call reads it afresh
        logger.warning(
            "circuit breaker shared state unavailable: process-local breaker in use",
            extra={
                "dependencia": self.dependency,
                "error": str(exc),
                "reintento_s": self.config.shared_retry_s,
            },
        )
        self._metrics.count(SHARED_STATE_UNAVAILABLE, self.dependency)

    def _shared_transition(self, decision: Decision) -> Transition:
        to_state = decision.transition
        assert to_state is not None
        source = {
            BreakerState.ABIERTO: BreakerState.SEMIABIERTO
            if decision.open_reason == "sonda_fallida"
            else BreakerState.CERRADO,
            BreakerState.SEMIABIERTO: BreakerState.ABIERTO,
            BreakerState.CERRADO: BreakerState.SEMIABIERTO,
        }[to_state]
        return Transition(
            self.dependency, source, to_state, decision.open_reason, decision.openings, decision.open_until_ms, True
        )

    def _local_transition(self, source: BreakerState, to_state: BreakerState, reason: str) -> Transition:
        snapshot = self._local.snapshot()
        return Transition(self.dependency, source, to_state, reason, snapshot.openings, snapshot.open_until_ms, False)

    def _announce(self, transition: Transition) -> None:
        """Log it, count an opening in ``CircuitoAbierto`` (the alarm), then run the caller's hook."""
        extra = {"dependencia": self.dependency, "compartido": transition.shared}
        if transition.to_state is BreakerState.ABIERTO:
            logger.warning(
                "circuit opened",
                extra={
                    **extra,
                    "motivo": transition.reason,
                    "aperturas": transition.openings,
                    "abierto_hasta_ms": transition.open_until_ms,
                },
            )
            self._metrics.count(CIRCUIT_OPEN, self.dependency)
        else:
            logger.info(_LOG_MESSAGES[transition.to_state], extra=extra)
        if self._on_transition is None:
            return
        try:
            self._on_transition(transition)
        except Exception:
            logger.warning("on_transition hook raised: ignored", exc_info=True, extra=extra)
