"""The loopback provider stand-ins: Idempotency-Key semantics, counters and every injectable fault."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
import urllib3
from mercadofresco_local.fallos import ControlFallos
from mercadofresco_local.proveedores import Fallo, Pasarela, Proveedores
from sam_emulator.template import Template

from tests.conftest import HANG_GUARD_S, wait_until

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

COBRO = {"pedido_id": "PED-2026-084417", "importe_centimos": 4820, "moneda": "EUR", "token_tarjeta": "tok_visa"}


class RelojManual:
    """A clock the test moves by hand, so time windows need no sleeping."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def reloj() -> RelojManual:
    return RelojManual()


@pytest.fixture
def proveedores(reloj: RelojManual) -> Iterator[Proveedores]:
    with Proveedores(ControlFallos(reloj=reloj)) as p:
        yield p


@pytest.fixture
def soltar(proveedores: Proveedores, monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The gateway's fault waits (latency, timeout) last until the test sets this event, never a span of time."""
    evento = threading.Event()
    monkeypatch.setattr(proveedores.pasarela, "dormir", lambda _segundos: evento.wait(HANG_GUARD_S))
    yield evento
    evento.set()


@pytest.fixture
def http() -> urllib3.PoolManager:
    return urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=30, read=30))  # hang guards only


def _post(http: urllib3.PoolManager, url: str, cuerpo: dict[str, Any], clave: str | None = None, **kw: Any) -> Any:
    cabeceras = {"Idempotency-Key": clave} if clave else {}
    return http.request("POST", url, json=cuerpo, headers=cabeceras, **kw)


def test_pasarela_same_key_twice_one_cobro_and_the_same_reference(proveedores, http):
    # GIVEN the gateway
    url = proveedores.pasarela.url + "/cobros"
    # WHEN the same charge is sent twice with the same Idempotency-Key
    primera = _post(http, url, COBRO, "cobro:PED-2026-084417")
    segunda = _post(http, url, COBRO, "cobro:PED-2026-084417")
    # THEN one charge exists and the second answer replays the first
    assert primera.status == segunda.status == 201
    assert primera.json()["referencia_cobro"] == segunda.json()["referencia_cobro"]
    assert segunda.headers["Idempotent-Replayed"] == "true"
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 1
    assert proveedores.pasarela.llamadas["/cobros"] == 2


def test_pasarela_same_key_in_parallel_one_cobro(proveedores, http):
    # GIVEN 12 threads ready to charge the same order at once
    url = proveedores.pasarela.url + "/cobros"
    barrera = threading.Barrier(12, timeout=HANG_GUARD_S)
    referencias: list[str] = []

    def cobrar() -> None:
        barrera.wait()
        referencias.append(_post(http, url, COBRO, "cobro:PED-2026-084417").json()["referencia_cobro"])

    hilos = [threading.Thread(target=cobrar) for _ in range(12)]
    # WHEN they all send it
    for h in hilos:
        h.start()
    for h in hilos:
        h.join()
    # THEN exactly one charge was made and all saw its reference
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 1
    assert len(referencias) == 12 and len(set(referencias)) == 1


def test_pasarela_different_keys_charge_twice(proveedores, http):
    # GIVEN the gateway WHEN the same order is charged under two different keys (a consumer bug)
    url = proveedores.pasarela.url + "/cobros"
    _post(http, url, COBRO, "uuid-1")
    _post(http, url, COBRO, "uuid-2")
    # THEN the stand-in shows the double charge (the counter the tests rely on can fail)
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 2


def test_pasarela_without_key_answers_400_without_charging(proveedores, http):
    # GIVEN / WHEN a charge without Idempotency-Key
    respuesta = _post(http, proveedores.pasarela.url + "/cobros", COBRO)
    # THEN it is refused and nothing is charged
    assert respuesta.status == 400
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 0


def test_pasarela_declined_card_402_replayable_without_cobro(proveedores, http):
    # GIVEN a card the gateway declines
    proveedores.fallos.rechazar_tarjeta("tok_visa")
    url = proveedores.pasarela.url + "/cobros"
    # WHEN it is charged twice with the same key
    respuestas = [_post(http, url, COBRO, "cobro:PED-2026-084417") for _ in range(2)]
    # THEN both answers are 402 and no charge exists
    assert [r.status for r in respuestas] == [402, 402]
    assert respuestas[0].json()["error"] == "tarjeta_rechazada"
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 0


