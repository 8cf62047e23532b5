"""The chaos schedule is a pure function of its seed, and it injects what the issue lists."""

from __future__ import annotations

import pytest

SEMILLAS = range(1, 31)


@pytest.mark.parametrize("semilla", [1, 7, 200])
def test_programa_same_seed_same_schedule(semilla):
    from mercadofresco_caos import programa

    # GIVEN / WHEN the schedule of one seed drawn twice  THEN identical, fault by fault
    assert programa(semilla, 30, 6.0) == programa(semilla, 30, 6.0)


def test_programa_different_seeds_different_schedules():
    from mercadofresco_caos import programa

    # GIVEN / WHEN thirty seeds  THEN thirty different schedules
    assert len({programa(s, 30, 6.0) for s in SEMILLAS}) == len(SEMILLAS)


def test_programa_every_fault_kind_appears_across_seeds():
    from mercadofresco_caos import programa

    # GIVEN thirty seeds' schedules
    programas = [programa(s, 30, 6.0) for s in SEMILLAS]
    # WHEN their faults are tallied by kind
    lambdas = {(f.funcion, f.tipo) for p in programas for f in p.lambdas}
    sucesos = {s.tipo for p in programas for s in p.sucesos}
    proveedores = {(f.proveedor, f.tipo.value) for p in programas for f in p.proveedores}
    puntos = {f.donde for p in programas for f in p.lambdas if f.funcion == "cobro"}
    # THEN the list is covered: crashes/timeouts/throttles, the relay killed after PutEvents,
    # Redis frozen, PostgreSQL restarted, duplicates, late deliveries (of PedidoCreado and, on the
    # fan-out side, of PedidoConfirmado), a DLQ redrive, the step after the charge failing
    assert {("cobro", "caida"), ("cobro", "tiempo"), ("cobro", "estrangular"), ("outbox", "caida")} <= lambdas
    assert {"after:http POST /cobros", "before:dynamodb.UpdateItem", "before:http POST /cobros"} <= puntos
    assert {"congelar-redis", "reiniciar-postgres", "duplicar", "tardio", "a-dlq", "redrive", "sin-tema"} <= sucesos
    assert {"duplicar-aviso", "tardio-aviso"} <= sucesos
    assert {("pasarela", "latencia"), ("pasarela", "estado"), ("pasarela", "tiempo-agotado")} <= proveedores


@pytest.mark.parametrize("semilla", [1, 7, 200])
def test_programa_fanout_and_restart_faults_are_part_of_the_seed(semilla):
    from mercadofresco_caos import programa

    # GIVEN one seed's schedule, drawn twice, at the e2e suite's size
    primero, segundo = programa(semilla, 6, 6.0), programa(semilla, 6, 6.0)
    # WHEN its new faults are picked out
    nuevos = {"reiniciar-postgres", "duplicar-aviso", "tardio-aviso"}
    propios = [s for s in primero.sucesos if s.tipo in nuevos]
    # THEN they are the same both times; every seed restarts PostgreSQL (for a while, not zero) and
    # repeats some order's confirmation notice, never a declined order's (it has none)
    assert propios == [s for s in segundo.sucesos if s.tipo in nuevos]
    reinicios = [s for s in propios if s.tipo == "reiniciar-postgres"]
    avisos = [s for s in propios if s.tipo in ("duplicar-aviso", "tardio-aviso")]
    assert reinicios and all(s.valor > 0 for s in reinicios)
    assert avisos and not {s.pedido for s in avisos} & set(primero.rechazados)
    assert all(s.valor >= 2 for s in avisos if s.tipo == "tardio-aviso")


