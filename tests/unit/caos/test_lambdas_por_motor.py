"""The chaos schedule's Lambda faults follow the order workflow's engine: the functions the template deploys."""

from __future__ import annotations

from mercadofresco_caos import comando_replay, lambdas, programa
from mercadofresco_local import plantilla

DURABLE = "DurableFunction"


def test_the_workflow_functions_hit_are_the_state_machine_tasks_or_the_durable_saga() -> None:
    # GIVEN the template with its default engine and with the durable one
    # WHEN the workflow's functions the schedule may hit are listed  THEN each engine's own, nothing of the other
    assert lambdas.funciones_del_flujo(plantilla()) == {"cobro": 0.5, "reclamo": 0.15}
    assert lambdas.funciones_del_flujo(plantilla(DURABLE)) == {"pedido-durable": 0.65}
    assert lambdas.funcion_que_cobra(plantilla()) == "cobro"
    assert lambdas.funcion_que_cobra(plantilla(DURABLE)) == "pedido-durable"


def test_a_durable_schedule_hits_the_saga_where_the_state_machine_one_hits_its_tasks() -> None:
    # GIVEN twenty seeds drawn on each engine
    semillas = range(1, 21)
    maquina = [f for s in semillas for f in programa(s, plantilla=plantilla()).lambdas]
    durable = [f for s in semillas for f in programa(s, plantilla=plantilla(DURABLE)).lambdas]
    # THEN the durable schedules name no charge or claim function, and hit the saga, also right after the charge
    assert {f.funcion for f in durable} & {"cobro", "reclamo"} == set()
    assert any(f.funcion == "pedido-durable" and f.donde == lambdas.DESPUES_DEL_CARGO for f in durable)
    assert any(f.funcion == "pedido-durable" and f.tipo == "estrangular" for f in durable)
    # AND the state machine's schedules are those of the repository's template, seed for seed (replays hold)
    assert maquina == [f for s in semillas for f in programa(s).lambdas]
    assert "pedido-durable" not in {f.funcion for f in maquina}


def test_a_replay_command_names_the_engine_it_ran_on() -> None:
    assert comando_replay(7, 30, 6.0).endswith("--ritmo 6")
    assert comando_replay(7, 30, 6.0, motor=DURABLE).endswith("--ritmo 6 --motor DurableFunction")