def test_pasarela_declined_amount_answers_402(proveedores, http):
    # GIVEN an amount the gateway declines
    proveedores.fallos.rechazar_importe(4820)
    # WHEN it is charged
    respuesta = _post(http, proveedores.pasarela.url + "/cobros", COBRO, "cobro:PED-2026-084417")
    # THEN it is declined
    assert respuesta.status == 402


def test_pasarela_reembolso_after_cobro_happens_once_and_a_repeat_does_not_duplicate_it(proveedores, http):
    # GIVEN a charged order
    base = proveedores.pasarela.url
    cobro = _post(http, base + "/cobros", COBRO, "cobro:PED-2026-084417").json()
    # WHEN it is refunded twice with the same key and once more with another key
    primera = _post(http, base + "/reembolsos", {"pedido_id": "PED-2026-084417"}, "reembolso:PED-2026-084417")
    segunda = _post(http, base + "/reembolsos", {"pedido_id": "PED-2026-084417"}, "reembolso:PED-2026-084417")
    otra = _post(http, base + "/reembolsos", {"referencia_cobro": cobro["referencia_cobro"]}, "otra-clave")
    # THEN one refund exists, the repeat replays it and the other key is refused
    assert (primera.status, segunda.status, otra.status) == (201, 201, 409)
    assert primera.json()["referencia_cobro"] == cobro["referencia_cobro"]
    assert proveedores.pasarela.reembolsos_de("PED-2026-084417") == 1


def test_pasarela_reembolso_without_cobro_answers_404(proveedores, http):
    # GIVEN no charge WHEN a refund is asked THEN 404 and no refund
    respuesta = _post(http, proveedores.pasarela.url + "/reembolsos", {"pedido_id": "PED-X"}, "reembolso:PED-X")
    assert respuesta.status == 404
    assert proveedores.pasarela.reembolsos_de("PED-X") == 0


def test_fault_status_in_window_applies_only_inside_the_window(proveedores, http, reloj):
    # GIVEN 503 scripted from t=10 s to t=40 s
    proveedores.fallos.programar(Fallo.estado(503, proveedor="pasarela", desde_s=10, hasta_s=40))
    url = proveedores.pasarela.url + "/cobros"
    estados = []
    # WHEN a charge is tried at t=5, 10, 39.9 and 40
    for t, clave in ((5, "a"), (10, "b"), (39.9, "c"), (40, "d")):
        reloj.t = t
        estados.append(_post(http, url, {**COBRO, "pedido_id": clave}, f"cobro:{clave}").status)
    # THEN only the calls inside the window failed, without charging
    assert estados == [201, 503, 503, 201]
    assert proveedores.pasarela.cobros_de("b") == proveedores.pasarela.cobros_de("c") == 0


def test_fault_window_of_an_anchored_provider_counts_from_its_first_request(proveedores, http, reloj):
    # GIVEN the gateway anchored at t=100 s of the control's clock, 503 from its t=10 s to t=40 s
    reloj.t = 100
    primera = proveedores.fallos.anclar("pasarela")
    proveedores.fallos.programar(Fallo.estado(503, proveedor="pasarela", desde_s=10, hasta_s=40))
    url = proveedores.pasarela.url + "/cobros"
    # WHEN the ERP is called first (its clock is not anchored), then the gateway's first charge
    # arrives at t=130 s and more at 5, 10 and 40 s after it
    reloj.t = 130
    _post(http, proveedores["erp"].url + "/avisos", {"pedido_id": "P1"}, "erp-aviso:P1")
    assert not primera.is_set()
    estados = []
    for t, clave in ((130, "a"), (135, "b"), (140, "c"), (170, "d")):
        reloj.t = t
        estados.append(_post(http, url, {**COBRO, "pedido_id": clave}, f"cobro:{clave}").status)
    # THEN the window counted from the gateway's first request (t=130), which set the event
    assert primera.is_set()
    assert estados == [201, 201, 503, 201]
    assert proveedores.fallos.ahora_s("pasarela") == 40
    assert proveedores.fallos.ahora_s("erp") == 170


def test_fault_503_is_not_remembered_and_the_retry_charges(proveedores, http):
    # GIVEN one 503
    proveedores.fallos.programar(Fallo.estado(503, veces=1))
    url = proveedores.pasarela.url + "/cobros"
    # WHEN the same key is retried
    estados = [_post(http, url, COBRO, "cobro:PED-2026-084417").status for _ in range(2)]
    # THEN the retry charges (a 5xx is not an answer to replay)
    assert estados == [503, 201]
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 1


