"""The verbs' entry points fed anything (Hypothesis), on the real table (moto).

Properties: a key not made by ``make_key``, a clock that does not read epoch seconds or an owner that
names no one is a clear error before any request; any payload is hashed (claimed, then refused as the
same request or as a mismatch) or refused before any request; any result is completed and handed back
as a duplicate will get it, or recorded ``FALLIDO`` when JSON cannot hold it; any error is recorded or
releases the key, by its class. Leases and expiries always come out of the clock and the config.
"""

from __future__ import annotations

import itertools
import json
import unicodedata
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import CobroRechazado, PasarelaNoDisponible
from mercadofresco.errors import OperacionEnCurso
from mercadofresco.idempotency import IdempotencyStatus, IdempotencyStore
from mercadofresco.idempotency.exceptions import (
    IdempotencyKeyError,
    IdempotencyPayloadMismatchError,
    IdempotencyResultError,
    OperationFailedError,
)
from mercadofresco.idempotency.keys import IdempotencyKey, canonical_hash, make_key
from mercadofresco.validation import ECHO_MAX_CHARS

from tests.unit.fuzz.estrategias import ejemplos, texto_cualquiera, valor_json

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration

LEASE_S, DIA_S = 90, 86_400  # the layer's default config
MARCA = "MARCA" * 100
_pedidos = itertools.count()


def _clave_nueva() -> IdempotencyKey:
    """A key no earlier example used (the table lives for the whole test)."""
    return claves.cobro(f"PED-FUZZ-{next(_pedidos):06d}")


no_es_clave = st.one_of(
    texto_cualquiera,
    st.just(MARCA),
    st.just("cobro:PED-1"),
    st.binary(max_size=20),
    valor_json,
)
no_es_json = st.one_of(
    st.builds(object),
    st.just(float("nan")),
    st.just(float("inf")),
    st.binary(min_size=1, max_size=10),
    st.builds(Decimal, st.integers()),
    st.lists(st.builds(object), min_size=1, max_size=2),
)


@given(clave=no_es_clave)
def test_fuzz_claim_key_not_made_by_make_key_is_refused_before_any_call(store, llamadas, clave: Any) -> None:
    # GIVEN anything but an IdempotencyKey (text, a lookalike str, bytes, JSON)
    llamadas.clear()
    # WHEN it is claimed or run
    for verbo in (lambda: store.claim(clave), lambda: store.run(clave, lambda: "no")):
        with pytest.raises(IdempotencyKeyError) as info:
            verbo()
        # THEN a clear error that does not repeat a long value, and no request
        assert MARCA[: ECHO_MAX_CHARS + 1] not in str(info.value)
    assert llamadas.total == 0


@given(partes=st.lists(texto_cualquiera, min_size=1, max_size=3))
def test_fuzz_claim_any_key_make_key_accepts_is_claimed_once(store, partes: list[str]) -> None:
    # GIVEN parts of any text; make_key builds a key from them or refuses them
    try:
        clave = make_key("fuzz", f"{next(_pedidos)}", *partes)
    except IdempotencyKeyError:
        return
    # WHEN the key is claimed twice
    primero, segundo = store.claim(clave), store.claim(clave)
    # THEN DynamoDB stored it as it is: the first won, the second was refused by it
    assert primero.won and not segundo.won
    assert segundo.record.clave == clave and segundo.owner == primero.owner


lectura_reloj = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(min_value=0, max_value=4_102_444_800),  # up to 2100: the readings a real clock gives
    st.sampled_from([None, True, False, "1790000000", Decimal("1790000000")]),
)


