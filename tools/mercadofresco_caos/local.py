"""A seed on the local runtime: schedule, orders, quiescence, the records read back and judged."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from mercadofresco_local import flujo
from sam_emulator import deaths as muerte

from mercadofresco_caos import permisos
from mercadofresco_caos.idempotencia import en_curso
from mercadofresco_caos.informe import ResultadoSemilla, anotar
from mercadofresco_caos.juicio import Registros, avisos_por_pedido, juzgar, repeticiones
from mercadofresco_caos.lambdas import PlanLambda
from mercadofresco_caos.orquesta import Orquesta
from mercadofresco_caos.sorteo import por_defecto, programa

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion

COMPRESION = 20.0
DRENAJE_MAX_S = 240.0  # quiescence bound per seed (compressed leases, waits and visibilities)


def prefijo_de(semilla: int) -> str:
    return f"CAOS-S{semilla}-"


def registros_locales(sesion: Sesion, res: flujo.Resultados, drenado: bool) -> Registros:
    """This seed's records: the stand-ins' effects, PostgreSQL, the idempotency table, the executions, SQS."""
    assert sesion.runtime is not None
    consumidores = list(flujo.reparto(sesion.runtime.template).values())
    suyos = tuple(dict.fromkeys(d for c in consumidores for d in c.breakers))  # each provider once
    claves = [e["clave"] for e in sesion.proveedores.de(suyos) if e["clave"]]
    tabla = sesion.runtime.template.ref("TablaIdempotencia")
    return Registros(
        comprometidos=res.comprometidos,
        por_pedido=res.por_pedido,
        cobros=res.cobros,
        reembolsos=res.reembolsos,
        avisos=avisos_por_pedido(e["cuerpo"] for proveedor in sesion.proveedores for e in proveedor.efectos),
        repetidos=repeticiones(claves, consumidores, res.es_nuestro),
        en_curso=en_curso(tabla, lambda clave: res.prefijo in clave),
        balances=flujo.balances(sesion, res),
        en_reposo=drenado and not sesion.runtime.executions_running(),
    )


def correr_semilla(
    sesion: Sesion, semilla: int, pedidos: int, ritmo: float, avance: Callable[[], None] | None = None
) -> ResultadoSemilla:
    """One seed in an open chaos session: schedule, orders, quiescence, checks."""
    avance = avance or (lambda: None)
    assert sesion.tienda is not None and sesion.runtime is not None and sesion.redis_privado is not None
    inicio = time.monotonic()
    registro = por_defecto()
    prog = programa(semilla, pedidos, ritmo, registro, plantilla=sesion.runtime.template)  # its engine's functions
    prefijo = prefijo_de(semilla)
    sesion.preparar_semilla(semilla)
    sesion.tienda.prefijo = prefijo
    sesion.proveedores.fallos.programar(*prog.proveedores)
    muerte.CONTROL.set_plan(PlanLambda(prog, prefijo))
    muertes_antes, estrangulados_antes = len(muerte.CONTROL.deaths), sum(muerte.CONTROL.throttled.values())
    pg = sesion.postgres_privado
    reinicios_antes = pg.restarts if pg else 0
    sesion.proveedores.fallos.reiniciar_reloj()
    orquesta = Orquesta(sesion, prog, prefijo, registro).arrancar()

    def crear(datos: dict[str, Any], numero: int) -> None:
        if numero in prog.rechazados:  # a customer of its own, whose card the gateway declines
            datos["cliente_id"] = f"CLI-RECHAZO-{semilla}-{numero}"
            sesion.proveedores.fallos.rechazar_tarjeta(datos["cliente_id"])
        crear_resistiendo_reinicios(sesion, datos)

    productor = flujo.Productor(sesion, pedidos, ritmo, crear).arrancar()
    drenado = True
    try:
        flujo.esperar_drenaje(sesion, productor, DRENAJE_MAX_S + prog.duracion_s, avance)
    except TimeoutError:
        drenado = False
    finally:
        orquesta.parar()
    if orquesta.hechos and drenado:  # the events played after the drain may have left work behind
        try:
            flujo.esperar_drenaje(sesion, None, DRENAJE_MAX_S, avance)
        except TimeoutError:
            drenado = False
    muerte.CONTROL.set_plan(None)
    sesion.proveedores.fallos.limpiar()
    res = flujo.recolectar(sesion, prefijo)
    violaciones, invariantes = juzgar(registros_locales(sesion, res, drenado), time.time())
    # The seed's AWS requests against their roles, when the campaign records them (permisos.registrando).
    iam = permisos.comprobar_semilla(sesion.runtime.template)
    if iam is not None:
        violaciones = violaciones + iam.violaciones
    sesion.vaciar_dlqs()
    return ResultadoSemilla(
        semilla=semilla,
        pedidos=len(res.comprometidos),
        faltas=prog.faltas(),
        muertes=len(muerte.CONTROL.deaths) - muertes_antes,
        estrangulados=sum(muerte.CONTROL.throttled.values()) - estrangulados_antes,
        violaciones=violaciones,
        informe_invariantes=invariantes,
        reembolsos=len(res.reembolsos),
        notas=orquesta.errores,
        reinicios_postgres=(pg.restarts - reinicios_antes) if pg else 0,
        postgres_real=pg is not None,
        avisos_repetidos=len(orquesta.repetidos),
        duracion_s=round(time.monotonic() - inicio, 1),
        por_tipo=dict(prog.por_tipo),
        solicitudes_iam=iam.solicitudes if iam is not None else None,
        principales_iam=iam.principales if iam is not None else [],
        permisos_sin_usar=iam.sin_usar if iam is not None else [],
        motor=sesion.motor,
    )


def crear_resistiendo_reinicios(sesion: Sesion, datos: dict[str, Any]) -> None:
    """Place an order as a store client does while PostgreSQL restarts: reconnect, ask, retry.

    A failed connection may have lost the answer to a commit that happened: the order is looked
    up by its id before placing it again (the id is the store client's idempotency key).
    """
    import psycopg

    assert sesion.tienda is not None and sesion.base is not None
    limite = time.monotonic() + DRENAJE_MAX_S
    while True:
        try:
            sesion.tienda.crear_con_outbox(datos)
            return
        except psycopg.OperationalError:
            if time.monotonic() > limite:
                raise
        while True:  # the server is restarting: wait until it accepts a connection again
            try:
                sesion.tienda.cerrar()
                sesion.tienda.abrir()
                break
            except psycopg.OperationalError:
                if time.monotonic() > limite:
                    raise
                time.sleep(0.1)  # polling the server's availability, not a synchronisation with the system
        if sesion.base.consultar("SELECT 1 FROM pedidos WHERE pedido_id = %s", datos["pedido_id"]):
            return


def caos(sesion: Sesion, n: int, ritmo: float, informe: Informe, avance: Callable[[str, int, int], None]) -> None:
    """The ``caos`` scenario: the session's seeds (``sesion.semillas``), one after another."""
    semillas = sesion.semillas or [1]
    resultados: list[ResultadoSemilla] = []
    for semilla in semillas:
        hechas = len(resultados)
        avance(f"caos: semilla {semilla}", hechas, len(semillas))
        resultado = correr_semilla(
            sesion,
            semilla,
            n,
            ritmo,
            lambda: avance(f"caos: semilla {semilla}", hechas, len(semillas)),  # noqa: B023
        )
        resultados.append(resultado)
        if sesion.resultados is not None:  # a child of a parallel campaign: the parent reads it as it goes
            with sesion.resultados.open("a") as f:
                f.write(json.dumps(asdict(resultado)) + "\n")
    anotar(informe, resultados, n, ritmo)