def test_plan_lambda_counts_attempts_per_function_and_order():
    from mercadofresco_caos import FalloLambda, PlanLambda, ProgramaCaos
    from sam_emulator.deaths import Cut, Invocation, Throttle

    # GIVEN a schedule: order 3's second charge attempt crashes, order 4's first charge is throttled
    prog = ProgramaCaos(
        semilla=1,
        pedidos=5,
        ritmo_por_s=1.0,
        proveedores=(),
        lambdas=(
            FalloLambda("cobro", 3, 2, "caida", donde="after:http POST /cobros"),
            FalloLambda("cobro", 4, 1, "estrangular"),
        ),
        sucesos=(),
        rechazados=(),
    )
    plan = PlanLambda(prog, "CAOS-S1-")

    def invocar(pedido: str) -> object:
        evento = {"operacion": "cobro", "pedido": {"pedido_id": pedido}}
        return plan(Invocation("mercadofresco-cobro", evento, deadline=float("inf")))

    # WHEN the invocations arrive (another seed's order in between)
    decisiones = [invocar("CAOS-S1-000003"), invocar("CAOS-S2-000003"), invocar("CAOS-S1-000003")]
    estrangulada = invocar("CAOS-S1-000004")
    # THEN only the scheduled attempts are hit
    assert decisiones[:2] == [None, None]
    assert isinstance(decisiones[2], Cut) and decisiones[2].where == "after:http POST /cobros"
    assert isinstance(estrangulada, Throttle)


# A stand-in for a child session: appends one result line per seed, and "crashes" (exit code 3)
# when it reaches the seed given as its third argument, as a child whose session died would.
HIJO_FALSO = """
import json, sys
semillas, destino, cae_en = [int(s) for s in sys.argv[1].split(",")], sys.argv[2], int(sys.argv[3])
for s in semillas:
    if s == cae_en:
        print("Traceback (most recent call last): la sesión murió")
        sys.exit(3)
    violaciones = [{"invariante": "2 como mucho un cobro por pedido", "pedido": f"CAOS-S{s}-000001",
                    "detalle": "2 cobros"}] if s == 3 else []
    linea = {"semilla": s, "pedidos": 6, "faltas": 10, "muertes": 1, "estrangulados": 1,
             "violaciones": violaciones, "informe_invariantes": [{"nombre": "n", "cumple": True, "detalle": ""}],
             "reembolsos": 1, "notas": []}
    with open(destino, "a") as f:
        f.write(json.dumps(linea) + "\\n")
"""


def test_parallel_campaign_merges_children_and_a_crashed_child_is_a_failure(tmp_path):
    import sys

    from mercadofresco_caos import anotar, correr_en_paralelo
    from mercadofresco_local.informe import Informe

    def comando(semillas, pedidos, ritmo, resultados, registro, compresion):
        return [sys.executable, "-c", HIJO_FALSO, ",".join(map(str, semillas)), str(resultados), "4"]

    # GIVEN seeds 1..5 split across two children; seed 3 has a violation, the child holding seed 4
    # dies when it reaches it
    # WHEN the campaign runs and its results are merged into one report
    resultados, notas = correr_en_paralelo([1, 2, 3, 4, 5], 2, 6, 6.0, tmp_path, comando=comando)
    informe = Informe("caos")
    anotar(informe, resultados, 6, 6.0)
    # THEN every seed is in the report, in order: the crashed one as a failure with its replay
    # command, the reported violation with its own; the others merged as they were
    assert [r.semilla for r in resultados] == [1, 2, 3, 4, 5]
    assert [r.semilla for r in resultados if not r.correcto] == [3, 4]
    assert "código 3" in resultados[3].violaciones[0].detalle
    assert "la sesión murió" in resultados[3].violaciones[0].detalle
    assert any("proceso 2" in n and "código 3" in n for n in notas)
    assert not informe.correcto
    assert dict(informe.secciones["caos"])["semillas con violaciones"] == "3, 4"
    texto = "\n".join(informe.notas)
    assert "--semilla 4 " in texto and "--semilla 3 " in texto
    assert sum(r.muertes for r in resultados) == 4


def test_parallel_campaign_stops_a_hung_child_and_fails_its_seeds(tmp_path, monkeypatch):
    import sys

    import mercadofresco_caos as caos

    def comando(semillas, pedidos, ritmo, resultados, registro, compresion):
        return [sys.executable, "-c", "import signal; signal.pause()"]  # never reports, never ends by itself

    # GIVEN a child that hangs, and a campaign that allows no time without progress
    monkeypatch.setattr(caos.paralelo, "SIN_AVANCE_MAX_S", 0.0)
    # WHEN the campaign runs
    resultados, _ = caos.correr_en_paralelo([1, 2], 1, 6, 6.0, tmp_path, comando=comando)
    # THEN the child is stopped and both its seeds are failures that say so
    assert [r.semilla for r in resultados if not r.correcto] == [1, 2]
    assert all("sin avance" in r.violaciones[0].detalle for r in resultados)
