"""The one place a function calls an external provider over HTTP (gateway, ERP, e-mail).

One attempt = one guarded call: the shared breaker admits it (or raises ``CircuitoAbierto``
with no network call), urllib3 sends it with explicit connect/read timeouts and no retries of
its own, the outcome is classified by :func:`mercadofresco.retry.classify` and recorded in the
breaker. Transient outcomes are retried by *this* loop only: at most ``retry.max_attempts``
attempts (:data:`~mercadofresco.retry.MAX_ATTEMPTS_HTTP` = 2 by default, because the workflow's
``Retry`` governs the charge), full-jitter waits, ``Retry-After`` honoured for 429/503 within a
bound, and the dependency's retry budget asked before every retry.

Outcomes
--------
- 2xx/3xx and 4xx other than 429: returned as :class:`ProviderResponse` (``status``, ``body``). A 4xx is
  the provider's business answer (402 ``{"motivo": "fondos insuficientes"}``): the caller maps it.
- 5xx, 429, refused, reset, connect timeout, or a read timeout with ``idempotent=True``:
  retried; when attempts, budget or ``Retry-After`` bound run out, ``unavailable_error``.
- Read timeout with ``idempotent=False``: :class:`~mercadofresco.errors.ResultadoDesconocido`,
  never retried (the provider may have acted).
"""

from __future__ import annotations

import json
import logging
import random
import time
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote

import urllib3

from mercadofresco.errors import DependencyUnavailableError, PresupuestoReintentosAgotado, ResultadoDesconocido
from mercadofresco.metrics import PROVIDER_LATENCY, RETRIES, as_metrics
from mercadofresco.retry.backoff import retry_after_s
from mercadofresco.retry.classification import Classification, classify
from mercadofresco.retry.policy import RetryPolicy

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco.circuit_breaker.core import CircuitBreaker, Permit
    from mercadofresco.http.auth import RequestAuth
    from mercadofresco.retry.budget import RetryBudget

logger = logging.getLogger("mercadofresco.http")
BODY_TEXT_MAX_CHARS = 1000  # characters of a non-JSON body kept for the caller's log
# Why a retry was refused (the log's ``motivo`` and the error message).
REASON_ATTEMPTS_EXHAUSTED = "attempts exhausted"
REASON_RETRY_AFTER_TOO_LONG = "Retry-After above the limit"
REASON_BUDGET_EXHAUSTED = "retry budget exhausted"


class ProviderResponse(NamedTuple):
    """A provider's answer: ``status, body = client.post(...)``."""

    status: int
    body: dict[str, Any]


class _Attempt(NamedTuple):
    classification: Classification
    response: ProviderResponse | None
    retry_after_s: float | None
    error: BaseException | None
    detail: str


