"""A seed's result, and the campaign's report (one per run, however many seeds and processes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco_local import plantilla
from mercadofresco_local.invariantes import Invariante

from mercadofresco_caos.juicio import Violacion
from mercadofresco_caos.permisos import INVARIANTE
from mercadofresco_caos.sorteo import programa

if TYPE_CHECKING:
    from mercadofresco_local.informe import Informe

    from mercadofresco_caos.juicio import Registros
    from mercadofresco_caos.pila import Experimento


@dataclass
class ResultadoSemilla:
    semilla: int
    pedidos: int
    faltas: int
    muertes: int
    estrangulados: int
    violaciones: list[Violacion]
    informe_invariantes: list[Invariante]
    reembolsos: int
    notas: list[str]
    reinicios_postgres: int = 0  # real restarts of the private server (0 with the fallback)
    postgres_real: bool = True  # False: no server binaries, a "restart" only dropped connections
    avisos_repetidos: int = 0  # PedidoConfirmado copies really sent to the fan-out's queues
    duracion_s: float = 0.0  # wall time of the seed in its session (schedule, drain, checks)
    por_tipo: dict[str, int] = field(default_factory=dict)  # fault kind -> faults scheduled
    # The seed's AWS requests checked against their roles (caos.permisos); None: not recorded.
    solicitudes_iam: int | None = None
    principales_iam: list[str] = field(default_factory=list)  # who made requests
    permisos_sin_usar: list[str] = field(default_factory=list)  # Allow statements no request needed
    motor: str | None = None  # the order workflow's engine it ran on (WorkflowEngine); None: the default

    @property
    def correcto(self) -> bool:
        return not self.violaciones and all(i.cumple for i in self.informe_invariantes)

    @classmethod
    def desde_json(cls, datos: dict[str, Any]) -> ResultadoSemilla:
        datos = {**datos, "violaciones": [Violacion(**v) for v in datos["violaciones"]]}
        datos["informe_invariantes"] = [Invariante(**i) for i in datos["informe_invariantes"]]
        return cls(**datos)


def comando_replay(
    semilla: int, pedidos: int, ritmo: float, *, registrando: bool = False, motor: str | None = None
) -> str:
    """The command that replays one seed; ``registrando``: with the request recorder (:mod:`.hijo`)."""
    programa_ = ".venv/bin/python -m mercadofresco_caos.hijo" if registrando else ".venv/bin/mf-demo"
    comando = f"{programa_} --escenario caos --semilla {semilla} --pedidos {pedidos} --ritmo {ritmo:g}"
    return comando + (f" --motor {motor}" if motor else "")


def describir_violaciones(resultado: ResultadoSemilla, pedidos: int, ritmo: float) -> list[str]:
    """Seed, order, the schedule's faults that touched it, and the replay command, for each violation."""
    prog = programa(resultado.semilla, pedidos, ritmo, plantilla=plantilla(resultado.motor))  # its engine's faults
    lineas = []
    for v in resultado.violaciones:
        numero = int(v.pedido[-6:]) if v.pedido[-6:].isdigit() else None
        faltas = prog.de_pedido(numero) if numero is not None else []
        replay = comando_replay(
            resultado.semilla, pedidos, ritmo, registrando=v.invariante == INVARIANTE, motor=resultado.motor
        )
        lineas.append(
            f"semilla {resultado.semilla} · {linea(v)}\n"
            f"    fallos que lo tocaron: {'; '.join(faltas) or '—'}\n"
            f"    reproducir: {replay}"
        )
    lineas.extend(
        f"semilla {resultado.semilla} · {i.nombre}: {i.detalle}" for i in resultado.informe_invariantes if not i.cumple
    )
    return lineas


def linea(v: Violacion) -> str:
    return f"pedido {v.pedido} · {v.invariante}: {v.detalle}"


def anotar_pila(
    informe: Informe,
    pila: str,
    experimentos: list[Experimento],
    registros: Registros,
    juicio: tuple[list[Violacion], list[Invariante]],
    errores: list[str],
) -> None:
    """A run against a deployed stack, reported as a seed is: figures, the invariants, each violation."""
    violaciones, invariantes = juicio
    informe.anotar("caos", "pila", pila)
    for e in experimentos:
        informe.anotar("caos", f"experimento FIS {e.fallo}", f"{e.id} ({e.estado})")
    coste = sum(e.coste_usd for e in experimentos)
    informe.anotar("caos", "coste FIS (0,10 USD por acción-minuto)", f"{coste:.2f} USD")
    informe.anotar("caos", "pedidos (aceptados por la tienda)", len(registros.comprometidos))
    informe.anotar("caos", "cobros, reembolsos", f"{len(registros.cobros)}, {len(registros.reembolsos)}")
    informe.anotar("caos", "violaciones", len(violaciones))
    informe.invariantes.extend(invariantes)
    informe.notas.extend(linea(v) for v in violaciones)
    informe.notas.extend(errores)
    informe.invariantes.append(
        Invariante("caos: las seis invariantes en la pila", not violaciones, f"{len(violaciones)} violaciones")
    )


