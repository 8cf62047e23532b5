"""``IdempotencyStore``: claim a key, complete or fail the claim; ``run`` an operation once per key.

The three verbs are the whole protocol; :meth:`IdempotencyStore.run` (and ``@idempotent``) is
``claim`` → the operation → ``complete`` or ``fail``, and a caller whose operation is not one
Python call (the order workflow's claim, a compensation closing a charge) uses the verbs itself.
Leases and expiries are computed here only, from the config and the injected clock.

Lock and TTL timeline of one key (``t0`` = claim, ``t1`` = the operation ends)::

    t0 claim (PutItem, conditional)         t0 + lease_s                 t0 + lease_s + expires_after_s
    |--- EN_CURSO, lease live --------------|--- EN_CURSO, lease over -----------|--- counts as absent
    |    duplicate -> OperacionEnCurso      |    next consumer takes the key over (its consumer died)
    |
    t1 complete: UpdateItem -> COMPLETADO ---------------------------------| t1 + expires_after_s
         duplicate -> stored result, no operation                         |--- counts as absent
    t1 fail, permanent error: UpdateItem -> FALLIDO                       |    (TTL deletes up to 48 h
         duplicate -> the same error again, no operation                  |     later; a claim
    t1 fail, transient error: DeleteItem -> absent: the retry runs it again     overwrites it)

A claim's ``expira_en`` is ``expires_after_s`` past its lease's end, the last moment its holder may
record the outcome; an outcome's is ``expires_after_s`` past the moment it is recorded. So a record
outlives its lease whatever the two settings, and the order claim, whose outcome the workflow writes
without touching ``expira_en``, still lives 24 h past the execution's bound.

Calls per outcome: first success 2 (PutItem + UpdateItem); duplicate 1 (the refused
PutItem returns the record with ``ALL_OLD``, no GetItem); duplicate from the local
cache 0. Only the opt-in wait mode reads (GetItem) while another consumer holds the key.

Why the lease is its own setting: a charge whose function timed out may still be in
flight at the gateway; the key must stay claimed past the function's death for as long
as the side effect can take, not merely for the invocation's remaining time.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from mercadofresco.idempotency import keys
from mercadofresco.idempotency.cache import CompletedCache
from mercadofresco.idempotency.claim import Claim
from mercadofresco.idempotency.config import IdempotencyConfig
from mercadofresco.idempotency.dynamodb import DynamoDBRecords
from mercadofresco.idempotency.exceptions import (
    IdempotencyError,
    IdempotencyInconsistentStateError,
    IdempotencyKeyError,
    IdempotencyPayloadMismatchError,
    IdempotencyPersistenceError,
    IdempotencyResultError,
)
from mercadofresco.idempotency.keys import IdempotencyKey
from mercadofresco.idempotency.record import IdempotencyRecord, IdempotencyStatus, StoredError, result_json
from mercadofresco.validation import echo, unprintable

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.client import BaseClient

__all__ = ["IdempotencyStore"]

logger = logging.getLogger(__name__)

ENV_TABLE = "TABLA_IDEMPOTENCIA"
MAX_CLAIM_ATTEMPTS = 3  # a refused claim whose record then vanishes is claimed again, this many times in all
MAX_OWNER_CHARS = 1024  # an owner is a token or an execution ARN (256), never a payload
MAX_CLOCK_S = 10**11  # year 5138: a clock past it is broken, and its lease would not fit DynamoDB's numbers anyway


class IdempotencyStore:
    """Idempotency records in one DynamoDB table.

    Parameters
    ----------
    table_name
        The table (``mercadofresco-idempotencia``; partition key ``clave``, TTL ``expira_en``).
    client
        A low-level DynamoDB client; ``mercadofresco.aws.client("dynamodb")`` when omitted.
    config
        :class:`IdempotencyConfig`; ``IdempotencyConfig()`` when omitted.
    now_s, sleep
        Clock (epoch seconds) and sleep, injectable so tests move time instead of waiting.

    Examples
    --------
    >>> store = IdempotencyStore.from_env()
    >>> referencia = store.run(claves.cobro(pedido["pedido_id"]), lambda: pasarela.cobrar(pedido),
    ...                        payload={"pedido_id": pedido["pedido_id"], "importe": pedido["importe"]})
    >>> reclamo = store.claim(claves.pedido(pedido_id), owner=execution_arn)   # the verbs, by hand
    >>> if not reclamo.won:
    ...     return reclamo.result()                  # the stored result, or the stored outcome raised
    >>> store.complete(reclamo, resultado)           # or store.fail(reclamo, error)
    """

    def __init__(
        self,
        table_name: str,
        client: BaseClient | None = None,
        config: IdempotencyConfig | None = None,
        *,
        now_s: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if client is None:
            from mercadofresco import aws

            client = aws.client("dynamodb")
        self.table_name = table_name
        self.config = config or IdempotencyConfig()
        self.records = DynamoDBRecords(table_name, client)
        self.cache = CompletedCache(self.config.local_cache_max_items) if self.config.local_cache else None
        self._now_s = now_s
        self._sleep = sleep

    @classmethod
    def from_env(cls, config: IdempotencyConfig | None = None, **kwargs: Any) -> IdempotencyStore:
        """The table named by ``TABLA_IDEMPOTENCIA``, the project's client, ``IdempotencyConfig.from_env()``."""
        table = os.environ.get(ENV_TABLE)
        if not table:
            raise IdempotencyError(f"environment variable {ENV_TABLE} (the idempotency table's name) is not set")
        return cls(table, None, config or IdempotencyConfig.from_env(), **kwargs)

    # ------------------------------------------------------------------------------------------------ the verbs

    def claim(self, key: IdempotencyKey, *, payload: Any = None, owner: str | None = None) -> Claim:
        """Claim ``key`` with one conditional write: ``EN_CURSO`` with this store's lease.

        Parameters
        ----------
        key
            A key from :mod:`mercadofresco.dominio.claves` (a plain ``str`` is refused).
        payload
            What identifies the request (hashed); a duplicate with another payload raises instead of
            receiving this one's outcome. ``None``: no validation.
        owner
            Who holds the claim (``propietario``): a fresh random token when omitted. A caller with a
            stable identity (a workflow execution) passes it, so that its own claim, written by an
            attempt whose answer was lost, is found to be its own again.

        Returns
        -------
        Claim
            Won (the key is ours; run the operation, then :meth:`complete` or :meth:`fail`), or
            refused with the record that holds the key (:meth:`Claim.result` is the duplicate's answer).

        Raises
        ------
        IdempotencyPayloadMismatchError
            Same key, different payload.
        IdempotencyPersistenceError
            DynamoDB failed.
        IdempotencyInconsistentStateError
            Refused again and again with no record to show for it: retry later.
        """
        _check_key(key)
        owner = uuid.uuid4().hex if owner is None else _checked_owner(owner)
        payload_hash = None if payload is None else keys.canonical_hash(payload)
        if self.cache is not None and (cached := self.cache.get(key, self._clock_s())) is not None:
            _check_payload(cached, payload_hash)
            return Claim(cached, won=False)
        for _ in range(MAX_CLAIM_ATTEMPTS):
            now_s = int(self._clock_s())
            new = self._claim_record(key, owner, payload_hash, now_s)
            won, found = self.records.claim(new, now_s)
            if won:
                return Claim(new, won=True)
            if found is not None and (claim := self._refused(found, owner, payload_hash)) is not None:
                return claim
            # Refused, but the record was gone by the time we looked: claim again.
        raise IdempotencyInconsistentStateError(
            f"claim on {key!r} refused {MAX_CLAIM_ATTEMPTS} times but no record could be read; retry later"
        )

    def complete(self, claim: Claim, result: Any) -> Any:
        """Record the claimed operation's result (``COMPLETADO``) and return it as a duplicate will get it.

        The result must be JSON-serialisable: if it is not, the side effect has happened all the same, so
        the claim is recorded ``FALLIDO`` (never released: a retry would repeat it) and
        :class:`IdempotencyResultError` is raised.
        """
        _check_won(claim, "complete")
        try:
            stored = result_json(result)
        except (TypeError, ValueError) as exc:
            error = IdempotencyResultError(f"result of {claim.key!r} is not JSON-serialisable: {exc}")
            _record_outcome(claim.key, error, partial(self._write_failure, claim, error))
            raise error from exc
        expires_epoch_s = self._expiry_s(int(self._clock_s()))
        if not self.records.complete(claim.key, claim.owner, stored, expires_epoch_s):
            logger.warning("idempotency claim lost before completion (lease too short?)", extra={"clave": claim.key})
        elif self.cache is not None:
            completed = replace(
                claim.record,
                estado=IdempotencyStatus.COMPLETADO,
                expira_en=expires_epoch_s,
                caduca_bloqueo=None,
                resultado_json=stored,
            )
            self.cache.put(completed)
        return json.loads(stored)

    def fail(self, claim: Claim, error: BaseException) -> None:
        """Record that the claimed operation failed with ``error``.

        A permanent error (one of ``config.permanent_errors``) records ``FALLIDO``, replayed to every
        duplicate; any other releases the key (DeleteItem), so the retry runs the operation again.
        """
        _check_won(claim, "fail")
        if not isinstance(error, BaseException):
            raise TypeError(f"fail() takes the operation's exception, got {type(error).__name__}")
        if isinstance(error, self.config.permanent_errors):
            _record_outcome(claim.key, error, partial(self._write_failure, claim, error))
        else:
            _record_outcome(claim.key, error, partial(self.records.release, claim.key, claim.owner))

    def run(self, key: IdempotencyKey, operation: Callable[[], Any], payload: Any = None) -> Any:
        """Run ``operation`` once for ``key`` and return its (JSON round-tripped) result.

        :meth:`claim`; a refused claim answers the duplicate (:meth:`Claim.result`); a won one runs
        ``operation`` and records its outcome with :meth:`complete` or :meth:`fail`.

        Raises
        ------
        OperacionEnCurso
            Another consumer holds a live claim (retry later).
        IdempotencyPayloadMismatchError
            Same key, different payload.
        IdempotencyPersistenceError
            DynamoDB failed.
        Exception
            The operation's own error (first run), or the stored permanent one (duplicate).
        """
        claim = self.claim(key, payload=payload)
        if not claim.won:
            return claim.result()
        try:
            result = operation()
        except Exception as exc:
            self.fail(claim, exc)
            raise
        return self.complete(claim, result)

    # ---------------------------------------------------- time: the one place leases and expiries are computed

    def _clock_s(self) -> float:
        """The injected clock's reading, checked: epoch seconds, a finite number in [0, MAX_CLOCK_S)."""
        now_s = self._now_s()
        if isinstance(now_s, bool) or not isinstance(now_s, int | float) or not 0 <= now_s < MAX_CLOCK_S:
            raise ValueError(
                f"the idempotency store's clock must return epoch seconds (a number from 0 to {MAX_CLOCK_S}), "
                f"got {echo(now_s)}"
            )
        return now_s

    def _claim_record(self, key: str, owner: str, payload_hash: str | None, now_s: int) -> IdempotencyRecord:
        lease_end_s = now_s + self.config.lease_s
        return IdempotencyRecord(
            clave=key,
            estado=IdempotencyStatus.EN_CURSO,
            expira_en=self._expiry_s(lease_end_s),
            caduca_bloqueo=lease_end_s,
            propietario=owner,
            hash_payload=payload_hash,
        )

    def _expiry_s(self, since_s: int) -> int:
        """``expira_en`` of a record whose outcome was (or may last be) written at ``since_s``."""
        return since_s + self.config.expires_after_s

    # --------------------------------------------------------------------------------------------- internals

    def _refused(self, found: IdempotencyRecord, owner: str, payload_hash: str | None) -> Claim | None:
        """The claim a refusal by ``found`` amounts to; ``None`` when the key can be claimed again."""
        _check_payload(found, payload_hash)
        if found.estado is IdempotencyStatus.EN_CURSO and found.propietario == owner:
            return Claim(found, won=True)  # our own claim: an earlier attempt wrote it and its answer was lost
        if found.estado is IdempotencyStatus.EN_CURSO and self.config.wait_for_completion_s > 0:
            finished = self._wait_for_outcome(found, payload_hash)
            if finished is None:
                return None
            found = finished
        if found.estado is IdempotencyStatus.COMPLETADO and self.cache is not None:
            self.cache.put(found)
        return Claim(found, won=False)

    def _wait_for_outcome(self, in_progress: IdempotencyRecord, payload_hash: str | None) -> IdempotencyRecord | None:
        """Poll a live claim until its outcome, up to ``wait_for_completion_s``.

        Returns the finished record, the same ``EN_CURSO`` one when time runs out, or
        ``None`` when the record vanished or its lease lapsed (the key can be claimed).
        """
        deadline_s = self._clock_s() + self.config.wait_for_completion_s
        while self._clock_s() < deadline_s:
            self._sleep(self.config.poll_interval_s)
            read = self.records.read(in_progress.clave)
            now_s = self._clock_s()
            if read is None or read.expired(now_s):
                return None
            _check_payload(read, payload_hash)
            if read.estado is not IdempotencyStatus.EN_CURSO:
                return read
            if not read.lease_alive(now_s):
                return None
            in_progress = read
        return in_progress

    def _write_failure(self, claim: Claim, exc: BaseException) -> bool:
        expires_epoch_s = self._expiry_s(int(self._clock_s()))
        return self.records.mark_failed(claim.key, claim.owner, StoredError.of(exc), expires_epoch_s)


