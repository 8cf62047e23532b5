"""A deployed stack's chaos run is judged from its own records, by the code that judges every local seed.

The stack is moto: the order workflow's executions, the sandbox providers' table written by the
sandbox's own code (charges, refunds, ``Idempotency-Key`` records), the idempotency table and the
order queues. What FIS did is not needed to judge: only what the system recorded.
"""

from __future__ import annotations

import json
import time

import boto3
import pytest
from mercadofresco_caos.juicio import juzgar
from mercadofresco_caos.pila import Pila, registros_de_pila
from sam_emulator.template import create_table_from
from simulador.dynamodb import AlmacenDynamoDB, Sandbox
from simulador.proveedores import Simulador

from tests.conftest import wait_until

pytestmark = pytest.mark.integration

# The workflow's outcome as its last state: a Choice on what the test put in the execution's input.
DEFINICION = {
    "StartAt": "Leer",
    "States": {
        "Leer": {"Type": "Pass", "Parameters": {"registro.$": "States.ArrayGetItem($, 0)"}, "Next": "Decidir"},
        "Decidir": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.registro.final", "StringEquals": "Rechazado", "Next": "Rechazado"}],
            "Default": "Confirmado",
        },
        "Confirmado": {"Type": "Pass", "End": True},
        "Rechazado": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture
def pila(plantilla, tabla_idempotencia):
    sfn, sqs = boto3.client("stepfunctions"), boto3.client("sqs")
    simuladores = create_table_from(boto3.client("dynamodb"), *plantilla.locate("Simuladores/TablaSimulador"))
    maquina = sfn.create_state_machine(
        name="mercadofresco-procesar-pedido",
        definition=json.dumps(DEFINICION),
        roleArn="arn:aws:iam::123456789012:role/sfn",
    )["stateMachineArn"]
    return Pila(
        "mercadofresco",
        {
            "ProcesarPedido": maquina,
            "TablaSimulador": simuladores,
            "TablaIdempotencia": tabla_idempotencia,
            "ColaPedidos": sqs.create_queue(QueueName="cola-mercadofresco-pedidos")["QueueUrl"],
            "ColaPedidosFallidos": sqs.create_queue(QueueName="mercadofresco-pedidos-fallidos")["QueueUrl"],
        },
    )


def ejecutar(pila: Pila, pedido: str, final: str = "Confirmado") -> None:
    """An execution as the Pipe starts it: a batch of SQS records whose body is the bus event."""
    entrada = [{"body": json.dumps({"detail": {"pedido_id": pedido}}), "final": final}]
    boto3.client("stepfunctions").start_execution(
        stateMachineArn=pila.recursos["ProcesarPedido"], name=f"ejecucion-{pedido}", input=json.dumps(entrada)
    )


def proveedor(pila: Pila, nombre: str) -> Sandbox:
    almacen = AlmacenDynamoDB(pila.recursos["TablaSimulador"], boto3.client("dynamodb"))
    return Sandbox(Simulador(nombre, almacen if nombre == "pasarela" else None), almacen)


def cobrar(pila: Pila, pedido: str, clave: str) -> None:
    cuerpo = {"pedido_id": pedido, "importe_centimos": 995, "cliente_id": "CLI-1"}
    assert proveedor(pila, "pasarela").atender("/cobros", cuerpo, clave)[0][0] == 201


def confirmar(pila: Pila, pedido: str, correos: tuple[str, ...] = ("correo-principal",)) -> None:
    """The fan-out of a confirmed order as the sandbox records it: one ERP notice, the confirmation e-mail."""
    assert proveedor(pila, "erp").atender("/avisos", {"pedido_id": pedido}, f"aviso-erp:{pedido}")[0][0] == 200
    for correo in correos:
        cuerpo = {"destinatario": "ana@example.com", "plantilla": "confirmacion-pedido", "datos": {"pedido_id": pedido}}
        assert proveedor(pila, correo).atender("/correos", cuerpo, f"correo-confirmacion:{pedido}")[0][0] == 202


def en_curso(pila: Pila, clave: str, caduca_s: float) -> None:
    item = {"clave": {"S": clave}, "estado": {"S": "EN_CURSO"}, "caduca_bloqueo": {"N": str(int(caduca_s))}}
    boto3.client("dynamodb").put_item(TableName=pila.recursos["TablaIdempotencia"], Item=item)


def terminadas(pila: Pila, n: int) -> None:
    sfn = boto3.client("stepfunctions")

    def listas() -> bool:
        ejecuciones = sfn.list_executions(stateMachineArn=pila.recursos["ProcesarPedido"])["executions"]
        return sum(e["status"] == "SUCCEEDED" for e in ejecuciones) == n

    wait_until(listas, f"{n} executions finished")


def test_stack_records_with_broken_guarantees_are_judged_violations_by_the_local_judge(pila: Pila) -> None:
    # GIVEN a run's orders as the stack recorded them: PED-1 fine but an EN_CURSO past its lease;
    # PED-2 charged twice; PED-3 declined by the workflow yet charged, never refunded nor told;
    # PED-4 confirmed by both e-mail providers; and another run's PED-9, charged twice
    ahora = time.time()
    for pedido in ("PED-1", "PED-2", "PED-4"):
        ejecutar(pila, pedido)
        confirmar(
            pila, pedido, ("correo-principal", "correo-secundario") if pedido == "PED-4" else ("correo-principal",)
        )
    ejecutar(pila, "PED-3", final="Rechazado")
    for pedido, clave in [("PED-1", "cobro:PED-1"), ("PED-2", "cobro:PED-2"), ("PED-2", "cobro:PED-2:otra")]:
        cobrar(pila, pedido, clave)
    cobrar(pila, "PED-3", "cobro:PED-3")
    cobrar(pila, "PED-4", "cobro:PED-4")
    cobrar(pila, "PED-9", "cobro:PED-9")
    cobrar(pila, "PED-9", "cobro:PED-9:otra")
    en_curso(pila, "reserva:PED-1:FRU-MAN-001", ahora - 60)
    en_curso(pila, "reserva:PED-9:FRU-MAN-001", ahora - 60)
    terminadas(pila, 4)

    # WHEN the stack's records of this run's orders are read and judged
    registros = registros_de_pila(pila, ["PED-1", "PED-2", "PED-3", "PED-4"])
    violaciones, invariantes = juzgar(registros, ahora)

    # THEN exactly the broken guarantees are violations, each on its order; the other run's is not ours
    assert sorted((v.invariante.split(" ")[0], v.pedido) for v in violaciones) == [
        ("2", "PED-2"),
        ("4", "PED-3"),
        ("6", "PED-1"),
        ("6", "PED-3"),
        ("una", "PED-4"),  # juicio.REPETIDOS: correo-confirmacion:PED-4 sent by both providers
    ]
    assert {i.nombre: i.cumple for i in invariantes}["como mucho un cobro por pedido"] is False
    assert len(registros.cobros) == 5


def test_a_clean_stack_run_keeps_every_invariant(pila: Pila) -> None:
    # GIVEN two orders confirmed once, charged once, told once; the queues empty
    for pedido in ("PED-1", "PED-2"):
        ejecutar(pila, pedido)
        cobrar(pila, pedido, f"cobro:{pedido}")
        confirmar(pila, pedido)
    terminadas(pila, 2)

    # WHEN judged
    violaciones, invariantes = juzgar(registros_de_pila(pila, ["PED-1", "PED-2"]), time.time())

    # THEN nothing is broken, nothing lost
    assert violaciones == []
    assert all(i.cumple for i in invariantes), [i for i in invariantes if not i.cumple]


def test_experiments_start_from_the_stacks_templates_and_cost_their_real_action_minutes(stubbed, monkeypatch) -> None:
    from datetime import UTC, datetime

    from botocore.stub import ANY
    from mercadofresco_caos import especificacion
    from mercadofresco_caos import pila as en_pila

    # GIVEN a stack with the consumer-error experiment template, and FIS (stubbed: moto has no FIS)
    fis, stubber = stubbed("fis")
    monkeypatch.setattr(en_pila, "client", lambda servicio: fis)
    pila = Pila("mercadofresco", {"ExperimentoCaosConsumidorError": "EXT123"})
    stubber.add_response(
        "start_experiment",
        {"experiment": {"id": "EXP1"}},
        {"clientToken": ANY, "experimentTemplateId": "EXT123", "tags": {"mercadofresco:fallo": "consumidor-error"}},
    )
    inicio = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)
    accion = {"startTime": inicio, "endTime": datetime(2026, 12, 2, 15, 5, 20, tzinfo=UTC)}
    stubber.add_response(
        "get_experiment",
        {"experiment": {"id": "EXP1", "state": {"status": "completed"}, "actions": {"ConsumidorError": accion}}},
        {"id": "EXP1"},
    )
    # WHEN the run starts it and reads it back once it ended
    (experimento,) = en_pila.arrancar(pila, ["consumidor-error"])
    en_pila.actualizar(experimento, especificacion.cargar())
    # THEN it is the stack's template's experiment, and its 5 min 20 s action costs 6 started minutes
    assert (experimento.id, experimento.estado) == ("EXP1", "completed")
    assert experimento.coste_usd == 0.60


def test_a_stack_deployed_without_chaos_is_refused_by_name() -> None:
    from mercadofresco_caos import pila as en_pila

    # GIVEN a stack without the experiment templates  WHEN a run asks for one  THEN it says what to deploy
    with pytest.raises(en_pila.PilaNoPreparadaError, match="Chaos=enabled"):
        en_pila.arrancar(Pila("mercadofresco", {}), ["consumidor-error"])
