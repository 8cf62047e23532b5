"""Fault kinds of message delivery: duplicate, late and redriven ``PedidoCreado``, repeated fan-out notices."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mercadofresco.aws import client
from mercadofresco_local.flujo import reparto

from mercadofresco_caos.calendario import Suceso
from mercadofresco_caos.registro import TipoFallo, entre, registrar

if TYPE_CHECKING:
    import random

    from mercadofresco_caos.calendario import Falta, Lienzo
    from mercadofresco_caos.orquesta import Orquesta

ESPERA_AVISO_S = 240.0  # a notice exists only once its order is confirmed: at most a drain later


def _repetidas(
    tipo: TipoFallo, rng: random.Random, lienzo: Lienzo, pedidos: list[int], nombres: tuple[str, str]
) -> list[Falta]:
    """Some orders' message again, at once (``nombres[0]``) or ``valor`` seconds late (``nombres[1]``)."""
    sucesos: list[Falta] = []
    n = min(len(pedidos), max(1, lienzo.pedidos // tipo.p["pedidos_por_repeticion"]))
    for numero in rng.sample(pedidos, n):
        t = round(numero / lienzo.ritmo_por_s + rng.uniform(0.5, 2.0), 2)
        if rng.random() < 0.5:
            sucesos.append(Suceso(t, nombres[0], numero))
        else:
            retraso = round(rng.uniform(tipo.p["retraso_min_s"], tipo.p["retraso_max_s"]), 1)
            sucesos.append(Suceso(t, nombres[1], numero, valor=retraso))
    return sucesos


@registrar
class PedidoRepetido(TipoFallo):
    nombre = "pedido-repetido"
    sucesos = ("duplicar", "tardio")

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        return _repetidas(self, rng, lienzo, list(range(1, lienzo.pedidos + 1)), self.sucesos)  # type: ignore[arg-type]

    def aplicar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        assert suceso.pedido is not None and orquesta.sesion.runtime is not None
        client("sqs").send_message(
            QueueUrl=orquesta.sesion.runtime.queue_url_of("ColaPedidos"),
            MessageBody=orquesta.copia(suceso.pedido),
            DelaySeconds=int(suceso.valor),
        )


@registrar
class RedriveDlq(TipoFallo):
    nombre = "redrive-dlq"
    sucesos = ("a-dlq", "redrive")

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        pedidos = rng.sample(range(1, lienzo.pedidos + 1), entre(rng, self.p["veces"]))
        sucesos: list[Falta] = [Suceso(round(n / lienzo.ritmo_por_s + 1.0, 2), "a-dlq", n) for n in pedidos]
        return [*sucesos, Suceso(round(max(n / lienzo.ritmo_por_s for n in pedidos) + 1.5, 2), "redrive")]

    def aplicar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        sesion = orquesta.sesion
        if suceso.tipo == "a-dlq":
            assert suceso.pedido is not None and sesion.runtime is not None
            url = sesion.runtime.queue_url_of("ColaPedidosFallidos")
            client("sqs").send_message(QueueUrl=url, MessageBody=orquesta.copia(suceso.pedido))
            return
        from mercadofresco_local.ejercicios import mf_dlq

        resultado = mf_dlq(sesion, "reprocesar", "--tasa", str(self.p["tasa_por_s"]))
        if resultado["codigo"] != 0:
            raise RuntimeError(f"mf-dlq reprocesar exited {resultado['codigo']}: {resultado['error'][-300:]}")


@registrar
class AvisoRepetido(TipoFallo):
    """A confirmed order's PedidoConfirmado again to each fan-out queue whose consumer calls a provider
    (:func:`mercadofresco_local.flujo.reparto`; a declined order has none)."""

    nombre = "aviso-repetido"
    sucesos = ("duplicar-aviso", "tardio-aviso")

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        confirmables = [n for n in range(1, lienzo.pedidos + 1) if n not in lienzo.rechazados]
        return _repetidas(self, rng, lienzo, confirmables, self.sucesos)  # type: ignore[arg-type]

    def aplicar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        # In its own thread: the notice exists only once the order is confirmed, seconds later.
        orquesta.en_hilo("caos-aviso", lambda: self._repetir(suceso, orquesta))

    def _repetir(self, suceso: Suceso, orquesta: Orquesta) -> None:
        sesion = orquesta.sesion
        assert suceso.pedido is not None and sesion.runtime is not None
        limite = time.monotonic() + ESPERA_AVISO_S
        while suceso.pedido not in orquesta.avisos:
            if orquesta.parada.is_set() or time.monotonic() > limite:
                return  # never confirmed (declined, refunded, not confirmed): there is no notice to repeat
            orquesta.leer_grifo(sesion.grifo_avisos_url, orquesta.avisos)
        aviso = orquesta.avisos[suceso.pedido]
        atributos = {
            nombre: {"DataType": a["DataType"], "StringValue": a["StringValue"]}
            for nombre, a in aviso.get("MessageAttributes", {}).items()
            if "StringValue" in a
        }
        try:
            for cola in reparto(sesion.runtime.template):
                client("sqs").send_message(
                    QueueUrl=sesion.runtime.queue_url_of(cola),
                    MessageBody=aviso["Body"],
                    MessageAttributes=atributos,
                    DelaySeconds=int(suceso.valor),
                )
                orquesta.repetidos.append(f"{cola} <- {suceso.pedido}")
        except Exception as exc:  # reported, not fatal, like every other fault that could not be injected
            orquesta.errores.append(f"{suceso.describir()}: {type(exc).__name__}: {exc}")