@given(lectura=lectura_reloj)
def test_fuzz_claim_any_clock_reading_sets_the_lease_from_it_or_is_refused(
    tabla_idempotencia: str, dynamodb: Any, llamadas, lectura: Any
) -> None:
    # GIVEN a store whose clock returns anything
    store = IdempotencyStore(tabla_idempotencia, dynamodb, now_s=lambda: lectura)
    clave = _clave_nueva()
    llamadas.clear()
    valida = type(lectura) in (int, float) and 0 <= lectura < 10**11
    # WHEN a key is claimed
    if not valida:
        # THEN a reading that is not epoch seconds is a clear error, before any request
        with pytest.raises(ValueError, match="clock"):
            store.claim(clave)
        assert llamadas.total == 0
        return
    reclamo = store.claim(clave)
    # THEN the lease ends lease_s after the reading, the record expires 24 h after the lease
    assert reclamo.won
    assert reclamo.record.caduca_bloqueo == int(lectura) + LEASE_S
    assert reclamo.record.expira_en == int(lectura) + LEASE_S + DIA_S
    # AND at the same reading the key is held: a duplicate is refused by that very claim
    otro = store.claim(clave)
    assert not otro.won and otro.record == reclamo.record


@given(dueno=st.one_of(texto_cualquiera, st.just("x" * 1025), st.integers(), st.none()))
def test_fuzz_claim_any_owner_holds_the_claim_or_is_refused_before_any_call(store, llamadas, dueno: Any) -> None:
    # GIVEN any owner (None: the store picks a token)
    clave = _clave_nueva()
    llamadas.clear()
    valido = dueno is None or (
        isinstance(dueno, str)
        and dueno.strip() != ""
        and len(dueno) <= 1024
        and all(unicodedata.category(c) not in {"Cc", "Cf", "Cs", "Co", "Cn"} for c in dueno)
    )
    # WHEN the key is claimed by it, then again by the same owner
    if not valido:
        with pytest.raises(ValueError, match="owner"):
            store.claim(clave, owner=dueno)
        assert llamadas.total == 0
        return
    primero = store.claim(clave, owner=dueno)
    segundo = store.claim(clave, owner=primero.owner)
    # THEN the first won under that owner, and the owner's second claim is its own again (a lost answer)
    assert primero.won and (dueno is None or primero.owner == dueno)
    assert segundo.won and segundo.record == primero.record


@given(primero=st.one_of(valor_json, no_es_json), segundo=st.one_of(valor_json, no_es_json))
def test_fuzz_claim_any_payload_is_hashed_matched_or_refused_before_any_call(
    store, llamadas, primero: Any, segundo: Any
) -> None:
    # GIVEN two payloads of any shape for the same key
    clave = _clave_nueva()

    def hash_de(payload: Any) -> str | None:
        try:
            return canonical_hash(payload)
        except IdempotencyKeyError:
            return "no-json"

    llamadas.clear()
    # WHEN the key is claimed with the first
    if hash_de(primero) == "no-json":
        # THEN a payload JSON cannot express is refused before any request
        with pytest.raises(IdempotencyKeyError):
            store.claim(clave, payload=primero)
        assert llamadas.total == 0
        return
    reclamo = store.claim(clave, payload=primero)
    assert reclamo.won and reclamo.record.hash_payload == (None if primero is None else canonical_hash(primero))
    # AND WHEN a duplicate comes with the second
    if hash_de(segundo) == "no-json":
        with pytest.raises(IdempotencyKeyError):
            store.claim(clave, payload=segundo)
    elif primero is None or segundo is None or canonical_hash(primero) == canonical_hash(segundo):
        # THEN the same request (or one that validates nothing) is refused by the claim: in progress
        with pytest.raises(OperacionEnCurso):
            store.claim(clave, payload=segundo).result()
    else:
        # THEN another payload under the same key is a mismatch, never the other request's outcome
        with pytest.raises(IdempotencyPayloadMismatchError):
            store.claim(clave, payload=segundo)


