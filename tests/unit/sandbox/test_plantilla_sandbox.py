"""template.yaml's sandbox wiring: an empty provider URL deploys its simulador and points the callers at it."""

from __future__ import annotations

import pytest
from sam_emulator.template import Template

URLS_REALES = {
    "PasarelaUrl": "https://pasarela.example/api",
    "ErpUrl": "https://erp.example/api",
    "CorreoPrincipalUrl": "https://correo1.example/api",
    "CorreoSecundarioUrl": "https://correo2.example/api",
}
SIMULADORES = ("SimuladorPasarelaFunction", "SimuladorErpFunction", "SimuladorCorreoFunction")


def _variable(p: Template, funcion: str, variable: str) -> object:
    return p.resources[funcion]["Properties"]["Environment"]["Variables"][variable]


def test_plantilla_default_urls_empty_deploys_every_simulador() -> None:
    # GIVEN the template's defaults (a newcomer's first deploy)
    p = Template()
    # THEN the three sandbox functions, their URLs and the shared table are part of the stack
    funciones = p.of_type("AWS::Serverless::Function")
    assert set(SIMULADORES) <= set(funciones)
    assert len(p.of_type("AWS::Lambda::Url")) == 3
    assert "TablaSimulador" in p.of_type("AWS::DynamoDB::Table")


def test_plantilla_given_urls_deploys_no_simulador() -> None:
    p = Template(parameters=URLS_REALES)
    assert not set(SIMULADORES) & set(p.of_type("AWS::Serverless::Function"))
    assert not p.of_type("AWS::Lambda::Url")
    assert "TablaSimulador" not in p.of_type("AWS::DynamoDB::Table")


@pytest.mark.parametrize(
    ("funcion", "variable", "url", "sufijo"),
    [
        ("CobroFunction", "PASARELA_URL", "SimuladorPasarelaUrl", ""),
        ("ErpFunction", "ERP_URL", "SimuladorErpUrl", ""),
        ("CorreoFunction", "CORREO_PRINCIPAL_URL", "SimuladorCorreoUrl", "principal"),
        ("CorreoFunction", "CORREO_SECUNDARIO_URL", "SimuladorCorreoUrl", "secundario"),
    ],
)
def test_plantilla_caller_url_is_the_simulador_url_signed_or_the_given_one(
    funcion: str, variable: str, url: str, sufijo: str
) -> None:
    # GIVEN the caller's variable in the template
    valor = _variable(Template(), funcion, variable)
    # THEN: the given URL when there is one, else the sandbox's function URL (it ends with "/")
    condicion, simulada, dada = valor["Fn::If"]
    assert Template().condition(condicion) and not Template(parameters=URLS_REALES).condition(condicion)
    assert simulada["Fn::Sub"] == f"${{{url}.FunctionUrl}}{sufijo}"
    assert "Ref" in dada
    # AND, under the same condition only, the caller is told to sign (mercadofresco.http.auth)
    assert _variable(Template(), funcion, f"{variable}_AUTH") == {"Fn::If": [condicion, "AWS_IAM", ""]}


def test_plantilla_sandbox_has_no_path_token_nor_its_secret() -> None:
    # AWS_IAM authenticates the callers: a token in the URL would be one more secret to keep
    p = Template()
    assert not [lid for lid in p.resources if "Secret" in lid and "Simulador" in lid]
    assert "SIMULADOR_SECRET_ARN" not in str(p.resources) and "{token}" not in str(p.resources)


def test_plantilla_no_function_gets_a_secret_in_an_environment_variable() -> None:
    # Dynamic references resolve at deploy time: the value would sit in the function's configuration.
    p = Template()
    globales = p.doc["Globals"]["Function"]["Environment"]["Variables"]
    for lid, recurso in p.resources.items():
        if recurso["Type"] != "AWS::Serverless::Function":
            continue
        variables = {**globales, **(recurso["Properties"].get("Environment") or {}).get("Variables", {})}
        assert "{{resolve:" not in str(variables), lid


def test_the_local_stand_ins_verify_signatures_exactly_where_the_template_signs() -> None:
    from mercadofresco_local.firma import urls_firmadas

    # GIVEN the defaults (every provider a sandbox) THEN each caller variable is its simulator's signed URL
    assert urls_firmadas(Template()) == {
        "PASARELA_URL": "SimuladorPasarelaUrl",
        "ERP_URL": "SimuladorErpUrl",
        "CORREO_PRINCIPAL_URL": "SimuladorCorreoUrl",
        "CORREO_SECUNDARIO_URL": "SimuladorCorreoUrl",
    }
    # AND with real providers nothing is signed, nor verified
    assert urls_firmadas(Template(parameters=URLS_REALES)) == {}
    assert urls_firmadas(Template(parameters={**URLS_REALES, "ErpUrl": ""})) == {"ERP_URL": "SimuladorErpUrl"}
