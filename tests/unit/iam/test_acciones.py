"""API calls as IAM sees them: the action it authorises, the resource ARN and the condition keys."""

from __future__ import annotations

from least_privilege.acciones import Destino, solicitudes_de
from least_privilege.evaluador import Solicitud

D = Destino("eu-south-2", "123456789012", {"mercadofresco-idempotencia": "clave"})
TABLA = "arn:aws:dynamodb:eu-south-2:123456789012:table/mercadofresco-idempotencia"


def test_a_dynamodb_write_carries_its_partition_key_as_leading_keys() -> None:
    params = {"TableName": "mercadofresco-idempotencia", "Item": {"clave": {"S": "cobro:P1"}, "x": {"N": "1"}}}
    assert solicitudes_de("dynamodb", "PutItem", params, D) == [
        Solicitud("dynamodb:PutItem", TABLA, (("dynamodb:LeadingKeys", ("cobro:P1",)),))
    ]


def test_a_transaction_is_one_request_per_item_each_with_its_action() -> None:
    params = {
        "TransactItems": [
            {"Put": {"TableName": "mercadofresco-idempotencia", "Item": {"clave": {"S": "a:1"}}}},
            {"Update": {"TableName": "mercadofresco-idempotencia", "Key": {"clave": {"S": "b:1"}}}},
        ]
    }
    assert [
        (s.accion, s.claves["dynamodb:leadingkeys"])
        for s in solicitudes_de("dynamodb", "TransactWriteItems", params, D)
    ] == [
        ("dynamodb:PutItem", ("a:1",)),
        ("dynamodb:UpdateItem", ("b:1",)),
    ]


def test_sqs_batch_calls_are_authorised_as_their_single_action_on_the_queue_arn() -> None:
    url = "http://127.0.0.1:5000/123456789012/cola-mercadofresco-pedidos"
    (solicitud,) = solicitudes_de("sqs", "SendMessageBatch", {"QueueUrl": url, "Entries": []}, D)
    assert solicitud == Solicitud("sqs:SendMessage", "arn:aws:sqs:eu-south-2:123456789012:cola-mercadofresco-pedidos")


def test_put_events_is_one_request_per_entry_with_its_bus_source_and_detail_type() -> None:
    params = {"Entries": [{"EventBusName": "bus-mercadofresco", "Source": "mercadofresco.tienda", "DetailType": "X"}]}
    (solicitud,) = solicitudes_de("events", "PutEvents", params, D)
    assert solicitud.recurso == "arn:aws:events:eu-south-2:123456789012:event-bus/bus-mercadofresco"
    assert solicitud.claves == {"events:source": ("mercadofresco.tienda",), "events:detail-type": ("X",)}


def test_signing_names_map_to_iam_prefixes_and_unknown_calls_land_on_star() -> None:
    (metrica,) = solicitudes_de("monitoring", "PutMetricData", {"Namespace": "MercadoFresco/Tienda"}, D)
    assert metrica == Solicitud("cloudwatch:PutMetricData", "*", (("cloudwatch:namespace", ("MercadoFresco/Tienda",)),))
    assert solicitudes_de("lambda", "Invoke", {"FunctionName": "mercadofresco-cobro"}, D) == [
        Solicitud("lambda:InvokeFunction", "arn:aws:lambda:eu-south-2:123456789012:function:mercadofresco-cobro")
    ]
    assert solicitudes_de("ssm", "GetParameter", {"Name": "x"}, D) == [Solicitud("ssm:GetParameter", "*")]


def test_a_signed_function_url_call_is_invoke_function_url_and_invoke_function_on_the_function_behind_it() -> None:
    destino = Destino(
        "eu-south-2",
        "123456789012",
        urls_funcion={
            "http://127.0.0.1:41001/": "arn:aws:lambda:eu-south-2:123456789012:function:simulador-correo",
            "/_aws/lambda-url/abc/": "arn:aws:lambda:eu-south-2:123456789012:function:simulador-erp",
        },
    )
    firmada = (("lambda:FunctionUrlAuthType", ("AWS_IAM",)),)
    # a stand-in's URL (longest prefix), an emulator's path form (any host), and a URL nobody plays
    for url, funcion in (
        ("http://127.0.0.1:41001/principal/correos", "function:simulador-correo"),
        ("http://172.17.0.1:4599/_aws/lambda-url/abc/avisos", "function:simulador-erp"),
    ):
        # THEN both actions a URL created since October 2025 authorises, on the same function
        arn = f"arn:aws:lambda:eu-south-2:123456789012:{funcion}"
        assert solicitudes_de("lambda", "InvokeFunctionUrl", {"FunctionUrl": url}, destino) == [
            Solicitud("lambda:InvokeFunctionUrl", arn, firmada),
            Solicitud("lambda:InvokeFunction", arn, (("lambda:InvokedViaFunctionUrl", ("true",)),)),
        ]
    otras = solicitudes_de("lambda", "InvokeFunctionUrl", {"FunctionUrl": "https://x.example/"}, destino)
    assert {s.recurso for s in otras} == {"*"}
