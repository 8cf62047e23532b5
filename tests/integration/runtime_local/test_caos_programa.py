"""The chaos schedule is a pure function of its seed, and it injects what the issue lists."""

from __future__ import annotations

import pytest

SEMILLAS = range(1, 31)


@pytest.mark.parametrize("semilla", [1, 7, 200])
def test_programa_same_seed_same_schedule(semilla):
    from mercadofresco_local.caos import programa

    # GIVEN / WHEN the schedule of one seed drawn twice  THEN identical, fault by fault
    assert programa(semilla, 30, 6.0) == programa(semilla, 30, 6.0)


def test_programa_different_seeds_different_schedules():
    from mercadofresco_local.caos import programa

    # GIVEN / WHEN thirty seeds  THEN thirty different schedules
    assert len({programa(s, 30, 6.0) for s in SEMILLAS}) == len(SEMILLAS)


def test_programa_every_fault_kind_appears_across_seeds():
    from mercadofresco_local.caos import programa

    # GIVEN thirty seeds' schedules
    programas = [programa(s, 30, 6.0) for s in SEMILLAS]
    # WHEN their faults are tallied by kind
    lambdas = {(f.funcion, f.tipo) for p in programas for f in p.lambdas}
    sucesos = {s.tipo for p in programas for s in p.sucesos}
    proveedores = {(f.proveedor, f.tipo.value) for p in programas for f in p.proveedores}
    puntos = {f.donde for p in programas for f in p.lambdas if f.funcion == "cobro"}
    # THEN the list is covered: crashes/timeouts/throttles, the relay killed after PutEvents,
    # Redis frozen, PostgreSQL cut, duplicates, late deliveries, a DLQ redrive, the step after the charge failing
    assert {("cobro", "caida"), ("cobro", "tiempo"), ("cobro", "estrangular"), ("outbox", "caida")} <= lambdas
    assert {"despues:http POST /cobros", "antes:dynamodb.UpdateItem", "antes:http POST /cobros"} <= puntos
    assert {"congelar-redis", "cortar-postgres", "duplicar", "tardio", "a-dlq", "redrive", "sin-tema"} <= sucesos
    assert {("pasarela", "latencia"), ("pasarela", "estado"), ("pasarela", "tiempo-agotado")} <= proveedores


def test_plan_lambda_counts_attempts_per_function_and_order():
    from mercadofresco_local.caos import FalloLambda, PlanLambda, ProgramaCaos
    from mercadofresco_local.muerte import Corte, Estrangular, Invocacion

    # GIVEN a schedule: order 3's second charge attempt crashes, order 4's first charge is throttled
    prog = ProgramaCaos(
        semilla=1,
        pedidos=5,
        ritmo_por_s=1.0,
        proveedores=(),
        lambdas=(
            FalloLambda("cobro", 3, 2, "caida", donde="despues:http POST /cobros"),
            FalloLambda("cobro", 4, 1, "estrangular"),
        ),
        sucesos=(),
        rechazados=(),
    )
    plan = PlanLambda(prog, "CAOS-S1-")

    def invocar(pedido: str) -> object:
        evento = {"operacion": "cobro", "pedido": {"pedido_id": pedido}}
        return plan(Invocacion("mercadofresco-cobro", evento, plazo=float("inf")))

    # WHEN the invocations arrive (another seed's order in between)
    decisiones = [invocar("CAOS-S1-000003"), invocar("CAOS-S2-000003"), invocar("CAOS-S1-000003")]
    estrangulada = invocar("CAOS-S1-000004")
    # THEN only the scheduled attempts are hit
    assert decisiones[:2] == [None, None]
    assert isinstance(decisiones[2], Corte) and decisiones[2].donde == "despues:http POST /cobros"
    assert isinstance(estrangulada, Estrangular)