class ProviderClient:
    """HTTP client for one provider, with the project's retry, budget and breaker discipline.

    Parameters
    ----------
    dependency:
        Breaker/budget/metric name (``pasarela``, ``erp``, ``correo-principal``).
    base_url:
        ``https://pasarela.example`` (paths passed to :meth:`post` are appended).
    breaker, budget:
        The dependency's shared :class:`CircuitBreaker` and :class:`RetryBudget` (``None``: none).
    retry:
        Attempts and waits; :class:`RetryPolicy` defaults (2 attempts) otherwise.
    connect_timeout_s, read_timeout_s:
        urllib3 ``Timeout``; their sum also bounds one whole attempt.
    unavailable_error:
        The :class:`TransientError` subclass raised when attempts run out
        (``PasarelaNoDisponible`` for the gateway): the state machine matches it by name.
    rng, sleep:
        Injected for tests (a seeded ``random.Random``; a sleep that records instead of waiting).
    auth:
        How each attempt is authenticated (:mod:`mercadofresco.http.auth`: an API key, a SigV4
        signature); ``None``: the request goes as it is.

    Examples
    --------
    >>> client = ProviderClient(dependency="pasarela", base_url="https://pasarela.example")
    >>> status, body = client.post("/cobros", json={"importe": 4820}, idempotency_key="cobro:PED-1",
    ...                               idempotent=True)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        dependency: str,
        base_url: str,
        breaker: CircuitBreaker | None = None,
        retry: RetryPolicy | None = None,
        budget: RetryBudget | None = None,
        connect_timeout_s: float = 2.0,
        read_timeout_s: float = 10.0,
        unavailable_error: type[DependencyUnavailableError] = DependencyUnavailableError,
        metrics: Any = None,
        headers: dict[str, str] | None = None,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] = time.sleep,
        auth: RequestAuth | None = None,
    ) -> None:
        self.dependency = dependency
        self.base_url = base_url.rstrip("/")
        self.breaker, self.budget = breaker, budget
        self.retry = retry or RetryPolicy()
        self.unavailable_error = unavailable_error
        self._metrics = as_metrics(metrics)
        self._rng, self._sleep = rng or random.Random(), sleep
        self._timeout = urllib3.Timeout(
            connect=connect_timeout_s, read=read_timeout_s, total=connect_timeout_s + read_timeout_s
        )
        # Kept here, not as the pool's default headers: urllib3 *replaces* a pool's defaults
        # with any per-request headers, and every idempotent call sends its own key.
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        self._pool = urllib3.PoolManager(retries=False, timeout=self._timeout)
        self._auth = auth

    def post(
        self, path: str, *, json: Any = None, idempotency_key: str | None = None, idempotent: bool = False
    ) -> ProviderResponse:
        """POST ``json`` to ``path``; ``idempotent`` says whether a read timeout may be retried."""
        return self.request("POST", path, json=json, idempotency_key=idempotency_key, idempotent=idempotent)

    def get(self, path: str) -> ProviderResponse:
        """GET ``path`` (a read: always idempotent)."""
        return self.request("GET", path, idempotent=True)

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        idempotency_key: str | None = None,
        idempotent: bool = False,
    ) -> ProviderResponse:
        """Send with retries as the module docstring describes."""
        body = None if json is None else _json_bytes(json)
        if idempotency_key:
            headers = {**self._headers, "Idempotency-Key": idempotency_key_header(idempotency_key)}
        else:
            headers = self._headers
        # Only what reaches the provider counts: a call or a retry the open circuit refuses
        # (CircuitoAbierto propagates from _attempt) neither feeds the budget nor counts as a
        # retry, or an outage would fill the budget exactly while the provider is down.
        attempt = self._attempt(method, path, body, headers, idempotent)
        if self.budget is not None:
            self.budget.record_call()
        retries, reason = 0, ""
        while attempt.classification.retryable:
            wait_s, reason = self._wait_before_retry(retries, attempt)
            if wait_s is None:
                break
            self._sleep(wait_s)
            retries += 1
            attempt = self._attempt(method, path, body, headers, idempotent)
            self._metrics.count(RETRIES, self.dependency)
        return self._result(attempt, retries + 1, reason)

    def _wait_before_retry(self, retries: int, attempt: _Attempt) -> tuple[float | None, str]:
        """Seconds to wait before another attempt, or ``None`` and why not (attempts, Retry-After, budget)."""
        if not self.retry.has_attempt_left(retries):
            return None, REASON_ATTEMPTS_EXHAUSTED
        wait_s = self.retry.delay_s(retries, attempt.classification, attempt.retry_after_s, self._rng)
        reason = REASON_RETRY_AFTER_TOO_LONG if wait_s is None else ""
        if wait_s is not None and self.budget is not None and not self.budget.allow_retry():
            wait_s, reason = None, REASON_BUDGET_EXHAUSTED
        extra = {"dependencia": self.dependency, "intento": retries + 1, "detalle": attempt.detail}
        if wait_s is None:
            logger.warning("provider retry refused", extra={**extra, "motivo": reason})
        else:
            logger.info("provider retry", extra={**extra, "espera_s": round(wait_s, 3)})
        return wait_s, reason

    def _attempt(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str], idempotent: bool
    ) -> _Attempt:
        """One attempt under the breaker (``CircuitoAbierto`` propagates: nothing was sent)."""
        permit = self.breaker.acquire() if self.breaker is not None else None
        url = self.base_url + path
        if self._auth is not None:  # per attempt: a signature carries its time
            headers = self._auth.headers(method, url, headers, body)
        start = time.monotonic()
        try:
            response = self._pool.request(method, url, body=body, headers=headers, redirect=False)
        except Exception as exc:
            self._measure(start)
            classification = classify(exc, idempotent=idempotent)
            _record_outcome(permit, failed=classification is not Classification.PERMANENT)
            if classification is Classification.PERMANENT:
                raise  # not a provider failure (a bad URL, our bug): surface it as it is
            return _Attempt(classification, None, None, exc, f"{type(exc).__name__}: {exc}")
        self._measure(start)
        classification = classify(response.status)
        _record_outcome(permit, failed=classification.retryable)
        wait_s = retry_after_s(response.headers.get("Retry-After")) if response.status in (429, 503) else None
        return _Attempt(
            classification,
            ProviderResponse(response.status, body_of(response.data)),
            wait_s,
            None,
            f"HTTP {response.status}",
        )

    def _measure(self, start: float) -> None:
        """Latency of one attempt (a timeout counts as its full wait): the provider's p99 alarm reads it."""
        self._metrics.measure_ms(PROVIDER_LATENCY, self.dependency, round((time.monotonic() - start) * 1000, 1))

    def _result(self, attempt: _Attempt, attempts: int, reason: str) -> ProviderResponse:
        if attempt.classification is Classification.UNKNOWN_OUTCOME:
            raise ResultadoDesconocido(
                f"{self.dependency}: no answer in time to a non-idempotent operation ({attempt.detail}); "
                "it may have happened: reconcile before repeating it"
            ) from attempt.error
        if not attempt.classification.retryable:
            assert attempt.response is not None
            return attempt.response
        # The budget's refusal has its own name in the workflow's contract; any other end is "unavailable".
        error_type = PresupuestoReintentosAgotado if reason == REASON_BUDGET_EXHAUSTED else self.unavailable_error
        error = error_type(
            f"{self.dependency} unavailable after {attempts} attempt(s) ({reason}); last: {attempt.detail}",
            dependency=self.dependency,
            attempts=attempts,
            last_outcome=attempt.detail,
        )
        raise error from attempt.error


