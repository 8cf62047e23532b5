"""The store without a table: how it is built, and the verbs' misuses refused before any request.

The Stubber is given no response: a request sent by mistake fails the test at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco import aws
from mercadofresco.dominio import claves
from mercadofresco.idempotency import Claim, IdempotencyError, IdempotencyStatus, IdempotencyStore
from mercadofresco.idempotency.exceptions import IdempotencyKeyError
from mercadofresco.idempotency.record import IdempotencyRecord

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.stub import Stubber

T0_S = 1_790_000_000
CLAVE = claves.cobro("PED-2026-084417")


@pytest.fixture
def store(stubbed: Callable[[str], tuple[Any, Stubber]]) -> IdempotencyStore:
    cliente, _ = stubbed("dynamodb")
    return IdempotencyStore("mercadofresco-idempotencia", cliente, now_s=lambda: T0_S)


def _reclamo(estado: IdempotencyStatus, won: bool) -> Claim:
    return Claim(IdempotencyRecord(CLAVE, estado, T0_S + 86_400, T0_S + 90, "otro"), won=won)


def test_from_env_without_table_name_raises_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a function deployed without TABLA_IDEMPOTENCIA
    monkeypatch.delenv("TABLA_IDEMPOTENCIA", raising=False)
    # WHEN the store is built from the environment
    with pytest.raises(IdempotencyError) as info:
        IdempotencyStore.from_env()
    # THEN the error names the variable
    assert "TABLA_IDEMPOTENCIA" in str(info.value)


def test_from_env_reads_table_and_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the template's environment for a function with a 60 s timeout
    monkeypatch.setenv("TABLA_IDEMPOTENCIA", "mercadofresco-idempotencia-dev")
    monkeypatch.setenv("FUNCTION_TIMEOUT_S", "60")
    monkeypatch.delenv("IDEMPOTENCY_LEASE_S", raising=False)
    # WHEN the store is built from it
    store = IdempotencyStore.from_env()
    # THEN it uses that table, a project client and a lease of timeout + margin
    assert store.table_name == "mercadofresco-idempotencia-dev"
    assert store.config.lease_s == 120
    assert store.records.client.meta.config.connect_timeout == aws.SDK_CONNECT_TIMEOUT_S


@pytest.mark.parametrize("clave", ["cobro:PED-2026-084417", b"cobro:PED-1", None, 7])
def test_claim_key_not_made_by_make_key_raises_key_error(store: IdempotencyStore, clave: Any) -> None:
    # GIVEN a key written by hand (as a MessageId would be), or no key at all
    # WHEN it is claimed
    with pytest.raises(IdempotencyKeyError) as info:
        store.claim(clave)
    # THEN the error says how to build one (and no request was sent)
    assert "claves" in str(info.value)


@pytest.mark.parametrize("dueno", ["", "   ", "x" * 1025, 42])
def test_claim_bad_owner_raises_value_error(store: IdempotencyStore, dueno: Any) -> None:
    # GIVEN an owner that cannot identify a holder  WHEN claimed  THEN refused before any request
    with pytest.raises(ValueError, match="owner"):
        store.claim(CLAVE, owner=dueno)


@pytest.mark.parametrize("lectura", [float("nan"), float("inf"), -1.0, "1790000000", None, True])
def test_claim_clock_not_epoch_seconds_raises_value_error(
    stubbed: Callable[[str], tuple[Any, Stubber]], lectura: Any
) -> None:
    # GIVEN a store whose injected clock returns something that is not epoch seconds
    cliente, _ = stubbed("dynamodb")
    store = IdempotencyStore("mercadofresco-idempotencia", cliente, now_s=lambda: lectura)
    # WHEN a key is claimed  THEN a clear error, before any lease is computed or sent
    with pytest.raises(ValueError, match="clock"):
        store.claim(CLAVE)


@pytest.mark.parametrize("estado", list(IdempotencyStatus))
def test_complete_or_fail_a_refused_claim_raises_value_error(store: IdempotencyStore, estado) -> None:
    # GIVEN a claim refused by another holder's record (in progress or finished)
    reclamo = _reclamo(estado, won=False)
    # WHEN the caller tries to record an outcome on it  THEN refused: the key is not the caller's
    with pytest.raises(ValueError, match=r"claim\.result\(\)"):
        store.complete(reclamo, {"ok": True})
    with pytest.raises(ValueError, match="refused"):
        store.fail(reclamo, RuntimeError("boom"))


def test_verbs_given_something_else_than_a_claim_or_an_exception_raise_type_error(store: IdempotencyStore) -> None:
    # GIVEN a won claim  WHEN the verbs get the wrong kind of argument  THEN a TypeError names what they take
    with pytest.raises(TypeError, match="Claim"):
        store.complete(CLAVE, {"ok": True})
    with pytest.raises(TypeError, match="exception"):
        store.fail(_reclamo(IdempotencyStatus.EN_CURSO, won=True), "boom")


def test_result_of_a_won_claim_raises_value_error() -> None:
    # GIVEN a won claim  WHEN asked for a duplicate's answer  THEN refused: there is no stored outcome yet
    with pytest.raises(ValueError, match="won"):
        _reclamo(IdempotencyStatus.EN_CURSO, won=True).result()


@pytest.mark.parametrize(
    ("estado", "won"),
    [
        (IdempotencyStatus.EN_CURSO, True),
        (IdempotencyStatus.COMPLETADO, False),
        (IdempotencyStatus.FALLIDO, False),
    ],
)
def test_take_over_anything_but_another_holders_en_curso_raises_value_error(estado, won: bool) -> None:
    # GIVEN a claim won, or refused by a finished record  WHEN taken over  THEN refused
    with pytest.raises(ValueError, match="taken over"):
        _reclamo(estado, won=won).take_over()


def test_take_over_a_live_claim_holds_it_as_its_holder() -> None:
    # GIVEN a claim refused by another holder's EN_CURSO record
    # WHEN taken over  THEN it is held, with the holder's owner (its outcome is recorded in its place)
    tomado = _reclamo(IdempotencyStatus.EN_CURSO, won=False).take_over()
    assert tomado.won and tomado.owner == "otro" and tomado.record.estado is IdempotencyStatus.EN_CURSO
