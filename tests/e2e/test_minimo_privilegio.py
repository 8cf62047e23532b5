"""Least privilege proven by execution: every AWS request of a local run is allowed by its principal's role.

A small ``normal`` run (orders through the store, the relay, the pipe, the state machine, the
consumers), plus the sample events of the paths a healthy run does not take (a stock
release, the "not confirmed" e-mail, a refund, a cancelled order's projection), with the
request recorder installed. Each request (action, ARN, ``dynamodb:LeadingKeys``...) is then
evaluated against the role the *transformed* template gives its function or the state
machine: moto checks no IAM, so this is where a condition that denies what the code does
shows up before an account does.
"""

from __future__ import annotations

import pytest

from tests.conftest import load_event

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

# The paths a healthy run does not take, each through its function's own sample event.
_CAMINOS_SIN_PEDIDO = {
    "ErpFunction": "erp-liberacion-stock.json",
    "CorreoFunction": "correo-pedido-no-confirmado.json",
    "CobroFunction": "cobro-reembolso.json",
    "ProyeccionFunction": "proyeccion-pedido-cancelado.json",
}


def test_every_request_of_a_local_run_is_allowed_by_its_role() -> None:
    from mercadofresco_iam.local import comprobar_ejecucion, destino, registro_local
    from mercadofresco_local.demo import ESCENARIOS
    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion
    from sam_emulator.template import Template

    # GIVEN the recorder installed before the run builds any client
    esc = ESCENARIOS["normal"]
    with registro_local(Template()) as registro, Sesion("normal", compresion=esc.compresion) as sesion:
        # WHEN a few orders go through the whole flow, and the other paths get their sample events
        esc.correr(sesion, 3, esc.ritmo_por_s, Informe("normal"), lambda *_: None)
        assert sesion.runtime is not None
        errores = {}
        for logical_id, evento in _CAMINOS_SIN_PEDIDO.items():
            try:
                sesion.runtime.functions.by_id[logical_id].invoke(load_event(evento))
            except Exception as exc:  # an outcome (e.g. an open circuit) is not what is checked here: the calls are
                errores[logical_id] = repr(exc)
        informe = comprobar_ejecucion(registro, sesion.runtime.template)
        claves = {
            dict(s.contexto).get("dynamodb:LeadingKeys", ("",))[0].split(":", 1)[0]
            for _, s in registro.solicitudes(destino(sesion.runtime.template))
        }
    print(informe.texto())  # the unused grants, shown with -s or when the test fails

    # THEN every function that ran and the state machine made recorded requests (the hook saw them)
    principales = {llamada.principal for llamada in registro.llamadas()}
    assert {
        "ProcesarPedido",
        "PipePedidos",
        "ReclamoFunction",
        "CobroFunction",
        "ErpFunction",
        "CorreoFunction",
    } <= principales
    # AND the consumers' own polling (Lambda's event source mappings use the function's role) was seen
    acciones = {(p, s.accion) for p, s in registro.solicitudes(destino(sesion.runtime.template))}
    assert {("ErpFunction", "sqs:ReceiveMessage"), ("CorreoFunction", "sqs:DeleteMessage")} <= acciones
    # AND the idempotency keys of the paths that used to be denied were really written
    assert {"liberacion", "correo-no-confirmado", "pedido", "cobro"} <= claves, (sorted(claves), errores)
    # AND each caller's signed calls to its sandbox provider (the stand-ins verified every signature)
    # were lambda:InvokeFunctionUrl on that simulator, through its grant, which is therefore not unused
    simuladores = {
        p: s.recurso.rsplit(":", 1)[-1]
        for p, s in registro.solicitudes(destino(sesion.runtime.template))
        if s.accion == "lambda:InvokeFunctionUrl"
    }
    assert simuladores == {
        "CobroFunction": "simulador-pasarela",
        "ErpFunction": "simulador-erp",
        "CorreoFunction": "simulador-correo",
    }
    assert not [(p.nombre, p.rechazadas) for p in sesion.proveedores.todos if p.rechazadas or p.verificador is None]
    assert not [u for u in informe.sin_uso if u.sid == "SandboxProvider"], informe.texto()
    # AND no request is one its role would deny
    assert not informe.sin_rol, informe.texto()
    assert not informe.denegadas, informe.texto()