# Printable ASCII travels as it is, except "%", which marks an escape: so the encoding is
# injective (two different keys never become the same header, e.g. "Ñ" and a literal "%C3%91").
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")


def idempotency_key_header(key: str) -> str:
    """The ``Idempotency-Key`` header value for ``key``: ASCII, the same on every attempt and redelivery.

    HTTP header values are bytes that urllib3 writes as Latin-1: a key with "ñ" would reach the
    provider as another byte string than our record holds, and one with "€" or "日" would make the
    request raise. Keys are therefore percent-encoded as UTF-8 (RFC 3986), which changes nothing for
    the plain ASCII keys the builders produce from the domain (``cobro:PED-2026-084417``). A string
    that is not text (a lone surrogate) is refused with ``ValueError`` before any call is made; the
    key builders (:mod:`mercadofresco.dominio.claves`) already refuse such parts.
    """
    try:
        return quote(key, safe=_HEADER_SAFE, encoding="utf-8", errors="strict")
    except UnicodeEncodeError as exc:
        raise ValueError("Idempotency-Key is not encodable text (lone surrogate): refused before any call") from exc


def _record_outcome(permit: Permit | None, *, failed: bool) -> None:
    if permit is not None:
        permit.failure() if failed else permit.success()


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def body_of(data: bytes) -> dict[str, Any]:
    """The body as a dict: JSON objects as they are, anything else wrapped so the caller can log it."""
    if not data:
        return {}
    try:
        value = json.loads(data)
    except ValueError:
        return {"texto": data[:BODY_TEXT_MAX_CHARS].decode("utf-8", "replace")}
    return value if isinstance(value, dict) else {"datos": value}
