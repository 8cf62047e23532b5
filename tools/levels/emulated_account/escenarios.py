"""The deploy level's orders: what happens to each, through the deployed store API, and what to expect.

- :meth:`Escenarios.caida_de_la_pasarela`: the sandbox gateway answers 503 to everything (its fault
  setting, the template's ``SimuladorProporcionFallos``, changed in the function's environment as a
  redeploy with that parameter does); orders keep coming until the gateway's shared breaker opens on its
  own; one placed then must fail fast and end ``NO_CONFIRMADO`` with the customer told; the gateway
  recovers, and one placed past the open period is the probe that closes the breaker again;
- :meth:`Escenarios.duplicados`: a confirmed order's ``PedidoCreado`` published to the bus again (a relay
  that died between ``PutEvents`` and marking its row) and its ``PedidoConfirmado`` published to the topic
  again (at-least-once delivery): one charge, one ERP notice, one e-mail;
- :meth:`Escenarios.reembolso`: an order whose confirmation cannot be published (sent to a topic that does
  not exist, ``gaps.py``) after its charge and its stock reservations: refunded once, each line released;
- :meth:`Escenarios.rafaga`: ``TiendaBurstLimit`` orders at once;
- orders placed with ``mf-smoke`` (:func:`mf_smoke`), as a user does, declined cards included.

Every order placed is returned; :mod:`emulated_account.observaciones` reads what the stack did with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import urllib3
from mercadofresco.circuit_breaker import BreakerState

from emulated_account.despliegue import RAIZ, VENV_BIN
from emulated_account.observaciones import ESPERA_S, esperar

if TYPE_CHECKING:
    from emulated_account.observaciones import Cuenta

CLIENTE_RECHAZADO = "CLI-TARJETA-RECHAZADA"  # in SimuladorTarjetasRechazadas' default
CLIENTE_SIN_CONFIRMACION = "SMOKE-CONFIRMACION-PERDIDA"  # its confirmation goes to no topic (MF_TEMA_AUSENTE)
LINEAS = (("FRU-MAN-001", 2, 249), ("VER-TOM-014", 1, 189), ("LAC-LEC-003", 3, 115))
OLEADAS_CAIDA = 4  # orders placed two at a time until the breaker opens: a bound, not a pace
INTENTOS_TIENDA = 5  # a client's retries with the same Idempotency-Key after a 429/503


def pedido(cliente_id: str, lineas: tuple[tuple[str, int, int], ...] = LINEAS[:1]) -> dict[str, Any]:
    return {
        "cliente_id": cliente_id,
        "email": f"{cliente_id.lower()}@example.com",
        "moneda": "EUR",
        "lineas": [{"sku": s, "cantidad": c, "precio_centimos": p} for s, c, p in lineas],
    }


def mf_smoke(cuenta: Cuenta, nombre: str, n: int, carpeta: Path, cliente: str | None = None) -> dict[str, Any]:
    """``mf-smoke`` against the deployed store API, as docs/emulated-account.md tells a user; its JSON and exit code."""
    salida = carpeta / f"smoke-{nombre}.json"
    comando = [
        str(VENV_BIN / "mf-smoke"), "--url", cuenta.url_tienda, "--firmar", "si", "-n", str(n),
        "--espera-s", str(ESPERA_S), "--json", str(salida), *(["--cliente", cliente] if cliente else []),
    ]  # fmt: skip
    entorno = {**os.environ, **cuenta.estado.entorno()}
    hecho = subprocess.run(comando, cwd=RAIZ, env=entorno, capture_output=True, text=True, check=False)
    print(hecho.stdout + hecho.stderr[-3000:], flush=True)
    resultado = json.loads(salida.read_text()) if salida.exists() else {"pedidos": [], "errores": []}
    return {**resultado, "codigo": hecho.returncode}


@dataclass
class Escenarios:
    cuenta: Cuenta
    reintentos: int = 0  # orders whose POST was answered 200 (the same order) after a retry with its key

    def colocar(self, cuerpo: dict[str, Any]) -> str:
        """``POST /pedidos`` with a fresh ``Idempotency-Key``, retried with the SAME key on 429/5xx, as the API asks."""
        clave = f"nivel-{uuid.uuid4().hex}"
        respuesta: Any = None
        for _ in range(INTENTOS_TIENDA):
            try:
                codigo, respuesta = self.cuenta.tienda.crear(cuerpo, clave)
            except urllib3.exceptions.HTTPError as exc:  # no answer (a cold start past the client's timeout)
                codigo, respuesta = 0, repr(exc)
            if codigo in (200, 201):
                self.reintentos += codigo == 200  # a retry found the order its first attempt made
                return respuesta["pedido_id"]
            if codigo not in (0, 429, 500, 502, 503, 504):
                break
            time.sleep(2)  # the store's Retry-After: a client's pace, not a synchronisation
        raise RuntimeError(f"the store refused an order ({codigo}): {respuesta}")

    def a_la_vez(self, cuerpos: list[dict[str, Any]]) -> list[str]:
        """Place every order at the same moment (one thread each, released together); their ids."""
        barrera, ids, errores = threading.Barrier(len(cuerpos)), [None] * len(cuerpos), []

        def colocar(i: int) -> None:
            barrera.wait()
            try:
                ids[i] = self.colocar(cuerpos[i])
            except Exception as exc:  # reported with the others: a lost order is the finding
                errores.append(repr(exc))

        hilos = [threading.Thread(target=colocar, args=(i,)) for i in range(len(cuerpos))]
        for hilo in hilos:
            hilo.start()
        for hilo in hilos:
            hilo.join()
        if errores:
            raise RuntimeError(f"{len(errores)} of {len(cuerpos)} orders refused: {errores[:3]}")
        return [i for i in ids if i]

    # ------------------------------------------------------------------ the gateway down, then up again
    def _fallos_de_la_pasarela(self, proporcion: str) -> None:
        simulador = self.cuenta.simulador("pasarela")
        variables = {**self.cuenta.variables(simulador), "SIMULADOR_PROPORCION_FALLOS": proporcion}
        self.cuenta.cliente("lambda").update_function_configuration(
            FunctionName=simulador, Environment={"Variables": variables}
        )

    def caida_de_la_pasarela(self) -> dict[str, Any]:
        obs: dict[str, Any] = {"durante": []}
        self._fallos_de_la_pasarela("1")
        try:
            for _ in range(OLEADAS_CAIDA):
                obs["durante"] += self.a_la_vez([pedido(f"SMOKE-CAIDA-{len(obs['durante']) + i}") for i in (0, 1)])
                if self._abierto_o_en_espera(obs["durante"]) == "abierto":
                    break
            abierto = self.cuenta.breaker("pasarela")
            obs["abierto"] = {"estado": abierto.state.value, "aperturas": abierto.openings}
            obs["con_el_circuito_abierto"] = self.colocar(pedido("SMOKE-CIRCUITO-ABIERTO"))
            obs["final_con_el_circuito_abierto"] = esperar(
                lambda: self.cuenta.finales([obs["con_el_circuito_abierto"]]), "the order placed while open"
            )
        finally:
            self._fallos_de_la_pasarela("0")
        # Past the open period the next call is the one probe: an order placed now closes the breaker.
        hasta_ms = self.cuenta.breaker("pasarela").open_until_ms
        esperar(lambda: self._ahora_ms() > hasta_ms, "the breaker's open period", cada_s=1)
        obs["tras_recuperarse"] = self.colocar(pedido("SMOKE-TRAS-CAIDA"))
        esperar(lambda: self.cuenta.finales([obs["tras_recuperarse"]]), "the order after the recovery")
        obs["cerrado"] = self.cuenta.breaker("pasarela").state.value
        return obs

    def _ahora_ms(self) -> int:
        segundos, micros = self.cuenta._valkey.time()  # the breaker's clock is Valkey's
        return segundos * 1000 + micros // 1000

    def _abierto_o_en_espera(self, pedidos: list[str]) -> str:
        """Wait until the breaker opened, or every order of the outage waits to ask again (then: more orders)."""

        def visto() -> str | None:
            if self.cuenta.breaker("pasarela").state is BreakerState.ABIERTO:
                return "abierto"
            ejecuciones = self.cuenta.ejecuciones(pedidos)
            if all(any("EsperarFinBloqueo" in e["estados"] for e in ejecuciones[p]) for p in pedidos):
                return "en espera"
            return None

        return esperar(visto, "the gateway's breaker opening, or the orders waiting to ask again")

    # ------------------------------------------------------------------ duplicates of a confirmed order
    def duplicados(self, pedido_id: str) -> dict[str, Any]:
        """``PedidoCreado`` delivered again and ``PedidoConfirmado`` published again; waits until both are handled.

        The first is the order queue's message sent to it once more (SQS delivers at least once; a relay that
        died between ``PutEvents`` and marking its row gives the same), the second the confirmation the
        execution published, published to its topic again.
        """
        cola, registro = self._pedido_creado(pedido_id)
        sqs = self.cuenta.cliente("sqs")
        sqs.send_message(QueueUrl=sqs.get_queue_url(QueueName=cola)["QueueUrl"], MessageBody=registro["body"])
        self.cuenta.cliente("sns").publish(**self._confirmacion(pedido_id))
        esperar(lambda: len(self.cuenta.ejecuciones([pedido_id])[pedido_id]) == 2, "the duplicate's execution")
        esperar(
            lambda: not any(self.cuenta.profundidades([cola, *self.cuenta.colas_del_reparto]).values()),
            "the duplicates consumed",
        )
        return {"pedido": pedido_id, "cola": cola}

    def _pedido_creado(self, pedido_id: str) -> tuple[str, dict[str, Any]]:
        """The order queue (the pipe's source, as deployed) and the record its execution started from."""
        (registro,) = json.loads(self.cuenta.entradas([pedido_id])[pedido_id][0])
        return registro["eventSourceARN"].rsplit(":", 1)[1], registro

    def _confirmacion(self, pedido_id: str) -> dict[str, Any]:
        """The ``sns:publish`` the order's execution made, as the account recorded its task (``states.*.jsonl``)."""
        for linea in sorted(Path(self.cuenta.estado.registro_iam).rglob("states.*.jsonl")):
            for texto in linea.read_text().splitlines():
                tarea = json.loads(texto)
                parametros = tarea["parametros"]
                if tarea["recurso"].endswith(":sns:publish") and pedido_id in str(parametros.get("Message", "")):
                    return {k: v for k, v in parametros.items() if k in ("TopicArn", "Message", "MessageAttributes")}
        raise LookupError(f"no PedidoConfirmado published for {pedido_id}")

    # ------------------------------------------------------------------ a refund
    def reembolso(self) -> str:
        """An order of several lines whose confirmation the account sends to a topic that does not exist."""
        ruta = Path(self.cuenta.estado.tema_ausente)
        ruta.write_text(json.dumps([CLIENTE_SIN_CONFIRMACION]))
        return self.colocar(pedido(CLIENTE_SIN_CONFIRMACION, LINEAS[:2]))

    # ------------------------------------------------------------------ a burst
    def rafaga(self) -> list[str]:
        """``TiendaBurstLimit`` orders at the same moment (the API's burst limit as deployed)."""
        limite = int(self.cuenta.parametros.get("TiendaBurstLimit") or self._limite_por_defecto())
        return self.a_la_vez([pedido(f"SMOKE-RAFAGA-{i}", LINEAS[i % 3 : i % 3 + 1]) for i in range(limite)])

    def _limite_por_defecto(self) -> str:
        return str(self.cuenta.plantilla.doc["Parameters"]["TiendaBurstLimit"]["Default"])
