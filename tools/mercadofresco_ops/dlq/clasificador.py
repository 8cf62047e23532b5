"""Classify a DLQ sample as transitorio / envenenado / de datos, with the evidence.

The lesson's rule: the time distribution is a clue, the content is the proof. So content
signatures (unreadable bodies, an unexpected ``version``, the reason the consumer attached)
decide first; the distribution and the receive counts only decide when the content is clean,
and are always reported, because a window that *looks* transient (exercise 2: 340 messages
in 1 h 47 min after a deploy) can hide poison (all ``"version": 2``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mercadofresco.dlq import Motivo

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mercadofresco_ops.dlq.mensajes import MensajeDlq

TRANSITORIO = "transitorio"
ENVENENADO = "envenenado"
DE_DATOS = "de datos"

VENTANA_S = 2 * 3600  # a "window": most of the sample entered within two hours (the lesson's 30 min, 1 h 47 min)
PROPORCION_DOMINANTE = 0.8  # share that makes a signature, a window or a reason "the same for all"
PROPORCION_UNIFORME = 0.9  # share of the most common ApproximateReceiveCount that makes it uniform
BARRAS_HISTOGRAMA = 12
DIAS = ("lun", "mar", "mié", "jue", "vie", "sáb", "dom")  # not %a: the C locale would print "Sun"
BARRA_MIN_MS = 60_000  # the labels have minute resolution
ANCHO_BARRA = 30


@dataclass(frozen=True)
class Distribucion:
    """When the sample entered the queue (SentTimestamp)."""

    forma: str  # "ventana", "goteo" or "desconocida"
    inicio: datetime | None = None
    fin: datetime | None = None
    concentracion: float = 0.0  # largest share of the sample inside any VENTANA_S window
    histograma: list[tuple[datetime, int]] = field(default_factory=list)

    @property
    def duracion_s(self) -> float:
        return (self.fin - self.inicio).total_seconds() if self.inicio and self.fin else 0.0

    def texto_histograma(self) -> list[str]:
        """Text bars, one per bin, labelled with the bin's start (UTC)."""
        maximo = max((n for _, n in self.histograma), default=0) or 1
        return [
            f"{momento(inicio)} │{'█' * round(ANCHO_BARRA * n / maximo):<{ANCHO_BARRA}}│ {n}"
            for inicio, n in self.histograma
        ]


@dataclass(frozen=True)
class Diagnostico:
    """The classification, how sure it is, and the evidence an on-call can check."""

    tipo: str
    confianza: str  # "alta" (the content proves it) / "media" / "baja"
    explicacion: str
    evidencias: list[str]
    distribucion: Distribucion
    muestra: int

    def a_dict(self) -> dict[str, Any]:
        d = self.distribucion
        return {
            "tipo": self.tipo,
            "confianza": self.confianza,
            "explicacion": self.explicacion,
            "evidencias": self.evidencias,
            "muestra": self.muestra,
            "distribucion": {
                "forma": d.forma,
                "inicio": d.inicio.isoformat() if d.inicio else None,
                "fin": d.fin.isoformat() if d.fin else None,
                "duracion_s": d.duracion_s,
                "concentracion": round(d.concentracion, 3),
                "histograma": [{"desde": t.isoformat(), "mensajes": n} for t, n in d.histograma],
            },
        }


def momento(fecha: datetime) -> str:
    """``dom 22 22:04``: weekday, day and time, as the on-call reads a DLQ's time window."""
    return f"{DIAS[fecha.weekday()]} {fecha:%d %H:%M}"


def duracion_legible(segundos: float) -> str:
    """``6420`` → ``"1 h 47 min"``; days for long spans."""
    minutos = round(segundos / 60)
    dias, resto = divmod(minutos, 24 * 60)
    horas, minutos = divmod(resto, 60)
    partes = [f"{dias} d" if dias else "", f"{horas} h" if horas else "", f"{minutos} min" if minutos else ""]
    return " ".join(p for p in partes if p) or "0 min"