def test_fault_times_runs_out(proveedores, http):
    # GIVEN 503 for the next two calls only
    proveedores.fallos.programar(Fallo.estado(503, veces=2))
    url = proveedores.pasarela.url + "/cobros"
    # WHEN three calls arrive
    estados = [_post(http, url, {**COBRO, "pedido_id": str(i)}, f"cobro:{i}").status for i in range(3)]
    # THEN the third succeeds
    assert estados == [503, 503, 201]


def test_fault_ratio_hits_a_fraction(reloj, http):
    # GIVEN a 30 % 500 rate with a seeded random source
    import random

    control = ControlFallos(reloj=reloj, rng=random.Random(7))
    control.programar(Fallo.estado(500, proporcion=0.3))
    with Pasarela(control) as pasarela:
        # WHEN 200 distinct charges are sent
        estados = [
            _post(http, pasarela.url + "/cobros", {**COBRO, "pedido_id": str(i)}, f"c:{i}").status for i in range(200)
        ]
    # THEN about 30 % failed
    assert 40 <= estados.count(500) <= 80
    assert estados.count(201) == 200 - estados.count(500)


def test_fault_rate_limit_answers_429_with_retry_after(proveedores, http):
    # GIVEN the gateway throttling
    proveedores.fallos.programar(Fallo.limite(retry_after_s=7, ruta="/cobros"))
    # WHEN a charge is sent
    respuesta = _post(http, proveedores.pasarela.url + "/cobros", COBRO, "cobro:PED-2026-084417")
    # THEN 429 with Retry-After, and nothing charged
    assert respuesta.status == 429
    assert respuesta.headers["Retry-After"] == "7"
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 0


def test_fault_timeout_client_gives_up_without_cobro(proveedores, http, soltar):
    # GIVEN the gateway holding requests (until the client has given up) and then dropping them
    proveedores.fallos.programar(Fallo.tiempo_agotado(3.0))
    # WHEN a client with a 0.2 s read timeout charges
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        _post(http, proveedores.pasarela.url + "/cobros", COBRO, "k", timeout=urllib3.Timeout(connect=1, read=0.2))
    soltar.set()
    # THEN it gave up before any answer (how fast is bench/'s business) and nothing was charged
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 0


def test_fault_latency_cobro_happens_after_the_client_gave_up(proveedores, http, soltar):
    # GIVEN the gateway slow to charge: it goes on only once the client has given up
    proveedores.fallos.programar(Fallo.latencia(2.0, veces=1))
    # WHEN a client with a 0.1 s read timeout charges and gives up
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        _post(http, proveedores.pasarela.url + "/cobros", COBRO, "k", timeout=urllib3.Timeout(connect=1, read=0.1))
    soltar.set()
    # THEN the charge still happens (the lesson's "charged, answer lost")
    wait_until(lambda: proveedores.pasarela.cobros_de("PED-2026-084417"), "the held charge to land")
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == 1


@pytest.mark.parametrize(("tras_procesar", "cobros"), [(False, 0), (True, 1)])
def test_fault_connection_cut_resets_with_an_effect_depending_on_the_moment(proveedores, http, tras_procesar, cobros):
    # GIVEN the gateway resetting the next connection, before or after charging
    proveedores.fallos.programar(Fallo.conexion_cortada(tras_procesar=tras_procesar, veces=1))
    # WHEN a charge is sent
    with pytest.raises(urllib3.exceptions.ProtocolError) as error:
        _post(http, proveedores.pasarela.url + "/cobros", COBRO, "cobro:PED-2026-084417")
    # THEN the client sees a reset, and the charge exists only if it was processed first
    assert "reset" in str(error.value).lower()
    assert proveedores.pasarela.cobros_de("PED-2026-084417") == cobros


