"""The policy evaluator against AWS's documented evaluation rules (IAM User Guide, "Policy evaluation logic",
"Condition operators", "Single-valued vs. multivalued context keys"); each case cites the rule it pins."""

from __future__ import annotations

import pytest
from mercadofresco_iam.evaluador import Decision, OperadorNoSoportadoError, Solicitud, decidir

TABLA = "arn:aws:dynamodb:eu-south-2:123456789012:table/mercadofresco-idempotencia"


def _politica(*sentencias: dict) -> list[dict]:
    return [{"Version": "2012-10-17", "Statement": list(sentencias)}]


def _escritura(*claves: str) -> Solicitud:
    return Solicitud("dynamodb:PutItem", TABLA, (("dynamodb:LeadingKeys", claves),))


EMAIL = {
    "Effect": "Allow",
    "Action": ["dynamodb:PutItem", "dynamodb:UpdateItem"],
    "Resource": TABLA,
    "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["correo-confirmacion:*"]}},
}


def test_no_statement_is_an_implicit_deny() -> None:
    # "By default, all requests are implicitly denied"
    assert decidir(_politica(), _escritura("x")) is Decision.DENEGACION_IMPLICITA


def test_explicit_deny_overrides_any_allow() -> None:
    # "An explicit deny in any policy overrides any allows"
    denegar = {"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*"}
    assert decidir(_politica(EMAIL, denegar), _escritura("correo-confirmacion:P1")) is Decision.DENEGACION_EXPLICITA


@pytest.mark.parametrize(
    ("clave", "esperada"),
    [
        ("correo-confirmacion:PED-1", Decision.PERMITIDA),
        ("correo-no-confirmado:PED-1", Decision.DENEGACION_IMPLICITA),  # the e-mail role's bug (issue 26)
        ("liberacion:PED-1:SKU-9", Decision.DENEGACION_IMPLICITA),
    ],
)
def test_leading_keys_for_all_values_string_like(clave: str, esperada: Decision) -> None:
    assert decidir(_politica(EMAIL), _escritura(clave)) is esperada


def test_for_all_values_holds_when_the_key_is_absent() -> None:
    # "ForAllValues ... returns true if there are no context keys in the request" (the documented pitfall)
    assert decidir(_politica(EMAIL), Solicitud("dynamodb:PutItem", TABLA)) is Decision.PERMITIDA


def test_for_all_values_needs_every_value_to_match_and_for_any_value_one() -> None:
    cualquiera = {**EMAIL, "Condition": {"ForAnyValue:StringLike": {"dynamodb:LeadingKeys": ["correo-confirmacion:*"]}}}
    mezcla = _escritura("correo-confirmacion:P1", "cobro:P1")
    assert decidir(_politica(EMAIL), mezcla) is Decision.DENEGACION_IMPLICITA
    assert decidir(_politica(cualquiera), mezcla) is Decision.PERMITIDA
    assert decidir(_politica(cualquiera), Solicitud("dynamodb:PutItem", TABLA)) is Decision.DENEGACION_IMPLICITA


def test_actions_match_case_insensitively_with_wildcards_resources_case_sensitively() -> None:
    sentencia = {"Effect": "Allow", "Action": "DynamoDB:Put*", "Resource": "arn:aws:dynamodb:*:*:table/mercadofresco-*"}
    assert decidir(_politica(sentencia), Solicitud("dynamodb:putitem", TABLA)) is Decision.PERMITIDA
    mayusculas = Solicitud("dynamodb:PutItem", TABLA.replace("mercadofresco", "MercadoFresco"))
    assert decidir(_politica(sentencia), mayusculas) is Decision.DENEGACION_IMPLICITA
    otra = Solicitud("dynamodb:GetItem", TABLA)
    assert decidir(_politica(sentencia), otra) is Decision.DENEGACION_IMPLICITA