def distribucion(tiempos_ms: Sequence[int]) -> Distribucion:
    """Window or trickle, from the messages' SentTimestamp (milliseconds)."""
    tiempos = sorted(tiempos_ms)
    if len(tiempos) < 2:
        return Distribucion("desconocida")
    # Largest number of messages inside any VENTANA_S-long window (two pointers over sorted times).
    mejor, j = 0, 0
    for i, t in enumerate(tiempos):
        while t - tiempos[j] > VENTANA_S * 1000:
            j += 1
        mejor = max(mejor, i - j + 1)
    concentracion = mejor / len(tiempos)
    inicio, fin = tiempos[0], tiempos[-1]
    ancho = max((fin - inicio) / BARRAS_HISTOGRAMA, BARRA_MIN_MS)
    barras = min(BARRAS_HISTOGRAMA, int((fin - inicio) / ancho) + 1)
    cuentas = Counter(min(int((t - inicio) / ancho), barras - 1) for t in tiempos)
    histograma = [(_fecha(inicio + k * ancho), cuentas.get(k, 0)) for k in range(barras)]
    forma = "ventana" if concentracion >= PROPORCION_DOMINANTE else "goteo"
    return Distribucion(forma, _fecha(inicio), _fecha(fin), concentracion, histograma)


def _fecha(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def firma(mensaje: MensajeDlq, version_esperada: Any) -> str | None:
    """The content defect that explains this message, or None when its content looks fine."""
    if mensaje.cuerpo_invalido or mensaje.motivo == Motivo.JSON_INVALIDO:
        return "cuerpo ilegible (no es un objeto JSON)"
    if mensaje.motivo == Motivo.VERSION_DESCONOCIDA or (
        version_esperada is not None and mensaje.version is not None and mensaje.version != version_esperada
    ):
        return f'"version": {mensaje.version!r} (se espera {version_esperada!r})'
    if mensaje.motivo in (Motivo.CAMPO_AUSENTE, Motivo.DATO_INVALIDO):
        return f"{mensaje.motivo}: {mensaje.detalle or 'sin detalle'}"
    if mensaje.version is None:
        return 'campo-ausente: "version"'
    return None


def clasificar(mensajes: Sequence[MensajeDlq], version_esperada: Any = 1) -> Diagnostico:
    """Classify a non-empty sample; see the module docstring for the order of the evidence."""
    if not mensajes:
        raise ValueError("una muestra vacía no se puede clasificar")
    n = len(mensajes)
    dist = distribucion([m.enviado_ms for m in mensajes if m.enviado_ms is not None])
    firmas = Counter(f for m in mensajes if (f := firma(m, version_esperada)))
    evidencias = [_evidencia_distribucion(dist), _evidencia_recepciones(mensajes), _evidencia_motivos(mensajes)]
    defectuosos = sum(firmas.values())
    if defectuosos >= n / 2:
        return _por_contenido(firmas, n, dist, evidencias)
    if defectuosos:
        evidencias.append(f"contenido: {defectuosos}/{n} con defecto ({', '.join(firmas)}): sepáralos con --filtro")
    else:
        evidencias.append(f"contenido: sin defecto visible en {n}/{n} (JSON válido, version {version_esperada!r})")
    aplazados = sum(m.motivo == Motivo.APLAZAMIENTOS_AGOTADOS for m in mensajes)
    if aplazados >= PROPORCION_DOMINANTE * n:
        return Diagnostico(
            TRANSITORIO,
            "alta",
            "Agotaron los aplazamientos con el circuito abierto: la dependencia "
            "estuvo caída. Cuando vuelva, el redrive los procesa.",
            evidencias,
            dist,
            n,
        )
    if dist.forma == "ventana":
        confianza = "media" if defectuosos else "alta"
        return Diagnostico(
            TRANSITORIO,
            confianza,
            "Contenido sano y entrada concentrada en una ventana: una caída "
            "pasajera. Confirma la caída en las métricas de la dependencia (paso 3) antes del redrive.",
            evidencias,
            dist,
            n,
        )
    sin_motivo = sum(m.motivo is None for m in mensajes)
    if dist.forma == "goteo" and sin_motivo >= PROPORCION_DOMINANTE * n:
        # Valid content, no reason, over hours: the consumer failed on *good* messages now and then.
        # Not bad data (nothing is wrong with them): a dependency that flaps, or a consumer bug.
        return Diagnostico(
            TRANSITORIO,
            "baja",
            f"Mensajes válidos sin motivo que gotean durante "
            f"{duracion_legible(dist.duracion_s)}: el consumidor falló {n} veces con mensajes sanos "
            "sin reconocerlos como inválidos. Es una dependencia intermitente (timeouts, 5xx a ratos) "
            "o un fallo del consumidor, no datos malos. Mira los errores del consumidor en esa franja "
            "(paso 3, «Errores por tipo»): si son timeouts/5xx de la dependencia, reprocesa cuando esté "
            "estable; si es una excepción del código, corrígela y después reprocesa.",
            evidencias,
            dist,
            n,
        )
    return Diagnostico(
        DE_DATOS,
        "baja",
        "Contenido aparentemente sano pero entrada en goteo, con motivos del "
        "consumidor: rechaza mensajes concretos. Busca la excepción en los registros por MessageId "
        "(paso 3) antes de decidir.",
        evidencias,
        dist,
        n,
    )


def _por_contenido(firmas: Counter[str], n: int, dist: Distribucion, evidencias: list[str]) -> Diagnostico:
    """Most of the sample has a content defect: the content decides (the distribution only colours the text)."""
    defectuosos = sum(firmas.values())
    ((principal, veces),) = firmas.most_common(1)
    evidencias.append(f"contenido: {defectuosos}/{n} con defecto; el más común «{principal}» en {veces}/{n}")
    mayoria = defectuosos >= PROPORCION_DOMINANTE * n
    if veces >= PROPORCION_DOMINANTE * defectuosos and not principal.startswith(("campo-ausente", "dato-invalido")):
        tipo, confianza, explicacion = (
            ENVENENADO,
            "alta" if mayoria else "media",
            _explicar_envenenado(principal, veces, n, dist),
        )
    else:
        tipo, explicacion = DE_DATOS, _explicar_datos(firmas, dist)
        confianza = "alta" if mayoria and dist.forma == "goteo" else "media"
    return Diagnostico(tipo, confianza, explicacion, evidencias, dist, n)


def _explicar_envenenado(principal: str, veces: int, n: int, dist: Distribucion) -> str:
    texto = f"El contenido es la prueba: {veces}/{n} mensajes comparten el mismo defecto ({principal}). "
    if dist.forma == "ventana":
        texto += (
            f"La distribución (una ventana de {duracion_legible(dist.duracion_s)}) parece la de un fallo "
            "transitorio, pero es solo una pista: coincide con el tiempo en que un productor nuevo convivió "
            "con un consumidor antiguo (¿hubo un despliegue?). "
        )
    return texto + "Un redrive sin corregir el consumidor los devolverá a la DLQ."


def _explicar_datos(firmas: Counter[str], dist: Distribucion) -> str:
    forma = f"en goteo durante {duracion_legible(dist.duracion_s)}" if dist.forma == "goteo" else "en una ventana"
    defectos = (
        "Valores que el consumidor rechazó"
        if len(firmas) == 1
        else f"Defectos distintos de un mensaje a otro ({len(firmas)} firmas)"
    )
    return (
        f"{defectos}, {forma}: son datos de origen incorrectos, no una caída ni un contrato roto. Corrige el "
        "dato en origen; el redrive sin corregir solo los devolverá a la DLQ."
    )


def _evidencia_distribucion(dist: Distribucion) -> str:
    if dist.forma == "desconocida":
        return "distribución temporal: muestra demasiado pequeña"
    return (
        f"distribución temporal: {dist.forma} — de {momento(dist.inicio)} a {momento(dist.fin)} UTC "
        f"({duracion_legible(dist.duracion_s)}); {dist.concentracion:.0%} dentro de alguna franja de "
        f"{duracion_legible(VENTANA_S)} (es una pista, no la prueba)"
    )


def _evidencia_recepciones(mensajes: Sequence[MensajeDlq]) -> str:
    cuentas = Counter(m.recepciones for m in mensajes if m.recepciones is not None)
    if not cuentas:
        return "ApproximateReceiveCount: no disponible"
    ((valor, veces),) = cuentas.most_common(1)
    total = sum(cuentas.values())
    if veces >= PROPORCION_UNIFORME * total:
        return (
            f"ApproximateReceiveCount uniforme = {valor} en {veces}/{total} (mismo historial de entregas; "
            "cada inspección suma una)"
        )
    return f"ApproximateReceiveCount variado: {dict(sorted(cuentas.items()))}"


def _evidencia_motivos(mensajes: Sequence[MensajeDlq]) -> str:
    motivos = Counter(m.motivo or "sin motivo" for m in mensajes)
    n = len(mensajes)
    sin = motivos.get("sin motivo", 0)
    if sin == n:
        return (
            f"motivo (mf-motivo): ausente en {n}/{n} — los movió el redrive de SQS: el consumidor falló "
            "sin reconocerlos como inválidos"
        )
    veces = motivos.most_common(1)[0][1]
    mismo = "mismo error" if veces >= PROPORCION_DOMINANTE * n else "errores distintos"
    return f"motivo (mf-motivo): {mismo} — {dict(motivos.most_common())}"
