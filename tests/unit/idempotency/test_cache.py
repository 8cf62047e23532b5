"""The in-process cache: COMPLETADO only, bounded, evicted at expira_en."""

from __future__ import annotations

import pytest
from mercadofresco.idempotency.cache import CompletedCache
from mercadofresco.idempotency.record import IdempotencyRecord, IdempotencyStatus

T0_S = 1_790_000_000


def registro(clave: str, estado: IdempotencyStatus = IdempotencyStatus.COMPLETADO) -> IdempotencyRecord:
    return IdempotencyRecord(clave=clave, estado=estado, expira_en=T0_S + 100, resultado_json='{"ok": true}')


@pytest.mark.parametrize("estado", [IdempotencyStatus.EN_CURSO, IdempotencyStatus.FALLIDO])
def test_cache_refuses_records_not_completado(estado: IdempotencyStatus) -> None:
    # GIVEN a cache
    cache = CompletedCache(max_items=4)
    # WHEN an unfinished or failed record is offered
    with pytest.raises(ValueError):
        cache.put(registro("cobro:PED-1", estado))
    # THEN nothing was cached
    assert len(cache) == 0


def test_cache_evicts_expired_entry_on_read() -> None:
    # GIVEN a cached COMPLETADO record
    cache = CompletedCache(max_items=4)
    cache.put(registro("cobro:PED-1"))
    # WHEN it is read at expira_en, then one second after
    vivo = cache.get("cobro:PED-1", T0_S + 100)
    caducado = cache.get("cobro:PED-1", T0_S + 101)
    # THEN the first read hits, the second misses and evicts it
    assert vivo is not None and vivo.result() == {"ok": True}
    assert caducado is None
    assert "cobro:PED-1" not in cache


def test_cache_bounded_evicts_least_recently_used() -> None:
    # GIVEN a cache of 2 holding A and B, with A read last
    cache = CompletedCache(max_items=2)
    cache.put(registro("A"))
    cache.put(registro("B"))
    cache.get("A", T0_S)
    # WHEN C arrives
    cache.put(registro("C"))
    # THEN B, the least recently used, left
    assert ("A" in cache, "B" in cache, "C" in cache) == (True, False, True)


def test_record_round_trips_through_dynamodb_item() -> None:
    # GIVEN a FALLIDO record with every attribute
    from mercadofresco.idempotency.record import StoredError

    original = IdempotencyRecord(
        clave="cobro:PED-1",
        estado=IdempotencyStatus.FALLIDO,
        expira_en=T0_S,
        caduca_bloqueo=T0_S - 1,
        propietario="p",
        hash_payload="h",
        error=StoredError("mercadofresco.dominio.errores.CobroRechazado", "denegada"),
    )
    # WHEN encoded as a typed item and decoded
    item = original.to_item()
    # THEN nothing is lost and the error keeps its class name and module
    assert IdempotencyRecord.from_item(item) == original
    assert (original.error.name, original.error.module) == ("CobroRechazado", "mercadofresco.dominio.errores")
