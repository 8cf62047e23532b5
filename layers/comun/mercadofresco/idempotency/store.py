"""``IdempotencyStore``: run an operation once per key and give every duplicate its outcome.

Lock and TTL timeline of one key (``t0`` = claim, ``t1`` = the operation ends)::

    t0 claim (PutItem, conditional)         t0 + lease_s                 t1 + expires_after_s
    |--- EN_CURSO, lease live --------------|--- EN_CURSO, lease over -----...
    |    duplicate -> OperacionEnCurso      |    next consumer takes the key over (its consumer died)
    |
    t1 success: UpdateItem -> COMPLETADO ---------------------------------|--- counts as absent
         duplicate -> stored result, no operation                         |    (TTL deletes up to 48 h
    t1 permanent error: UpdateItem -> FALLIDO                             |     later; a claim
         duplicate -> the same error again, no operation                  |     overwrites it)
    t1 transient error: DeleteItem -> absent: the retry runs the operation again

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
from functools import partial
from typing import TYPE_CHECKING, Any

from mercadofresco import errors
from mercadofresco.idempotency import keys
from mercadofresco.idempotency.cache import CompletedCache
from mercadofresco.idempotency.config import IdempotencyConfig
from mercadofresco.idempotency.dynamodb import DynamoDBRecords
from mercadofresco.idempotency.exceptions import (
    IdempotencyError,
    IdempotencyInconsistentStateError,
    IdempotencyKeyError,
    IdempotencyPayloadMismatchError,
    IdempotencyPersistenceError,
    IdempotencyResultError,
    OperationFailedError,
)
from mercadofresco.idempotency.keys import IdempotencyKey
from mercadofresco.idempotency.record import IdempotencyRecord, IdempotencyStatus, StoredError

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.client import BaseClient

logger = logging.getLogger(__name__)

ENV_TABLE = "TABLA_IDEMPOTENCIA"
MAX_CLAIM_ATTEMPTS = 3  # a refused claim whose record then vanishes is claimed again, this many times in all
MAX_ERROR_MESSAGE_CHARS = 1000  # a stored error message is for humans and for the replayed exception


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
        tabla = os.environ.get(ENV_TABLE)
        if not tabla:
            raise IdempotencyError(f"environment variable {ENV_TABLE} (the idempotency table's name) is not set")
        return cls(tabla, None, config or IdempotencyConfig.from_env(), **kwargs)

    def run(self, key: IdempotencyKey, operation: Callable[[], Any], payload: Any = None) -> Any:
        """Run ``operation`` once for ``key`` and return its (JSON round-tripped) result.

        Parameters
        ----------
        key
            A key from :mod:`mercadofresco.dominio.claves` (a plain ``str`` is refused).
        operation
            Zero-argument callable returning a JSON-serialisable value.
        payload
            What identifies the request (hashed before the operation runs); a duplicate
            with another payload raises instead of receiving this one's result. ``None``:
            no validation.

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
        if type(key) is not IdempotencyKey:
            raise IdempotencyKeyError(
                f"idempotency key must be made by idempotency.keys.make_key (e.g. claves.cobro(pedido_id)), "
                f"got {type(key).__name__} {key!r}"
            )
        hash_payload = None if payload is None else keys.canonical_hash(payload)
        if self.cache is not None and (guardado := self.cache.get(key, self._now_s())) is not None:
            _validar_payload(guardado, hash_payload)
            return guardado.result()
        owner = uuid.uuid4().hex  # identifies this claim's holder; never part of a key
        existente = self._reclamar(key, hash_payload, owner)
        if existente is None:
            return self._ejecutar(key, operation, owner, hash_payload)
        return self._responder_duplicado(existente)

    def _reclamar(self, key: str, hash_payload: str | None, owner: str) -> IdempotencyRecord | None:
        """Claim the key: ``None`` if ours now, else the outcome-bearing record found."""
        for _ in range(MAX_CLAIM_ATTEMPTS):
            ahora = self._now_s()
            new = IdempotencyRecord(
                clave=key,
                estado=IdempotencyStatus.EN_CURSO,
                expira_en=int(ahora) + self.config.expires_after_s,
                caduca_bloqueo=int(ahora) + self.config.lease_s,
                propietario=owner,
                hash_payload=hash_payload,
            )
            ganado, existente = self.records.claim(new, int(ahora))
            if ganado:
                return None
            if existente is not None:
                _validar_payload(existente, hash_payload)
                if existente.estado is IdempotencyStatus.EN_CURSO and self.config.wait_for_completion_s > 0:
                    existente = self._esperar(existente, hash_payload)
            if existente is not None:  # None: refused but gone by the time we looked; claim again
                return existente
        raise IdempotencyInconsistentStateError(
            f"claim on {key!r} refused {MAX_CLAIM_ATTEMPTS} times but no record could be read; retry later"
        )

    def _esperar(self, en_curso: IdempotencyRecord, hash_payload: str | None) -> IdempotencyRecord | None:
        """Poll a live claim until its outcome, up to ``wait_for_completion_s``.

        Returns the finished record, the same ``EN_CURSO`` one when time runs out, or
        ``None`` when the record vanished or its lease lapsed (the key can be claimed).
        """
        limite = self._now_s() + self.config.wait_for_completion_s
        while self._now_s() < limite:
            self._sleep(self.config.poll_interval_s)
            leido = self.records.read(en_curso.clave)
            ahora = self._now_s()
            if leido is None or leido.expired(ahora):
                return None
            _validar_payload(leido, hash_payload)
            if leido.estado is not IdempotencyStatus.EN_CURSO:
                return leido
            if not leido.lease_alive(ahora):
                return None
            en_curso = leido
        return en_curso

    def _ejecutar(self, key: str, operation: Callable[[], Any], owner: str, hash_payload: str | None) -> Any:
        """Run the claimed operation and record its outcome."""
        try:
            resultado = operation()
        except Exception as exc:
            if isinstance(exc, self.config.permanent_errors):
                self._terminar(key, exc, partial(self._registrar_fallo, key, owner, exc))
            else:
                self._terminar(key, exc, partial(self.records.release, key, owner))
            raise
        try:
            result_json = json.dumps(resultado, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            error = IdempotencyResultError(f"result of {key!r} is not JSON-serialisable: {exc}")
            # The side effect has happened: record it FALLIDO rather than let a retry repeat it.
            self._terminar(key, error, partial(self._registrar_fallo, key, owner, error))
            raise error from exc
        expires_epoch_s = int(self._now_s()) + self.config.expires_after_s
        if not self.records.complete(key, owner, result_json, expires_epoch_s):
            logger.warning("idempotency claim lost before completion (lease too short?)", extra={"clave": key})
        elif self.cache is not None:
            completado = IdempotencyRecord(
                key, IdempotencyStatus.COMPLETADO, expires_epoch_s, None, owner, hash_payload, result_json
            )
            self.cache.put(completado)
        return json.loads(result_json)

    def _registrar_fallo(self, key: str, owner: str, exc: BaseException) -> bool:
        tipo = f"{type(exc).__module__}.{type(exc).__qualname__}"
        error = StoredError(tipo=tipo, mensaje=str(exc)[:MAX_ERROR_MESSAGE_CHARS])
        expires_epoch_s = int(self._now_s()) + self.config.expires_after_s
        return self.records.mark_failed(key, owner, error, expires_epoch_s)

    @staticmethod
    def _terminar(key: str, exc: BaseException, registrar: Callable[[], bool]) -> None:
        """Record a failed run; a persistence failure here says which error it was handling."""
        try:
            if not registrar():
                logger.warning("idempotency claim lost before recording a failure", extra={"clave": key})
        except IdempotencyPersistenceError as fallo:
            fallo.add_note(f"while recording the operation's {type(exc).__name__}: {exc}")
            raise

    def _responder_duplicado(self, record: IdempotencyRecord) -> Any:
        """A duplicate's answer: the stored result, the stored failure, or 'in progress'."""
        if record.estado is IdempotencyStatus.COMPLETADO:
            if self.cache is not None:
                self.cache.put(record)
            return record.result()
        if record.estado is IdempotencyStatus.FALLIDO:
            raise _reconstruir_error(record)
        raise errors.OperacionEnCurso(
            f"operation {record.clave!r} is EN_CURSO in another consumer until "
            f"caduca_bloqueo={record.caduca_bloqueo} (epoch s); retry later"
        )


def _validar_payload(record: IdempotencyRecord, hash_payload: str | None) -> None:
    # Only when both sides carry a hash: a caller that validates nothing accepts any record.
    if hash_payload is not None and record.hash_payload is not None and hash_payload != record.hash_payload:
        raise IdempotencyPayloadMismatchError(record.clave, record.hash_payload, hash_payload)


_DOMINIO = "mercadofresco.dominio."
# Where the workflow's own errors moved from mercadofresco.errors: an old record's name is looked up there only
# (the store's dominio.pedidos.PedidoDuplicado shares a name with the workflow's, and is not what it meant).
_FLOW_ERRORS_MODULE = "mercadofresco.dominio.errores"


def _errores_de_la_capa(raiz: type[Exception] = errors.MercadoFrescoError) -> list[type[Exception]]:
    return [raiz, *(c for sub in raiz.__subclasses__() for c in _errores_de_la_capa(sub))]


def _clase_guardada(guardado: StoredError) -> type[Exception] | None:
    """The class a stored error names, if it is one the workflow matches: of ``errors`` or of ``dominio``.

    Only an already imported class of the layer is looked up (a record never makes us import a module).
    A record written while the workflow's own errors lived in ``mercadofresco.errors`` (before they
    moved to ``mercadofresco.dominio.errores``) names that module: it still resolves, by the class's name.
    """
    replayable = [
        c for c in _errores_de_la_capa() if c.__module__ == errors.__name__ or c.__module__.startswith(_DOMINIO)
    ]
    exacta = next((c for c in replayable if (c.__module__, c.__name__) == (guardado.module, guardado.name)), None)
    if exacta is not None or guardado.module != errors.__name__:
        return exacta
    return next((c for c in replayable if (c.__module__, c.__name__) == (_FLOW_ERRORS_MODULE, guardado.name)), None)


def _reconstruir_error(record: IdempotencyRecord) -> Exception:
    """The stored permanent failure again: the same domain class (the workflow's Catch matches it by name)."""
    guardado = record.error or StoredError(tipo="desconocido", mensaje="FALLIDO record without error")
    clase = _clase_guardada(guardado)
    error: Exception | None = None
    if clase is not None:
        try:
            error = clase(guardado.mensaje)
        except TypeError:  # a domain error with a richer constructor: fall back to the generic one
            error = None
    if error is None:
        error = OperationFailedError(record.clave, guardado.tipo, guardado.mensaje)
    error.add_note(f"replayed from idempotency record {record.clave!r} (FALLIDO); the operation did not run")
    return error