@given(resultado=st.one_of(valor_json, no_es_json, st.dictionaries(texto_cualquiera, no_es_json, min_size=1)))
@example(resultado={"referencia_cobro": "ch_\ud800", "nota": "ñ"})  # a lone surrogate: JSON can say it, UTF-8 not
def test_fuzz_complete_any_result_is_handed_back_as_stored_or_recorded_fallido(
    store, leer_item, resultado: Any
) -> None:
    # GIVEN a won claim whose operation returned anything
    clave = _clave_nueva()
    reclamo = store.claim(clave)
    try:
        esperado = json.loads(json.dumps(resultado, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError):
        esperado = IdempotencyResultError
    # WHEN it is completed
    if esperado is IdempotencyResultError:
        # THEN a result JSON cannot hold is recorded FALLIDO (the side effect happened: never run again)
        with pytest.raises(IdempotencyResultError):
            store.complete(reclamo, resultado)
        assert leer_item(clave)["estado"] == {"S": "FALLIDO"}
        with pytest.raises(OperationFailedError):
            store.claim(clave).result()
        return
    devuelto = store.complete(reclamo, resultado)
    # THEN the caller and every duplicate get the same JSON round trip of it
    assert devuelto == esperado
    duplicado = store.claim(clave)
    assert duplicado.record.estado is IdempotencyStatus.COMPLETADO
    assert duplicado.result() == esperado


errores = st.one_of(
    st.builds(CobroRechazado, texto_cualquiera),
    st.builds(CobroRechazado, st.just(MARCA * 10)),
    st.builds(PasarelaNoDisponible, texto_cualquiera),
    st.builds(ValueError, texto_cualquiera),
)


@given(error=errores)
@example(error=CobroRechazado("tarjeta \ud800 denegada"))  # a lone surrogate, as a provider's JSON may carry
def test_fuzz_fail_any_error_is_recorded_by_its_class_or_releases_the_key(store, leer_item, error: Exception) -> None:
    # GIVEN a won claim whose operation raised a permanent or a transient error with any message
    clave = _clave_nueva()
    reclamo = store.claim(clave)
    # WHEN the claim is failed with it
    store.fail(reclamo, error)
    # THEN a permanent one is FALLIDO and replayed to a duplicate: same class, the message as DynamoDB can store it
    # (a lone surrogate escaped) and cut at 1000 characters
    if isinstance(error, CobroRechazado):
        assert leer_item(clave)["estado"] == {"S": "FALLIDO"}
        with pytest.raises(CobroRechazado) as info:
            store.claim(clave).result()
        assert str(info.value) == str(error).encode("utf-8", "backslashreplace").decode("utf-8")[:1000]
    # AND a transient one released the key: the retry claims it
    else:
        assert leer_item(clave) is None
        assert store.claim(clave).won


@ejemplos(0.4)
@given(operacion=st.sampled_from(["devuelve", "permanente", "transitorio", "no-json"]), resultado=valor_json)
def test_fuzz_run_any_outcome_runs_once_and_answers_duplicates_alike(
    crear_store: Callable[..., IdempotencyStore], operacion: str, resultado: Any
) -> None:
    # GIVEN two consumers of the same key (one with the local cache) and an operation with any outcome
    primero, segundo = crear_store(), crear_store(local_cache=True)
    clave = _clave_nueva()
    ejecuciones: list[int] = []

    def hacer() -> Any:
        ejecuciones.append(1)
        if operacion == "permanente":
            raise CobroRechazado("tarjeta denegada")
        if operacion == "transitorio":
            raise PasarelaNoDisponible("503")
        return object() if operacion == "no-json" else resultado

    def respuesta(store: IdempotencyStore) -> Any:
        try:
            return ("ok", store.run(clave, hacer))
        except Exception as exc:
            return ("error", type(exc))

    # WHEN the first runs it and the second gets the same key
    antes, despues = respuesta(primero), respuesta(segundo)
    # THEN a transient failure is the only one that lets the duplicate run it again; any other outcome ran once
    # and the duplicate got the same answer
    if operacion == "transitorio":
        assert antes == despues == ("error", PasarelaNoDisponible) and len(ejecuciones) == 2
    else:
        assert len(ejecuciones) == 1
        assert despues == {"no-json": ("error", OperationFailedError)}.get(operacion, antes)
