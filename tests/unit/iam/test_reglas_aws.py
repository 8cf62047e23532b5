"""The check decides AWS's documented cases as AWS's documentation says it decides them.

Each case cites the page (IAM User Guide unless said otherwise) whose rule it pins. The five classes issue 35
found the hand-written evaluator getting wrong have a test each (``test_class_*``): each failed on that
evaluator (``Null`` with two values denied, a ``*`` inside a segment spanning ``:`` allowed, a policy
variable never substituted so its Deny allowed, a JSON ``true`` compared as ``"True"``, a single-valued
operator on ``dynamodb:LeadingKeys`` read as ``ForAnyValue``). The evaluator is iam-simulate
(docs/decisions/0111-iam-evaluator.md); where it departs from the documentation the check refuses the
request (:mod:`least_privilege.limites`), and these cases say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from least_privilege.evaluador import Decision, NoEvaluableError, Solicitud, decidir

CUENTA = "123456789012"
REGION = "eu-south-2"
TABLA = f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/mercadofresco-idempotencia"
COLA = f"arn:aws:sqs:{REGION}:{CUENTA}:cola-mercadofresco-pedidos"
TEMA = f"arn:aws:sns:{REGION}:{CUENTA}:mercadofresco-pedido-confirmado"
CLAVE = f"arn:aws:kms:{REGION}:{CUENTA}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
ROL = f"arn:aws:iam::{CUENTA}:role/mercadofresco-cobro"

EVALUACION = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html"
OPERADORES = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html"
MULTIVALOR = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html"
RECURSO = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_resource.html"
VARIABLES = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_variables.html"
GRAMATICA = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_grammar.html"
CONDICION = "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition.html"
MISMA_CUENTA = (
    "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic_policy-eval-basics.html"
)
KMS_POLITICAS = "https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html"
KMS_CONTEXTO = "https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html"


def _politica(*sentencias: dict) -> dict:
    return {"Version": "2012-10-17", "Statement": list(sentencias)}


def _solicitud(accion: str, recurso: str, contexto: dict[str, str | tuple[str, ...]] | None = None) -> Solicitud:
    return Solicitud(
        accion, recurso, tuple((k, v if isinstance(v, tuple) else (v,)) for k, v in (contexto or {}).items())
    )


PERMITE_ENVIAR = {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": COLA}
ESCRITURAS_COBRO = {
    "Effect": "Allow",
    "Action": ["dynamodb:PutItem", "dynamodb:UpdateItem"],
    "Resource": TABLA,
    "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["cobro:*", "reembolso:*"]}},
}


@dataclass(frozen=True)
class Caso:
    nombre: str
    cita: str
    politicas: tuple[dict, ...]
    solicitud: Solicitud
    esperada: Decision
    principal: str = ROL
    politica_recurso: dict | None = None


def _escritura(*claves: str) -> Solicitud:
    return _solicitud("dynamodb:PutItem", TABLA, {"dynamodb:LeadingKeys": claves})


CASOS = [
    # ---------------------------------------------------------------- evaluation logic
    Caso(
        "no statement: implicit deny",
        EVALUACION,
        (_politica(),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "an explicit deny overrides any allow",
        EVALUACION,
        (_politica(PERMITE_ENVIAR, {"Effect": "Deny", "Action": "sqs:*", "Resource": "*"}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_EXPLICITA,
    ),
    Caso(
        "a deny in another policy of the principal wins too",
        EVALUACION,
        (_politica(PERMITE_ENVIAR), _politica({"Effect": "Deny", "Action": "sqs:SendMessage", "Resource": COLA})),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_EXPLICITA,
    ),
    Caso(
        "actions match case-insensitively",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_action.html",
        (_politica({"Effect": "Allow", "Action": "SQS:sendmessage", "Resource": COLA}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.PERMITIDA,
    ),
    Caso(
        "resources match case-sensitively",
        RECURSO,
        (
            _politica(
                {
                    "Effect": "Allow",
                    "Action": "sqs:SendMessage",
                    "Resource": COLA.upper().replace("ARN:AWS:SQS", "arn:aws:sqs"),
                }
            ),
        ),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "NotAction allows every other action",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_notaction.html",
        (_politica({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.PERMITIDA,
    ),
    Caso(
        "NotResource excludes the resource it names",
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_notresource.html",
        (_politica({"Effect": "Allow", "Action": "sqs:SendMessage", "NotResource": COLA}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_IMPLICITA,
    ),
    # ---------------------------------------------------------------- ARNs and wildcards
    Caso(
        "a '*' in the region segment matches any region",
        RECURSO,
        (
            _politica(
                {
                    "Effect": "Allow",
                    "Action": "sqs:SendMessage",
                    "Resource": f"arn:aws:sqs:*:{CUENTA}:cola-mercadofresco-pedidos",
                }
            ),
        ),
        _solicitud("sqs:SendMessage", COLA),
        Decision.PERMITIDA,
    ),
    Caso(
        "a '*' in the region segment does not reach the account",
        RECURSO,
        (
            _politica(
                {
                    "Effect": "Allow",
                    "Action": "sqs:SendMessage",
                    "Resource": f"arn:aws:sqs:*:{CUENTA}:cola-mercadofresco-pedidos",
                }
            ),
        ),
        _solicitud("sqs:SendMessage", COLA.replace(CUENTA, "999999999999")),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "a segment's trailing '*' spans ':'",
        RECURSO,
        (
            _politica(
                {
                    "Effect": "Allow",
                    "Action": "logs:PutLogEvents",
                    "Resource": f"arn:aws:logs:{REGION}:{CUENTA}:log-group:/aws/lambda/mf-erp:*",
                }
            ),
        ),
        _solicitud(
            "logs:PutLogEvents",
            f"arn:aws:logs:{REGION}:{CUENTA}:log-group:/aws/lambda/mf-erp:log-stream:2026/12/04/abc",
        ),
        Decision.PERMITIDA,
    ),
    Caso(
        "'?' matches one character",
        RECURSO,
        (
            _politica(
                {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": f"arn:aws:sqs:{REGION}:{CUENTA}:cola-?"}
            ),
        ),
        _solicitud("sqs:SendMessage", f"arn:aws:sqs:{REGION}:{CUENTA}:cola-a"),
        Decision.PERMITIDA,
    ),
    # ---------------------------------------------------------------- conditions
    Caso(
        "keys of a block are ANDed, values of a key ORed",
        CONDICION,
        (
            _politica(
                {
                    **PERMITE_ENVIAR,
                    "Condition": {"StringEquals": {"aws:SourceAccount": [CUENTA, "1"], "aws:SourceArn": TEMA}},
                }
            ),
        ),
        _solicitud("sqs:SendMessage", COLA, {"aws:SourceAccount": CUENTA, "aws:SourceArn": TEMA}),
        Decision.PERMITIDA,
    ),
    Caso(
        "one key of a block failing fails the statement",
        CONDICION,
        (
            _politica(
                {**PERMITE_ENVIAR, "Condition": {"StringEquals": {"aws:SourceAccount": CUENTA, "aws:SourceArn": TEMA}}}
            ),
        ),
        _solicitud("sqs:SendMessage", COLA, {"aws:SourceAccount": CUENTA}),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "condition keys are case-insensitive",
        CONDICION,
        (_politica({**PERMITE_ENVIAR, "Condition": {"StringEquals": {"AWS:sourcearn": TEMA}}}),),
        _solicitud("sqs:SendMessage", COLA, {"aws:SourceArn": TEMA}),
        Decision.PERMITIDA,
    ),
    Caso(
        "an absent key fails a positive operator",
        OPERADORES,
        (_politica({**PERMITE_ENVIAR, "Condition": {"StringEquals": {"aws:SourceArn": TEMA}}}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "an absent key satisfies a negated operator",
        OPERADORES,
        (_politica({**PERMITE_ENVIAR, "Condition": {"StringNotEquals": {"aws:SourceArn": TEMA}}}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.PERMITIDA,
    ),
    Caso(
        "...IfExists holds when the key is absent",
        OPERADORES,
        (_politica({**PERMITE_ENVIAR, "Condition": {"ArnEqualsIfExists": {"aws:SourceArn": TEMA}}}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.PERMITIDA,
    ),
    Caso(
        "...IfExists checks the key when present",
        OPERADORES,
        (_politica({**PERMITE_ENVIAR, "Condition": {"ArnEqualsIfExists": {"aws:SourceArn": TEMA}}}),),
        _solicitud("sqs:SendMessage", COLA, {"aws:SourceArn": TEMA + "-otro"}),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "Null true: the key is absent",
        OPERADORES,
        (_politica({**PERMITE_ENVIAR, "Condition": {"Null": {"aws:SourceArn": "true"}}}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.PERMITIDA,
    ),
    Caso(
        "Null false on an absent key fails",
        OPERADORES,
        (_politica({**PERMITE_ENVIAR, "Condition": {"Null": {"aws:SourceArn": "false"}}}),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "StringLike wildcards",
        OPERADORES,
        (
            _politica(
                {
                    **PERMITE_ENVIAR,
                    "Condition": {"StringLike": {"aws:SourceArn": f"arn:aws:sns:{REGION}:{CUENTA}:mercadofresco-*"}},
                }
            ),
        ),
        _solicitud("sqs:SendMessage", COLA, {"aws:SourceArn": TEMA}),
        Decision.PERMITIDA,
    ),
    Caso(
        "NumericLessThan",
        OPERADORES,
        (
            _politica(
                {
                    "Effect": "Allow",
                    "Action": "dynamodb:Query",
                    "Resource": TABLA,
                    "Condition": {"NumericLessThanEquals": {"dynamodb:ReturnConsumedCapacity": "1"}},
                }
            ),
        ),
        _solicitud("dynamodb:Query", TABLA),
        Decision.DENEGACION_IMPLICITA,
    ),
    # ---------------------------------------------------------------- multivalued keys
    Caso(
        "ForAllValues: every value must match",
        MULTIVALOR,
        (_politica(ESCRITURAS_COBRO),),
        _escritura("cobro:P1", "correo-confirmacion:P1"),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "ForAllValues: all values matching",
        MULTIVALOR,
        (_politica(ESCRITURAS_COBRO),),
        _escritura("cobro:P1", "reembolso:P1"),
        Decision.PERMITIDA,
    ),
    Caso(
        "ForAllValues holds when the key is absent",
        MULTIVALOR,
        (_politica(ESCRITURAS_COBRO),),
        _solicitud("dynamodb:PutItem", TABLA),
        Decision.PERMITIDA,
    ),
    Caso(
        "ForAnyValue: one matching value is enough",
        MULTIVALOR,
        (
            _politica(
                {**ESCRITURAS_COBRO, "Condition": {"ForAnyValue:StringLike": {"dynamodb:LeadingKeys": ["cobro:*"]}}}
            ),
        ),
        _escritura("cobro:P1", "correo-confirmacion:P1"),
        Decision.PERMITIDA,
    ),
    Caso(
        "ForAnyValue fails when the key is absent",
        MULTIVALOR,
        (
            _politica(
                {**ESCRITURAS_COBRO, "Condition": {"ForAnyValue:StringLike": {"dynamodb:LeadingKeys": ["cobro:*"]}}}
            ),
        ),
        _solicitud("dynamodb:PutItem", TABLA),
        Decision.DENEGACION_IMPLICITA,
    ),
    # ---------------------------------------------------------------- resource-based policies, one account
    Caso(
        "a queue policy alone lets a service principal send",
        MISMA_CUENTA,
        (),
        _solicitud("sqs:SendMessage", COLA, {"aws:SourceArn": TEMA}),
        Decision.PERMITIDA,
        principal="sns.amazonaws.com",
        politica_recurso=_politica(
            {
                "Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": COLA,
                "Condition": {"ArnEquals": {"aws:SourceArn": TEMA}},
            }
        ),
    ),
    Caso(
        "the queue policy's source condition holds the other topics out",
        MISMA_CUENTA,
        (),
        _solicitud("sqs:SendMessage", COLA, {"aws:SourceArn": TEMA + "-otro"}),
        Decision.DENEGACION_IMPLICITA,
        principal="sns.amazonaws.com",
        politica_recurso=_politica(
            {
                "Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": COLA,
                "Condition": {"ArnEquals": {"aws:SourceArn": TEMA}},
            }
        ),
    ),
    Caso(
        "within one account a resource policy naming the role is enough",
        MISMA_CUENTA,
        (),
        _solicitud("sqs:SendMessage", COLA),
        Decision.PERMITIDA,
        politica_recurso=_politica(
            {"Effect": "Allow", "Principal": {"AWS": ROL}, "Action": "sqs:SendMessage", "Resource": COLA}
        ),
    ),
    Caso(
        "a resource policy's deny wins over the identity's allow",
        EVALUACION,
        (_politica(PERMITE_ENVIAR),),
        _solicitud("sqs:SendMessage", COLA),
        Decision.DENEGACION_EXPLICITA,
        politica_recurso=_politica({"Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": COLA}),
    ),
    # ---------------------------------------------------------------- KMS key policies
    Caso(
        "KMS: an IAM policy counts only when the key policy trusts the account",
        KMS_POLITICAS,
        (_politica({"Effect": "Allow", "Action": "kms:Decrypt", "Resource": CLAVE}),),
        _solicitud("kms:Decrypt", CLAVE),
        Decision.DENEGACION_IMPLICITA,
        politica_recurso=_politica(
            {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "kms:Decrypt", "Resource": "*"}
        ),
    ),
    Caso(
        "KMS: the account trusted, the role's IAM policy allows",
        KMS_POLITICAS,
        (_politica({"Effect": "Allow", "Action": "kms:Decrypt", "Resource": CLAVE}),),
        _solicitud("kms:Decrypt", CLAVE),
        Decision.PERMITIDA,
        politica_recurso=_politica(
            {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{CUENTA}:root"}, "Action": "kms:*", "Resource": "*"}
        ),
    ),
    Caso(
        "KMS: the account trusted, the role granted nothing",
        KMS_POLITICAS,
        (_politica(),),
        _solicitud("kms:Decrypt", CLAVE),
        Decision.DENEGACION_IMPLICITA,
        politica_recurso=_politica(
            {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{CUENTA}:root"}, "Action": "kms:*", "Resource": "*"}
        ),
    ),
    Caso(
        "KMS: kms:ViaService limits a grant to one service's requests",
        KMS_CONTEXTO,
        (
            _politica(
                {
                    "Effect": "Allow",
                    "Action": "kms:Decrypt",
                    "Resource": CLAVE,
                    "Condition": {"StringEquals": {"kms:ViaService": f"sqs.{REGION}.amazonaws.com"}},
                }
            ),
        ),
        _solicitud("kms:Decrypt", CLAVE, {"kms:ViaService": f"secretsmanager.{REGION}.amazonaws.com"}),
        Decision.DENEGACION_IMPLICITA,
        politica_recurso=_politica(
            {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{CUENTA}:root"}, "Action": "kms:*", "Resource": "*"}
        ),
    ),
    Caso(
        "KMS: an encryption-context condition in the key policy",
        KMS_CONTEXTO,
        (),
        _solicitud(
            "kms:GenerateDataKey",
            CLAVE,
            {"kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:{REGION}:{CUENTA}:log-group:/aws/lambda/mf-erp"},
        ),
        Decision.PERMITIDA,
        principal=f"logs.{REGION}.amazonaws.com",
        politica_recurso=_politica(
            {
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{REGION}.amazonaws.com"},
                "Action": "kms:GenerateDataKey*",
                "Resource": "*",
                "Condition": {
                    "ArnLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:{REGION}:{CUENTA}:log-group:*"}
                },
            }
        ),
    ),
    Caso(
        "KMS: another log group's context fails that condition",
        KMS_CONTEXTO,
        (),
        _solicitud(
            "kms:GenerateDataKey",
            CLAVE,
            {"kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:{REGION}:999999999999:log-group:/aws/lambda/x"},
        ),
        Decision.DENEGACION_IMPLICITA,
        principal=f"logs.{REGION}.amazonaws.com",
        politica_recurso=_politica(
            {
                "Effect": "Allow",
                "Principal": {"Service": f"logs.{REGION}.amazonaws.com"},
                "Action": "kms:GenerateDataKey*",
                "Resource": "*",
                "Condition": {
                    "ArnLike": {"kms:EncryptionContext:aws:logs:arn": f"arn:aws:logs:{REGION}:{CUENTA}:log-group:*"}
                },
            }
        ),
    ),
    # ---------------------------------------------------------------- policy variables
    Caso(
        "a policy variable with no value in the request matches nothing",
        VARIABLES,
        (
            _politica(
                {
                    "Effect": "Allow",
                    "Action": "dynamodb:PutItem",
                    "Resource": f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/${{aws:username}}",
                }
            ),
        ),
        _solicitud("dynamodb:PutItem", f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/ana"),
        Decision.DENEGACION_IMPLICITA,
    ),
    Caso(
        "a policy variable in a condition value",
        VARIABLES,
        (
            _politica(
                {
                    **ESCRITURAS_COBRO,
                    "Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["${aws:userid}"]}},
                }
            ),
        ),
        _solicitud(
            "dynamodb:PutItem",
            TABLA,
            {"dynamodb:LeadingKeys": ("AROAEXAMPLE:cobro",), "aws:userid": "AROAEXAMPLE:cobro"},
        ),
        Decision.PERMITIDA,
    ),
]


@pytest.mark.parametrize("caso", CASOS, ids=[c.nombre for c in CASOS])
def test_each_documented_case_is_decided_as_aws_documents_it(caso: Caso) -> None:
    # GIVEN a principal's policies (and the resource's), WHEN the check decides the request
    decision = decidir(list(caso.politicas), caso.solicitud, caso.principal, caso.politica_recurso)
    # THEN the decision is the documented one
    assert decision is caso.esperada, caso.cita


def test_class_null_with_several_values_ors_them() -> None:
    # "Null" with ["true", "false"]: AWS ORs a key's values, so it holds whether the key is there or not
    # (Condition operators). The hand-written evaluator ANDed them and denied.
    politica = _politica({**PERMITE_ENVIAR, "Condition": {"Null": {"aws:SourceArn": ["true", "false"]}}})
    assert decidir([politica], _solicitud("sqs:SendMessage", COLA, {"aws:SourceArn": TEMA})) is Decision.PERMITIDA
    assert decidir([politica], _solicitud("sqs:SendMessage", COLA)) is Decision.PERMITIDA


def test_class_a_star_inside_an_arn_segment_does_not_span_colons() -> None:
    # Only a segment's trailing "*" spans ":" (Resource, wildcards). The hand-written evaluator allowed
    # function:mf-*-x on function:mf-a:b-x; iam-simulate would too, so the check refuses to decide it.
    politica = _politica(
        {
            "Effect": "Allow",
            "Action": "lambda:InvokeFunction",
            "Resource": f"arn:aws:lambda:{REGION}:{CUENTA}:function:mf-*-x",
        }
    )
    cruzando = _solicitud("lambda:InvokeFunction", f"arn:aws:lambda:{REGION}:{CUENTA}:function:mf-a:b-x")
    with pytest.raises(NoEvaluableError, match="would span ':'"):
        decidir([politica], cruzando)
    # AND where the segment holds no colon both readings agree, and it is decided
    dentro = _solicitud("lambda:InvokeFunction", f"arn:aws:lambda:{REGION}:{CUENTA}:function:mf-a-x")
    assert decidir([politica], dentro) is Decision.PERMITIDA


def test_class_a_policy_variable_is_substituted_so_its_deny_denies() -> None:
    # ${aws:PrincipalTag/equipo} takes the request's value (Variables and tags). The hand-written evaluator
    # compared the text "${...}" literally: the Deny never matched and the request was allowed.
    politica = _politica(
        {"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": "*"},
        {
            "Effect": "Deny",
            "Action": "dynamodb:PutItem",
            "Resource": f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/${{aws:PrincipalTag/equipo}}-*",
        },
    )
    suya = _solicitud(
        "dynamodb:PutItem", f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/pagos-x", {"aws:PrincipalTag/equipo": "pagos"}
    )
    ajena = _solicitud(
        "dynamodb:PutItem", f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/envios-x", {"aws:PrincipalTag/equipo": "pagos"}
    )
    assert decidir([politica], suya) is Decision.DENEGACION_EXPLICITA
    assert decidir([politica], ajena) is Decision.PERMITIDA
    # AND a variable iam-simulate would cut at its own colon is refused, not decided
    cortada = _politica(
        {
            "Effect": "Deny",
            "Action": "sqs:SendMessage",
            "Resource": f"arn:aws:sqs:{REGION}:{CUENTA}:${{aws:username}}-q",
        }
    )
    with pytest.raises(NoEvaluableError, match="policy variable"):
        decidir(
            [cortada], _solicitud("sqs:SendMessage", f"arn:aws:sqs:{REGION}:{CUENTA}:ana-q", {"aws:username": "ana"})
        )


def test_class_a_json_boolean_is_the_string_true() -> None:
    # "Quotation marks are optional for numeric and Boolean values" (Grammar): true is "true". The
    # hand-written evaluator compared "True" (Python's str) with "true" and denied.
    politica = _politica({**PERMITE_ENVIAR, "Condition": {"StringEquals": {"aws:SecureTransport": True}}})
    assert (
        decidir([politica], _solicitud("sqs:SendMessage", COLA, {"aws:SecureTransport": "true"})) is Decision.PERMITIDA
    ), GRAMATICA


def test_class_a_single_valued_operator_never_matches_a_multivalued_key() -> None:
    # "Multivalued context keys require a condition set operator" (Single-valued vs. multivalued keys):
    # a bare StringLike on dynamodb:LeadingKeys matches nothing. The hand-written evaluator read it as
    # ForAnyValue and allowed.
    politica = _politica({**ESCRITURAS_COBRO, "Condition": {"StringLike": {"dynamodb:LeadingKeys": ["cobro:*"]}}})
    assert decidir([politica], _escritura("cobro:P1")) is Decision.DENEGACION_IMPLICITA


def test_a_request_modelled_wrong_is_refused_not_guessed() -> None:
    # an action AWS does not have, a resource of the wrong type, a key the action does not carry
    permitir_todo = _politica({"Effect": "Allow", "Action": "*", "Resource": "*"})
    for solicitud, motivo in (
        (_solicitud("sqs:EnviarMensaje", COLA), "invalid.action"),
        (_solicitud("sqs:SendMessage", TABLA), "no.resource.types"),
        (_solicitud("sqs:SendMessage", COLA, {"dynamodb:LeadingKeys": ("x",)}), "do not apply"),
        (_solicitud("sqs:SendMessage", "*"), "pattern"),
    ):
        with pytest.raises(NoEvaluableError, match=motivo):
            decidir([permitir_todo], solicitud)


_TEXTO = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(accion=_TEXTO, recurso=_TEXTO, clave=_TEXTO, valor=_TEXTO, operador=_TEXTO)
def test_any_request_or_policy_gets_a_decision_or_a_clear_refusal(
    accion: str, recurso: str, clave: str, valor: str, operador: str
) -> None:
    # GIVEN arbitrary text where an action, a resource, a context key and a condition operator go
    politica = _politica(
        {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {operador or "X": {clave or "k": valor}}}
    )
    # WHEN the check decides it, THEN it answers a decision or refuses with NoEvaluableError, nothing else
    try:
        assert isinstance(decidir([politica], _solicitud(accion, recurso, {clave or "k": valor})), Decision)
    except NoEvaluableError as exc:
        assert str(exc)
