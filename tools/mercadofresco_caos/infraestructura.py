"""Fault kinds of the infrastructure the functions share: Redis, PostgreSQL, the confirmation topic."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mercadofresco_caos.calendario import Suceso
from mercadofresco_caos.registro import TipoFallo, entre, registrar

if TYPE_CHECKING:
    import random

    from mercadofresco_caos.calendario import Falta, Lienzo
    from mercadofresco_caos.orquesta import Orquesta

ESPERA_COBRO_S = 30.0


@registrar
class RedisCongelado(TipoFallo):
    """The run's PRIVATE Redis stopped (SIGSTOP) for a window, then resumed (SIGCONT)."""

    nombre = "redis-congelado"
    sucesos = ("congelar-redis", "descongelar-redis")

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        d, h = lienzo.ventana(rng, self.p["ventana_min_s"], self.p["ventana_max_s"])
        return [Suceso(d, "congelar-redis", valor=h - d), Suceso(h, "descongelar-redis", final=True)]

    def aplicar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        redis = orquesta.sesion.redis_privado
        assert redis is not None
        redis.freeze() if suceso.tipo == "congelar-redis" else redis.thaw()

    def parar(self, orquesta: Orquesta) -> None:
        assert orquesta.sesion.redis_privado is not None
        orquesta.sesion.redis_privado.thaw()


@registrar
class PostgresReiniciado(TipoFallo):
    """The run's PRIVATE PostgreSQL server restarted; ``valor``: how long it stays down (compressed s)."""

    nombre = "postgres-reiniciado"
    sucesos = ("reiniciar-postgres",)

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        return [
            Suceso(
                round(rng.uniform(0, lienzo.duracion_s), 2),
                "reiniciar-postgres",
                valor=rng.uniform(self.p["caido_min_s"], self.p["caido_max_s"]),
            )
            for _ in range(entre(rng, self.p["veces"]))
        ]

    def aplicar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        orquesta.sesion.reiniciar_postgres(suceso.valor)


@registrar
class SinTema(TipoFallo):
    """From the moment the gateway charged an order, its confirmation (and any other's in the window) fails."""

    nombre = "sin-tema"
    sucesos = ("sin-tema",)

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        if rng.random() >= self.p["probabilidad"]:
            return []
        numero = rng.randint(1, lienzo.pedidos)
        largo = round(rng.uniform(self.p["largo_min_s"], self.p["largo_max_s"]), 1)
        return [Suceso(round(numero / lienzo.ritmo_por_s, 2), "sin-tema", numero, valor=largo)]

    def aplicar(self, suceso: Suceso, orquesta: Orquesta) -> None:
        pasarela = orquesta.sesion.proveedores.pasarela
        pedido_id = f"{orquesta.prefijo}{suceso.pedido:06d}"
        limite = time.monotonic() + ESPERA_COBRO_S
        while not pasarela.cobros_de(pedido_id) and time.monotonic() < limite and not orquesta.parada.is_set():
            time.sleep(0.02)  # polling the stand-in's record, not a synchronisation with the workflow
        self._tema(orquesta, presente=False)
        orquesta.parada.wait(suceso.valor)
        self._tema(orquesta, presente=True)

    def parar(self, orquesta: Orquesta) -> None:
        self._tema(orquesta, presente=True)

    def _tema(self, orquesta: Orquesta, presente: bool) -> None:
        """Take the confirmation topic out of moto's SNS backend, or put the same one back.

        While it is out, ``sns:Publish`` answers NotFound (the step after the charge fails and the
        workflow refunds). Put back, it is the same object with the same subscriptions in one dict
        assignment: deleting and recreating it (topic, then each subscription) left a window in which
        a confirmation reached a topic with no subscribers, a loss the emulation made, not the system.
        """
        from moto.sns.models import sns_backends

        rt = orquesta.sesion.runtime
        assert rt is not None
        arn = rt.template.ref("TopicPedidoConfirmado")
        _, _, _, region, cuenta, _ = arn.split(":", 5)
        temas = sns_backends[cuenta][region].topics
        if not presente:
            if arn in temas:
                orquesta.estado[self.nombre] = temas.pop(arn)
        elif (apartado := orquesta.estado.pop(self.nombre, None)) is not None:
            temas[arn] = apartado