def test_fault_per_provider_leaves_the_others_alone(proveedores, http):
    # GIVEN the principal e-mail provider down
    proveedores.fallos.programar(Fallo.estado(503, proveedor="correo-principal"))
    correo = {"destinatario": "ana@example.com", "plantilla": "confirmacion"}
    # WHEN both e-mail providers and the ERP are called
    principal = _post(http, proveedores["correo-principal"].url + "/correos", correo, "correo-confirmacion:P1")
    secundario = _post(http, proveedores["correo-secundario"].url + "/correos", correo, "correo-confirmacion:P1")
    erp = _post(http, proveedores["erp"].url + "/avisos", {"pedido_id": "P1"}, "erp-aviso:P1")
    # THEN only the principal failed, and the others recorded their effect
    assert (principal.status, secundario.status, erp.status) == (503, 202, 200)
    assert proveedores["correo-principal"].efectos_por_clave["correo-confirmacion:P1"] == 0
    # AND the failed request still counts as an attempt received for its key
    assert proveedores["correo-principal"].llamadas_por_clave["correo-confirmacion:P1"] == 1
    assert proveedores["correo-secundario"].efectos_por_clave["correo-confirmacion:P1"] == 1
    assert proveedores["erp"].efectos_por_clave["erp-aviso:P1"] == 1


def test_erp_reservas_counted_per_key(proveedores, http):
    # GIVEN / WHEN the same reservation twice and another
    url = proveedores["erp"].url + "/reservas"
    for clave in ("reserva:P1:SKU-1", "reserva:P1:SKU-1", "reserva:P1:SKU-2"):
        _post(http, url, {"pedido_id": "P1"}, clave)
    # THEN one effect per key
    assert proveedores["erp"].efectos_por_clave == {"reserva:P1:SKU-1": 1, "reserva:P1:SKU-2": 1}
    assert proveedores["erp"].llamadas["/reservas"] == 3
    assert proveedores["erp"].llamadas_por_clave == {"reserva:P1:SKU-1": 2, "reserva:P1:SKU-2": 1}


def test_pasarela_with_api_key_requires_authorization(http):
    # GIVEN a gateway that requires an API key
    with Pasarela(clave_api="secreto") as pasarela:
        # WHEN called without and with it
        sin = _post(http, pasarela.url + "/cobros", COBRO, "k")
        con = http.request(
            "POST",
            pasarela.url + "/cobros",
            json=COBRO,
            headers={"Idempotency-Key": "k", "Authorization": "Bearer secreto"},
        )
    # THEN only the authorised call charges
    assert (sin.status, con.status) == (401, 201)


def test_invalid_json_and_unknown_route_give_a_clear_error(proveedores, http):
    # GIVEN / WHEN a body that is not JSON, and an unknown route
    roto = http.request("POST", proveedores.pasarela.url + "/cobros", body=b"{no", headers={"Idempotency-Key": "k"})
    ruta = _post(http, proveedores.pasarela.url + "/nada", {}, "k2")
    # THEN 400 and 404 with a reason
    assert (roto.status, roto.json()["error"]) == (400, "json_invalido")
    assert (ruta.status, ruta.json()["error"]) == (404, "ruta_desconocida")


def test_stop_does_not_wait_for_held_requests(http):
    # GIVEN a request held by a 600 s timeout fault (were stop() to wait for it, the test would see its answer)
    pasarela = Pasarela().start()
    pasarela.fallos.programar(Fallo.tiempo_agotado(600))
    errores: list[BaseException] = []

    def cobrar() -> None:
        try:
            _post(http, pasarela.url + "/cobros", COBRO, "k", timeout=urllib3.Timeout(connect=1, read=900))
        except urllib3.exceptions.HTTPError as exc:
            errores.append(exc)

    hilo = threading.Thread(target=cobrar, daemon=True)
    hilo.start()
    wait_until(lambda: pasarela.llamadas["/cobros"], "the server to hold the request")
    # WHEN the server is stopped
    pasarela.stop()
    # THEN the held client sees its connection closed, not an answer, long before the hold would end
    hilo.join(HANG_GUARD_S)
    assert not hilo.is_alive()
    assert len(errores) == 1


def test_proveedores_env_points_each_template_variable_at_its_stand_in(proveedores):
    # GIVEN the running stand-ins WHEN asking for the functions' environment
    entorno = proveedores.entorno()
    # THEN every provider URL variable the template's functions read points at a distinct loopback server
    variables = {
        nombre
        for props in Template().of_type("AWS::Serverless::Function").values()
        for nombre in props.get("Properties", {}).get("Environment", {}).get("Variables", {})
        if nombre.endswith("_URL")
    }
    assert variables <= set(entorno)
    assert len(set(entorno.values())) == 4
    assert all(url.startswith("http://127.0.0.1:") for url in entorno.values())
