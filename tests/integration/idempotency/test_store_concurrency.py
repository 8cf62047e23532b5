"""Concurrency with real threads and a real process killed with SIGKILL."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco import aws
from mercadofresco.dominio import claves
from mercadofresco.errors import OperacionEnCurso
from mercadofresco.idempotency import Claim, IdempotencyStatus, IdempotencyStore

from tests.conftest import HANG_GUARD_S, plantilla_con_clave
from tests.integration.idempotency.apoyo_idempotencia import consumidor_que_muere

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

HILOS = 50
RESULTADO = {"referencia_cobro": "ch_0001"}


def test_fifty_threads_same_key_run_operation_exactly_once(tabla_idempotencia: str) -> None:
    # GIVEN 50 consumers (each its own client, as 50 Lambdas) released at the same instant
    stores = [IdempotencyStore(tabla_idempotencia, aws.client("dynamodb")) for _ in range(HILOS)]
    clave = claves.cobro("PED-2026-084417")
    ejecuciones: list[int] = []
    salida = threading.Barrier(HILOS, timeout=HANG_GUARD_S)
    duplicado_rechazado = threading.Event()

    def cobrar() -> dict[str, str]:
        ejecuciones.append(threading.get_ident())
        # "The gateway takes a moment": the charge lasts until a duplicate has met EN_CURSO, so the
        # race the test is about happens on every run, however the threads are scheduled.
        assert duplicado_rechazado.wait(HANG_GUARD_S), "no duplicate ever met the claim"
        return RESULTADO

    def consumidor(store: IdempotencyStore, resultados: list[Any]) -> None:
        salida.wait()  # no timeout: on a busy machine the 50th thread may start late, and that is fine
        try:
            resultados.append(store.run(clave, cobrar))
        except OperacionEnCurso as exc:
            resultados.append(exc)
            duplicado_rechazado.set()
        except Exception as exc:  # anything else is a failure of the test, kept to be asserted
            resultados.append(exc)

    def ronda() -> list[Any]:
        resultados: list[Any] = []
        hilos = [threading.Thread(target=consumidor, args=(s, resultados)) for s in stores]
        for h in hilos:
            h.start()
        for h in hilos:
            h.join(HANG_GUARD_S)
        assert not any(h.is_alive() for h in hilos), "a consumer thread hung"
        return resultados

    # WHEN they all run the same charge, and then all 50 are redelivered after it finished
    primera = ronda()
    segunda = ronda()
    # THEN the charge ran exactly once; everyone got its result or the in-progress error; then all got the result
    assert len(ejecuciones) == 1
    assert len(primera) == HILOS
    assert all(r == RESULTADO or type(r) is OperacionEnCurso for r in primera), primera
    assert primera.count(RESULTADO) >= 1
    assert any(type(r) is OperacionEnCurso for r in primera), "no duplicate met the claim: no race happened"
    assert segunda == [RESULTADO] * HILOS


RONDAS = 25


def test_two_claimers_racing_for_a_key_one_wins_the_other_meets_its_claim_then_its_result(
    tabla_idempotencia: str,
) -> None:
    # GIVEN two consumers (each its own client, as two Lambdas) whose claims, on each of 25 keys, leave for
    # DynamoDB only once both are built and about to be sent: the two conditional writes meet every time (without
    # the aws fixture's atomic_dynamodb_writes, moto let both win on some key within a few runs)
    stores = [IdempotencyStore(tabla_idempotencia, aws.client("dynamodb")) for _ in range(2)]
    a_la_vez = threading.Barrier(2, timeout=HANG_GUARD_S)
    en_carrera = threading.local()

    def esperar_al_otro(**_: Any) -> None:
        if getattr(en_carrera, "activa", False):
            a_la_vez.wait()

    for store in stores:
        store.records.client.meta.events.register("before-call.dynamodb.PutItem", esperar_al_otro)
    pedido = {"pedido_id": "PED-2026-084417", "importe_centimos": 4820}

    def reclamar(store: IdempotencyStore, clave: Any, reclamos: list[Any]) -> None:
        en_carrera.activa = True
        try:
            reclamos.append(store.claim(clave, payload=pedido))
        except Exception as exc:  # anything else is a failure of the test, kept to be asserted
            reclamos.append(exc)

    ganadores, perdedores, despues = [], [], []
    for ronda in range(RONDAS):
        clave = claves.cobro(f"PED-CARRERA-{ronda:03d}")
        reclamos: list[Any] = []
        hilos = [threading.Thread(target=reclamar, args=(s, clave, reclamos)) for s in stores]
        for h in hilos:
            h.start()
        for h in hilos:
            h.join(HANG_GUARD_S)
        assert not any(h.is_alive() for h in hilos), "a claimer thread hung"
        # WHEN they have both claimed, the winner completes, and both claim again
        ganador = next((r for r in reclamos if getattr(r, "won", False)), None)
        ganadores.append(sum(1 for r in reclamos if getattr(r, "won", False)))
        perdedores += [(r, ganador) for r in reclamos if r is not ganador]
        if ganador is not None:
            stores[0].complete(ganador, RESULTADO)
            despues += [s.claim(clave, payload=pedido) for s in stores]
    # THEN on every key exactly one won; the other was refused by the winner's live claim (EN_CURSO, its owner,
    # OperacionEnCurso to a duplicate), and after completion both get the stored result, no operation to run
    assert ganadores == [1] * RONDAS, perdedores
    assert all(isinstance(r, Claim) and not r.won for r, _ in perdedores), perdedores
    assert all(r.record.estado is IdempotencyStatus.EN_CURSO and r.owner == g.owner for r, g in perdedores)
    assert all(r.record.caduca_bloqueo == g.record.caduca_bloqueo for r, g in perdedores)
    for perdedor, _ in perdedores:
        with pytest.raises(OperacionEnCurso):
            perdedor.result()
    assert len(despues) == 2 * RONDAS
    assert all(not r.won and r.result() == RESULTADO for r in despues)


@pytest.fixture
def servidor_moto(moto_server: str) -> Iterator[tuple[str, str]]:
    """The idempotency table in a moto server, so another process sees the same DynamoDB."""
    from sam_emulator.moto_patches import atomic_dynamodb_writes
    from sam_emulator.template import create_table_from

    with atomic_dynamodb_writes():
        plantilla = plantilla_con_clave(endpoint_url=moto_server)
        yield (
            moto_server,
            create_table_from(aws.client("dynamodb", endpoint_url=moto_server), plantilla, "TablaIdempotencia"),
        )


def test_process_killed_after_claim_next_consumer_runs_once_after_lease(servidor_moto: tuple[str, str]) -> None:
    # GIVEN a consumer process that claimed the charge and was SIGKILLed while "the gateway processes it"
    url, tabla = servidor_moto
    contexto = multiprocessing.get_context("spawn")
    reclamado, ejecuciones = contexto.Event(), contexto.Value("i", 0)
    hijo = contexto.Process(target=consumidor_que_muere, args=(url, tabla, "PED-2026-084417", reclamado, ejecuciones))
    hijo.start()
    assert reclamado.wait(HANG_GUARD_S), "the child never claimed the key"
    os.kill(hijo.pid, signal.SIGKILL)
    hijo.join(HANG_GUARD_S)
    cliente = aws.client("dynamodb", endpoint_url=url)
    clave = claves.cobro("PED-2026-084417")
    huerfano = cliente.get_item(TableName=tabla, Key={"clave": {"S": clave}}, ConsistentRead=True)["Item"]
    # Consumers' clocks are set against the orphan's own lease end, not the wall clock: however long
    # this machine took to get here, "before" is inside the lease and "after" is past it.
    caduca_bloqueo = int(huerfano["caduca_bloqueo"]["N"])

    def cobrar() -> dict[str, str]:
        with ejecuciones.get_lock():
            ejecuciones.value += 1
        return RESULTADO

    def consumidor(ahora_s: float, resultados: list[Any]) -> None:
        store = IdempotencyStore(tabla, aws.client("dynamodb", endpoint_url=url), now_s=lambda: ahora_s)
        try:
            resultados.append(store.run(clave, cobrar))
        except OperacionEnCurso as exc:
            resultados.append(exc)

    # WHEN a consumer comes while the lease lives, then 10 consumers come at once after it lapsed
    antes: list[Any] = []
    consumidor(caduca_bloqueo - 1, antes)
    despues: list[Any] = []
    hilos = [threading.Thread(target=consumidor, args=(caduca_bloqueo + 1, despues)) for _ in range(10)]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(HANG_GUARD_S)
    assert not any(h.is_alive() for h in hilos), "a consumer thread hung"
    # THEN the orphan claim blocked the first; after the lease exactly one more run happened (2 in all)
    assert hijo.exitcode == -signal.SIGKILL
    assert huerfano["estado"] == {"S": "EN_CURSO"}
    assert type(antes[0]) is OperacionEnCurso
    assert ejecuciones.value == 2
    assert len(despues) == 10 and despues.count(RESULTADO) >= 1
    assert all(r == RESULTADO or type(r) is OperacionEnCurso for r in despues)
    final = cliente.get_item(TableName=tabla, Key={"clave": {"S": clave}}, ConsistentRead=True)["Item"]
    assert final["estado"] == {"S": "COMPLETADO"}
