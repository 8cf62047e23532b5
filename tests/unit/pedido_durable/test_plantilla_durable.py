"""WorkflowEngine selects the order saga's engine at deploy time (issue 37, decision 0140).

StepFunctions (the default) deploys the lesson's state machine with its charge and claim functions;
DurableFunction deploys the durable function instead (its unit, ``PedidoDurable``), started by its own pipe from
the same queue. Checked on the template as the deploy's parameters resolve it, and on the durable function's role
as SAM deploys it, evaluated by the least-privilege check's IAM evaluator.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from least_privilege.evaluador import Decision, Solicitud, decidir
from least_privilege.roles import plantilla_transformada, politicas_por_principal
from mercadofresco_local import RAIZ
from sam_emulator.template import Template

from tests.unit.iam.pila import creada

MAQUINA = {"ProcesarPedido", "CobroFunction", "ReclamoFunction", "PipePedidos", "PipePedidosRole"}
DURABLE = {
    f"PedidoDurable/{lid}"
    for lid in ("PedidoDurableFunction", "PedidoDurableFunctionRole", "PedidoDurableLogs", "PipePedidosDurable")
}
ARN = "arn:aws:{}:eu-south-2:123456789012:{}".format


def _creados(motor: str | None) -> set[str]:
    parametros = {"WorkflowEngine": motor} if motor else {}
    plantilla = Template(path=RAIZ / "template.yaml", parameters=parametros)
    return set(plantilla.paths(lambda t: [lid for lid, r in t.resources.items() if t.condition(r.get("Condition"))]))


def _durable() -> Template:
    """The durable engine's unit, as the root nests it with WorkflowEngine=DurableFunction."""
    return Template(path=RAIZ / "template.yaml", parameters={"WorkflowEngine": "DurableFunction"}).units()[
        "PedidoDurable"
    ]


@pytest.mark.parametrize(
    ("motor", "presentes", "ausentes"), [(None, MAQUINA, DURABLE), ("DurableFunction", DURABLE, MAQUINA)]
)
def test_the_parameter_deploys_one_engine_and_the_default_is_the_state_machine(
    motor: str | None, presentes: set[str], ausentes: set[str]
) -> None:
    # GIVEN a deploy with the default or the durable engine  WHEN its resources are created
    creados = _creados(motor)
    # THEN that engine's resources are, the other's are not; the shared ones (queues, topic, bus) always are
    assert presentes <= creados and not ausentes & creados
    assert {"ColaPedidos", "TopicPedidoConfirmado", "BusMercadoFresco", "TablaIdempotencia"} <= creados


def test_the_durable_function_gets_every_variable_its_configuration_requires(durable: Any) -> None:
    # GIVEN what the saga reads at its cold start (Lambda sets AWS_LAMBDA_FUNCTION_NAME itself)
    configuracion = sys.modules[durable.Configuracion.__module__]
    requeridas = set(configuracion.VARIABLES.values()) - {"AWS_LAMBDA_FUNCTION_NAME"}
    unidad = _durable()
    variables = unidad.resources["PedidoDurableFunction"]["Properties"]["Environment"]["Variables"]
    # THEN the template sets each, and the bounds are the state machine's Plazos entries, passed by the root
    assert requeridas <= set(variables)
    assert unidad.passed_by_parent(variables["RECLAMO_LEASE_S"]["Ref"]) == {
        "Fn::FindInMap": ["Plazos", "ReclamoFunction", "LeaseS"]
    }
    assert unidad.passed_by_parent(variables["RECONSULTA_WAIT_S"]["Ref"]) == {
        "Fn::FindInMap": ["Plazos", "ProcesarPedido", "EsperarFinBloqueo"]
    }


def _politicas(*principales: str) -> dict[str, list]:
    plantilla = creada(Template(path=RAIZ / "template.yaml", parameters={"WorkflowEngine": "DurableFunction"}))
    plantilla.created_units["PedidoDurable"].physical_ids["PedidoDurableFunctionAliaslive"] = {
        "Ref": ARN("lambda", "function:mercadofresco-pedido-durable:live")
    }
    todas = politicas_por_principal(plantilla, plantilla_transformada(plantilla.path, plantilla.region))
    return {p: todas[p] for p in principales}


def test_the_durable_saga_may_do_what_the_saga_does_on_its_own_executions_and_nothing_else() -> None:
    # GIVEN the durable function's role as SAM deploys it
    (politicas,) = _politicas("PedidoDurable/PedidoDurableFunction").values()

    def decide(accion: str, recurso: str, *contexto: tuple[str, tuple[str, ...]]) -> Decision:
        return decidir(politicas, Solicitud(accion, recurso, tuple(contexto)))

    # THEN it checkpoints its own executions only
    propia = ARN("lambda", "function:mercadofresco-pedido-durable:3/durable-execution/pedido-PED-1/abc")
    ajena = ARN("lambda", "function:mercadofresco-erp:1/durable-execution/x/y")
    assert decide("lambda:CheckpointDurableExecution", propia) is Decision.PERMITIDA
    assert decide("lambda:CheckpointDurableExecution", ajena) is not Decision.PERMITIDA
    # AND claims, charges and refunds under their own keys, not a consumer's
    tabla = ARN("dynamodb", "table/mercadofresco-idempotencia")
    for clave in ("pedido:PED-1", "cobro:PED-1", "reembolso:PED-1"):
        assert decide("dynamodb:PutItem", tabla, ("dynamodb:LeadingKeys", (clave,))) is Decision.PERMITIDA, clave
    assert decide("dynamodb:PutItem", tabla, ("dynamodb:LeadingKeys", ("aviso-erp:PED-1",))) is not Decision.PERMITIDA
    # AND reserves stock, parks an order, confirms, publishes its outcomes, as the state machine does
    assert decide("sqs:SendMessage", ARN("sqs", "cola-mercadofresco-stock.fifo")) is Decision.PERMITIDA
    assert decide("sqs:SendMessage", ARN("sqs", "mercadofresco-pedidos-fallidos")) is Decision.PERMITIDA
    assert decide("sns:Publish", ARN("sns", "mercadofresco-pedido-confirmado")) is Decision.PERMITIDA
    assert decide("sqs:SendMessage", ARN("sqs", "mercadofresco-erp")) is not Decision.PERMITIDA


def test_the_pipe_starts_the_durable_saga_through_its_alias_and_nothing_else() -> None:
    # GIVEN the durable engine's own pipe role
    (politicas,) = _politicas("PedidoDurable/PipePedidosDurable").values()
    alias = ARN("lambda", "function:mercadofresco-pedido-durable:live")
    # THEN it may invoke the saga's alias, and may start no state machine
    assert decidir(politicas, Solicitud("lambda:InvokeFunction", alias, ())) is Decision.PERMITIDA
    maquina = ARN("states", "stateMachine:mercadofresco-procesar-pedido")
    assert decidir(politicas, Solicitud("states:StartExecution", maquina, ())) is not Decision.PERMITIDA