def test_a_resource_wildcard_does_not_reach_into_another_arn_segment() -> None:
    # arn:partition:service:region:account:resource — "*" in the region segment matches a region only
    sentencia = {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:*:123456789012:cola"}
    otra_cuenta = Solicitud("sqs:SendMessage", "arn:aws:sqs:eu-south-2:999999999999:cola")
    assert decidir(_politica(sentencia), otra_cuenta) is Decision.DENEGACION_IMPLICITA
    assert decidir(_politica(sentencia), Solicitud("sqs:SendMessage", "arn:aws:sqs:eu-west-1:123456789012:cola")) is (
        Decision.PERMITIDA
    )


def test_not_action_and_not_resource_match_everything_else() -> None:
    sentencia = {"Effect": "Allow", "NotAction": "iam:*", "NotResource": "arn:aws:sqs:*:*:secreta"}
    assert decidir(_politica(sentencia), Solicitud("sqs:SendMessage", "arn:aws:sqs:r:1:cola")) is Decision.PERMITIDA
    assert decidir(_politica(sentencia), Solicitud("iam:PassRole", "*")) is Decision.DENEGACION_IMPLICITA
    secreta = Solicitud("sqs:SendMessage", "arn:aws:sqs:r:1:secreta")
    assert decidir(_politica(sentencia), secreta) is Decision.DENEGACION_IMPLICITA


def test_conditions_are_and_across_keys_or_across_values_and_missing_keys_fail_positive_operators() -> None:
    sentencia = {
        "Effect": "Allow",
        "Action": "events:PutEvents",
        "Resource": "*",
        "Condition": {"StringEquals": {"events:source": ["a", "b"], "events:detail-type": "X"}},
    }

    def con(claves: dict[str, str]) -> Solicitud:
        return Solicitud("events:PutEvents", "*", tuple((k, (v,)) for k, v in claves.items()))

    ambas = {"events:source": "b", "events:detail-type": "X"}
    assert decidir(_politica(sentencia), con(ambas)) is Decision.PERMITIDA
    assert decidir(_politica(sentencia), con({**ambas, "events:source": "c"})) is Decision.DENEGACION_IMPLICITA
    assert decidir(_politica(sentencia), con({"events:source": "a"})) is Decision.DENEGACION_IMPLICITA


def test_negated_operators_and_if_exists_hold_when_the_key_is_absent_null_tests_presence() -> None:
    def con_condicion(condicion: dict) -> list[dict]:
        return _politica({"Effect": "Allow", "Action": "sns:Publish", "Resource": "*", "Condition": condicion})

    sin_clave = Solicitud("sns:Publish", "*")
    assert decidir(con_condicion({"StringNotEquals": {"aws:SourceAccount": "1"}}), sin_clave) is Decision.PERMITIDA
    assert decidir(con_condicion({"StringEqualsIfExists": {"aws:SourceAccount": "1"}}), sin_clave) is Decision.PERMITIDA
    assert decidir(con_condicion({"Null": {"aws:SourceAccount": "true"}}), sin_clave) is Decision.PERMITIDA
    assert decidir(con_condicion({"Null": {"aws:SourceAccount": "false"}}), sin_clave) is Decision.DENEGACION_IMPLICITA
    con_clave = Solicitud("sns:Publish", "*", (("aws:SourceAccount", ("1",)),))
    assert decidir(con_condicion({"StringNotEquals": {"aws:SourceAccount": "1"}}), con_clave) is (
        Decision.DENEGACION_IMPLICITA
    )


def test_condition_keys_are_case_insensitive() -> None:
    condicion = {"ForAllValues:StringLike": {"DynamoDB:leadingkeys": ["cobro:*"]}}
    politica = _politica({**EMAIL, "Condition": condicion})
    assert decidir(politica, _escritura("correo-confirmacion:P1")) is Decision.DENEGACION_IMPLICITA


def test_an_operator_it_does_not_implement_is_an_error_not_a_guess() -> None:
    politica = _politica({**EMAIL, "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}})
    with pytest.raises(OperadorNoSoportadoError):
        decidir(politica, _escritura("correo-confirmacion:P1"))
