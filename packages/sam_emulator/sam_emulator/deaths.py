"""The ONE place that makes a local Lambda invocation die the way a real one does.

A thread cannot be killed, but a dead process is, from outside, simply one that does no more
I/O. So an invocation is *marked* dead (a planned crash, its ``Timeout`` passed) and the next
time it reaches an I/O boundary a :class:`~sam_emulator.platform_faults.ProcessKilled`
(a ``BaseException``: handler code catching ``Exception`` cannot swallow it) is raised in its
thread. From that point nothing of that invocation reaches DynamoDB, SQS, SNS, EventBridge or a
provider; its caller gets the platform's error instead of a result.

I/O boundaries (each has a name, e.g. ``antes:dynamodb.PutItem``, ``despues:http POST /cobros``):

- botocore: a ``before-send`` hook (``antes:<service>.<Operation>``, every HTTP attempt) and an
  ``after-call`` hook (``despues:...``, the answer parsed, before the caller sees it), both
  registered on boto3's *default session* — every client a handler builds comes from it (and
  :func:`sam_emulator.aws.client`'s). botocore copies a session's hooks into a client when the
  client is created, so :func:`instalar` runs before the handlers' cold starts.
- the HTTP client's urllib3: ``urllib3.PoolManager.urlopen`` (``antes:http <METHOD> <path>``
  before the request leaves, ``despues:http ...`` once the answer arrived: the provider has
  processed it, the handler never sees the answer). botocore sends through connection pools,
  not ``PoolManager.urlopen``, so an AWS call is never counted twice.

PostgreSQL and Redis calls are not boundaries: a dead invocation may still run pure code and
Redis/PostgreSQL calls up to its next AWS or HTTP call. The one PostgreSQL write that matters,
the outbox relay's commit, comes after ``PutEvents``: a crash at ``despues:events.PutEvents``
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
  function runs in worker processes (:mod:`sam_emulator.workers`; ``SAM_EMULATOR_WORKERS=1`` for the local run): the
  plan is decided in this process, the boundaries are the worker's, and a dead worker exits (a
  worker past its ``Timeout`` is also killed from outside, even in pure code). In-process
  functions (``Funcion(isolated=False)``) keep their module state (warm caches, pools) across a death.

Use::

    control = muerte.CONTROL                  # one per process, reset by RuntimeLocal
    control.planificar(lambda inv: Corte(LambdaCrashed, donde="despues:http POST /cobros"))
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
class Corte:
    """A planned death: ``fallo`` at the ``en``-th boundary, or at the first boundary named like ``donde``."""

    fallo: type[PlatformFault]
    en: int | None = None  # 1-based boundary number
    donde: str | None = None  # substring of a boundary name ("despues:http POST /cobros")

    def toca(self, frontera: str, numero: int) -> bool:
        if self.donde is not None:
            return self.donde in frontera
        return self.en is not None and numero >= self.en


@dataclass(frozen=True)
class Estrangular:
    """A planned throttle: the invocation is refused before the handler runs."""


@dataclass
class Invocacion:
    """One running invocation: where it is, and whether it is dead."""

    funcion: str
    evento: Any
    plazo: float  # time.monotonic() deadline (the function's Timeout)
    corte: Corte | None = None
    fronteras: list[str] = field(default_factory=list)
    muerta: type[PlatformFault] | None = None
    donde_murio: str | None = None

    def frontera(self, nombre: str) -> None:
        """An I/O boundary: raise :class:`ProcessKilled` if the invocation is, or now becomes, dead."""
        if self.muerta is None:
            self.fronteras.append(nombre)
            if time.monotonic() > self.plazo:
                self._morir(LambdaTimeout, nombre)
            elif self.corte is not None and self.corte.toca(nombre, len(self.fronteras)):
                self._morir(self.corte.fallo, nombre)
        if self.muerta is not None:
            raise ProcessKilled(self.muerta, f"{self.funcion} died at {self.donde_murio}")

    def _morir(self, fallo: type[PlatformFault], nombre: str) -> None:
        self.muerta, self.donde_murio = fallo, nombre


@dataclass
class ControlPlataforma:
    """What the platform does to each invocation: the plan, reserved concurrency, and a record."""

    plan: Callable[[Invocacion], Corte | Estrangular | None] | None = None
    en_vuelo: Counter[str] = field(default_factory=Counter)
    estrangulados: Counter[str] = field(default_factory=Counter)
    muertes: list[tuple[str, str, str, Any]] = field(default_factory=list)  # (funcion, error, boundary, event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def planificar(self, plan: Callable[[Invocacion], Corte | Estrangular | None] | None) -> None:
        self.plan = plan

    def reiniciar(self) -> None:
        with self._lock:
            self.plan = None
            self.en_vuelo.clear()
            self.estrangulados.clear()
            self.muertes.clear()

    @contextmanager
    def invocacion(self, funcion: str, evento: Any, timeout_s: float, reservada: int | None) -> Iterator[Invocacion]:
        """Admit one invocation (or throttle it), make it current in this thread, account for its death."""
        inv = Invocacion(funcion, evento, time.monotonic() + timeout_s)
        decision = self.plan(inv) if self.plan is not None else None
        with self._lock:
            if isinstance(decision, Estrangular) or (reservada is not None and self.en_vuelo[funcion] >= reservada):
                self.estrangulados[funcion] += 1
                raise LambdaThrottled(f"Rate Exceeded: {funcion} has no concurrency left (reserved {reservada})")
            self.en_vuelo[funcion] += 1
        inv.corte = decision if isinstance(decision, Corte) else None
        token = _ACTUAL.set(inv)
        try:
            yield inv
        except ProcessKilled as muerte:
            self._anotar(inv)
            raise muerte.fault(str(muerte)) from None
        finally:
            _ACTUAL.reset(token)
            with self._lock:
                self.en_vuelo[funcion] -= 1
        if inv.muerta is None and time.monotonic() > inv.plazo:  # returned after its Timeout
            inv._morir(LambdaTimeout, "fin")
        if inv.muerta is not None:  # died, but the handler swallowed nothing it could: report the death
            self._anotar(inv)
            raise inv.muerta(f"{funcion} died at {inv.donde_murio}")

    def _anotar(self, inv: Invocacion) -> None:
        assert inv.muerta is not None
        with self._lock:
            self.muertes.append((inv.funcion, inv.muerta.error_type, inv.donde_murio or "?", inv.evento))


CONTROL = ControlPlataforma()
_ACTUAL: contextvars.ContextVar[Invocacion | None] = contextvars.ContextVar("mf_invocacion", default=None)


def frontera(nombre: str) -> None:
    """Called at each I/O boundary by the hooks; a no-op outside a local invocation."""
    inv = _ACTUAL.get()
    if inv is not None:
        inv.frontera(nombre)


# ---------------------------------------------------------------- the hooks
_ID_ANTES = "sam-emulator-death-antes"
_ID_DESPUES = "sam-emulator-death-despues"
_instalado: dict[str, Any] = {}


def _antes_de_enviar(event_name: str = "", **_: Any) -> None:
    frontera("antes:" + ".".join(event_name.split(".")[1:3]))


def _despues_de_llamar(event_name: str = "", **_: Any) -> None:
    frontera("despues:" + ".".join(event_name.split(".")[1:3]))


def instalar() -> None:
    """Install the boundary hooks (idempotent). Run before any handler creates its clients."""
    import boto3
    import urllib3

    sesion = boto3._get_default_session()
    # unique_id makes registering twice a no-op; a replaced default session gets the hooks too
    sesion.events.register("before-send", _antes_de_enviar, unique_id=_ID_ANTES)
    sesion.events.register("after-call", _despues_de_llamar, unique_id=_ID_DESPUES)
    if _instalado:
        return
    original = urllib3.PoolManager.urlopen

    def urlopen(self: Any, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:
        nombre = f"http {method} {urlsplit(url).path}"
        frontera(f"antes:{nombre}")
        respuesta = original(self, method, url, redirect, **kw)
        frontera(f"despues:{nombre}")
        return respuesta

    urllib3.PoolManager.urlopen = urlopen  # type: ignore[method-assign]
    _instalado.update(sesion=sesion, urlopen=original)


def desinstalar() -> None:
    import urllib3

    if not _instalado:
        return
    sesion = _instalado.pop("sesion")
    sesion.events.unregister("before-send", unique_id=_ID_ANTES)
    sesion.events.unregister("after-call", unique_id=_ID_DESPUES)
    urllib3.PoolManager.urlopen = _instalado.pop("urlopen")  # type: ignore[method-assign]
