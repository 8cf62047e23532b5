"""Fault kinds of the HTTP providers: the loopback stand-ins' fault script, drawn as windows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercadofresco_local.proveedores import Fallo

from mercadofresco_caos.calendario import Rechazo
from mercadofresco_caos.especificacion import consumidores
from mercadofresco_caos.registro import TipoFallo, entre, registrar

if TYPE_CHECKING:
    import random

    from mercadofresco_caos.calendario import Falta, Lienzo


def _ventana(tipo: TipoFallo, rng: random.Random, lienzo: Lienzo) -> tuple[float, float]:
    maximo = (
        tipo.p["ventana_max_s"] if "ventana_max_s" in tipo.p else lienzo.duracion_s * tipo.p["ventana_max_duracion"]
    )
    return lienzo.ventana(rng, tipo.p["ventana_min_s"], maximo)


@registrar
class TarjetaRechazada(TipoFallo):
    nombre = "tarjeta-rechazada"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        n = max(1, lienzo.pedidos // self.p["pedidos_por_rechazo"])
        return [Rechazo(numero) for numero in rng.sample(range(1, lienzo.pedidos + 1), n)]


@registrar
class PasarelaLenta(TipoFallo):
    nombre = "pasarela-lenta"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        d, h = _ventana(self, rng, lienzo)
        return [
            Fallo.latencia(
                self.p["latencia_s"], proveedor="pasarela", desde_s=d, hasta_s=h, proporcion=self.p["proporcion"]
            )
        ]


@registrar
class Pasarela5xx(TipoFallo):
    nombre = "pasarela-5xx"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        fallos: list[Falta] = []
        for _ in range(entre(rng, self.p["veces"])):
            d, h = _ventana(self, rng, lienzo)
            codigo = rng.choice(self.p["codigos"])
            fallos.append(
                Fallo.estado(codigo, proveedor="pasarela", desde_s=d, hasta_s=h, proporcion=self.p["proporcion"])
            )
        return fallos


@registrar
class PasarelaTiempoAgotado(TipoFallo):
    """Past the compressed read timeout (8 s / 20 = 0.4 s): the caller gives up, the outcome is unknown."""

    nombre = "pasarela-tiempo-agotado"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        d, h = _ventana(self, rng, lienzo)
        latencia, proporcion = self.p["latencia_s"], self.p["proporcion"]
        return [Fallo.tiempo_agotado(latencia, proveedor="pasarela", desde_s=d, hasta_s=h, proporcion=proporcion)]


@registrar
class PasarelaCaida(TipoFallo):
    nombre = "pasarela-caida"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        if rng.random() >= self.p["probabilidad"]:
            return []
        d, h = _ventana(self, rng, lienzo)
        return [Fallo.estado(503, proveedor="pasarela", desde_s=d, hasta_s=h)]


@registrar
class Proveedores5xx(TipoFallo):
    """The first provider of each consumer that calls one (:data:`.especificacion.CONSUMIDORES`): a second
    one, its fallback, stays up."""

    nombre = "proveedores-5xx"

    def sortear(self, rng: random.Random, lienzo: Lienzo) -> list[Falta]:
        fallos: list[Falta] = []
        for proveedor in (c.providers[0].dependency for c in consumidores(lienzo.plantilla)):
            d, h = _ventana(self, rng, lienzo)
            fallos.append(Fallo.estado(503, proveedor=proveedor, desde_s=d, hasta_s=h, proporcion=self.p["proporcion"]))
        return fallos