def _record_outcome(key: str, exc: BaseException, write: Callable[[], bool]) -> None:
    """Record a failed run; a persistence failure here says which error it was handling."""
    try:
        if not write():
            logger.warning("idempotency claim lost before recording a failure", extra={"clave": key})
    except IdempotencyPersistenceError as failure:
        failure.add_note(f"while recording the operation's {type(exc).__name__}: {exc}")
        raise


def _check_key(key: Any) -> None:
    if type(key) is not IdempotencyKey:
        raise IdempotencyKeyError(
            f"idempotency key must be made by idempotency.keys.make_key (e.g. claves.cobro(pedido_id)), "
            f"got {type(key).__name__} {echo(key)}"
        )


def _checked_owner(owner: Any) -> str:
    # Stored as propietario and compared by the workflow's own writes: printable text, as an execution ARN is
    # (a lone surrogate cannot even be encoded for DynamoDB).
    if not isinstance(owner, str) or not owner.strip() or len(owner) > MAX_OWNER_CHARS or unprintable(owner):
        raise ValueError(
            f"a claim's owner must be printable text of 1 to {MAX_OWNER_CHARS} characters, got {echo(owner)}"
        )
    return owner


def _check_won(claim: Any, verb: str) -> None:
    if not isinstance(claim, Claim):
        raise TypeError(f"{verb}() takes the Claim that IdempotencyStore.claim returned, got {type(claim).__name__}")
    if not claim.won:
        raise ValueError(
            f"cannot {verb} the claim on {claim.key!r}: it was refused ({claim.record.estado}); "
            f"a duplicate is answered with claim.result()"
        )


def _check_payload(record: IdempotencyRecord, payload_hash: str | None) -> None:
    # Only when both sides carry a hash: a caller that validates nothing accepts any record.
    if payload_hash is not None and record.hash_payload is not None and payload_hash != record.hash_payload:
        raise IdempotencyPayloadMismatchError(record.clave, record.hash_payload, payload_hash)
