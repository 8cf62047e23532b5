"""``Claim``: what :meth:`IdempotencyStore.claim` answers, and what a duplicate is told.

A claim is won (the key is ours, ``EN_CURSO`` with our lease: run the operation, then
``complete`` or ``fail`` it) or refused, carrying the record that refused it: the
``ConditionalCheckFailedException``'s ``ALL_OLD`` item is the answer, not an error. A refused
claim's :meth:`Claim.result` is the duplicate's answer: the stored result, the stored permanent
failure raised again, or ``OperacionEnCurso`` while another consumer holds a live lease.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mercadofresco import errors
from mercadofresco.idempotency.exceptions import OperationFailedError
from mercadofresco.idempotency.record import IdempotencyRecord, IdempotencyStatus, StoredError

__all__ = ["Claim"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim on a key.

    Parameters
    ----------
    record
        The record as stored: ours (``EN_CURSO``, ``caduca_bloqueo`` = the lease's end) when ``won``;
        otherwise the one that refused the claim (another holder's ``EN_CURSO``, ``COMPLETADO`` with its
        result, ``FALLIDO`` with its error).
    won
        Whether the key is ours: only a won claim may be completed or failed.
    """

    record: IdempotencyRecord
    won: bool

    @property
    def key(self) -> str:
        return self.record.clave

    @property
    def owner(self) -> str | None:
        """The claim's holder (``propietario``): ours when won, the other consumer's when refused."""
        return self.record.propietario

    def result(self) -> Any:
        """A refused claim's answer to the duplicate: the stored result, or the stored outcome raised.

        Raises
        ------
        OperacionEnCurso
            Another consumer holds a live claim (retry later).
        Exception
            The stored permanent failure: the same domain class (the workflow's ``Catch`` matches it by
            name), or :class:`OperationFailedError` for a class outside the layer.
        ValueError
            The claim was won: there is no stored outcome yet, the operation is the caller's to run.
        """
        if self.won:
            raise ValueError(f"claim on {self.key!r} was won: run the operation, then complete or fail the claim")
        if self.record.estado is IdempotencyStatus.COMPLETADO:
            return self.record.result()
        if self.record.estado is IdempotencyStatus.FALLIDO:
            raise _replayed_error(self.record)
        raise errors.OperacionEnCurso(
            f"operation {self.key!r} is EN_CURSO in another consumer until "
            f"caduca_bloqueo={self.record.caduca_bloqueo} (epoch s); retry later"
        )

    def take_over(self) -> Claim:
        """The live claim that refused this one, held in its holder's place to record its outcome.

        For a caller that has decided the outcome of an operation whose holder will never answer (the
        order workflow's compensation closes a charge attempt that died mid-call). The record keeps its
        ``propietario``: should the holder answer after all, its own ``complete`` is still accepted.
        """
        if self.won or self.record.estado is not IdempotencyStatus.EN_CURSO or not self.record.propietario:
            raise ValueError(
                f"only a claim refused by another holder's EN_CURSO record can be taken over; {self.key!r} "
                f"was {'won' if self.won else f'refused by a {self.record.estado} record'}"
            )
        return Claim(self.record, won=True)


_DOMAIN = "mercadofresco.dominio."
# Where the workflow's own errors moved from mercadofresco.errors: an old record's name is looked up there only
# (the store's dominio.pedidos.PedidoDuplicado shares a name with the workflow's, and is not what it meant).
_FLOW_ERRORS_MODULE = "mercadofresco.dominio.errores"


def _layer_errors(root: type[Exception] = errors.MercadoFrescoError) -> list[type[Exception]]:
    return [root, *(c for sub in root.__subclasses__() for c in _layer_errors(sub))]


def _stored_class(stored: StoredError) -> type[Exception] | None:
    """The class a stored error names, if it is one the workflow matches: of ``errors`` or of ``dominio``.

    Only an already imported class of the layer is looked up (a record never makes us import a module).
    A record written while the workflow's own errors lived in ``mercadofresco.errors`` (before they
    moved to ``mercadofresco.dominio.errores``) names that module: it still resolves, by the class's name.
    """
    replayable = [c for c in _layer_errors() if c.__module__ == errors.__name__ or c.__module__.startswith(_DOMAIN)]
    exact = next((c for c in replayable if (c.__module__, c.__name__) == (stored.module, stored.name)), None)
    if exact is not None or stored.module != errors.__name__:
        return exact
    return next((c for c in replayable if (c.__module__, c.__name__) == (_FLOW_ERRORS_MODULE, stored.name)), None)


def _replayed_error(record: IdempotencyRecord) -> Exception:
    """The stored permanent failure again: the same domain class (the workflow's Catch matches it by name)."""
    stored = record.error or StoredError(tipo="desconocido", mensaje="FALLIDO record without error")
    cls = _stored_class(stored)
    error: Exception | None = None
    if cls is not None:
        try:
            error = cls(stored.mensaje)
        except TypeError:  # a domain error with a richer constructor: fall back to the generic one
            error = None
    if error is None:
        error = OperationFailedError(record.clave, stored.tipo, stored.mensaje)
    error.add_note(f"replayed from idempotency record {record.clave!r} (FALLIDO); the operation did not run")
    return error