def _anotar_permisos(informe: Informe, resultados: list[ResultadoSemilla]) -> None:
    """The request-vs-role check over the seeds that recorded their requests: figures, unused grants."""
    from mercadofresco_caos.permisos import sin_usar_en_campana

    comprobadas = [r for r in resultados if r.solicitudes_iam is not None]
    if not comprobadas:
        return
    denegadas = [v for r in comprobadas for v in r.violaciones if v.invariante == INVARIANTE]
    informe.anotar(
        "caos",
        "solicitudes a AWS comprobadas contra su rol (semillas)",
        f"{sum(r.solicitudes_iam or 0 for r in comprobadas)} ({len(comprobadas)})",
    )
    informe.anotar("caos", "solicitudes que su rol denegaría (distintas)", len(denegadas))
    sin_uso, sin_solicitudes = sin_usar_en_campana((r.principales_iam, r.permisos_sin_usar) for r in comprobadas)
    informe.notas.extend(f"permiso concedido que ninguna semilla usó: {s}" for s in sin_uso)
    if sin_solicitudes:
        informe.notas.append(f"roles sin ninguna solicitud en la campaña: {', '.join(sin_solicitudes)}")
    informe.invariantes.append(
        Invariante(
            f"caos: {INVARIANTE}",
            not denegadas,
            f"{len(denegadas)} solicitudes distintas denegadas en {len(comprobadas)} semillas comprobadas",
        )
    )


def rango(semillas: list[int]) -> str:
    return ", ".join(map(str, semillas[:5])) + (f"… ({len(semillas)})" if len(semillas) > 5 else "")


def anotar(informe: Informe, resultados: list[ResultadoSemilla], n: int, ritmo: float) -> None:
    malas = [r for r in resultados if not r.correcto]
    informe.anotar("caos", "semillas", len(resultados))
    informe.anotar("caos", "pedidos (creados en PostgreSQL)", sum(r.pedidos for r in resultados))
    informe.anotar("caos", "fallos programados", sum(r.faltas for r in resultados))
    tipos: dict[str, int] = {}
    for r in resultados:
        for tipo, k in r.por_tipo.items():
            tipos[tipo] = tipos.get(tipo, 0) + k
    if tipos:
        informe.anotar("caos", "fallos por tipo", ", ".join(f"{t} {k}" for t, k in sorted(tipos.items())))
    informe.anotar("caos", "invocaciones muertas (caída / tiempo agotado)", sum(r.muertes for r in resultados))
    informe.anotar("caos", "invocaciones estranguladas", sum(r.estrangulados for r in resultados))
    informe.anotar("caos", "reembolsos", sum(r.reembolsos for r in resultados))
    informe.anotar("caos", "reinicios reales de PostgreSQL", sum(r.reinicios_postgres for r in resultados))
    informe.anotar(
        "caos", "avisos PedidoConfirmado repetidos (colas del reparto)", sum(r.avisos_repetidos for r in resultados)
    )
    simulados = [r.semilla for r in resultados if r.pedidos and not r.postgres_real]
    if simulados:
        informe.notas.append(
            f"semillas {rango(simulados)}: sin binarios de PostgreSQL, «reiniciar PostgreSQL» solo cortó las "
            "conexiones de las funciones (pg_terminate_backend)"
        )
    informe.anotar("caos", "violaciones", sum(len(r.violaciones) for r in resultados))
    duraciones = sorted(r.duracion_s for r in resultados if r.duracion_s)
    if duraciones:
        informe.anotar(
            "caos",
            "segundos por semilla (mediana, máximo)",
            f"{duraciones[len(duraciones) // 2]:.0f}, {duraciones[-1]:.0f}",
        )
    _anotar_permisos(informe, resultados)
    informe.anotar("caos", "semillas con violaciones", ", ".join(str(r.semilla) for r in malas) or "ninguna")
    for r in malas:
        informe.notas.extend(describir_violaciones(r, n, ritmo))
    for r in resultados:
        informe.notas.extend(f"semilla {r.semilla}: fallo no inyectado: {e}" for e in r.notas)
    informe.invariantes.append(
        Invariante(
            "caos: las seis invariantes en cada semilla",
            not malas,
            f"{len(resultados) - len(malas)}/{len(resultados)} semillas sin violaciones",
        )
    )
