"""A deployed stack's resources with its nested units' (mercadofresco_ops.recursos), against moto's CloudFormation."""

from __future__ import annotations

import json

import boto3
from mercadofresco_ops.recursos import recursos_de_la_pila

HIJA = {
    "Resources": {
        "ColaDeLaUnidad": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cola-de-la-unidad"}},
    }
}


def _padre(url_hija: str) -> dict:
    return {
        "Resources": {
            "ColaDelPadre": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cola-del-padre"}},
            "Unidad": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": url_hija}},
        }
    }


def test_a_units_resources_are_read_with_its_parents(aws) -> None:
    # GIVEN a stack that nests a unit (its template in S3, as sam deploy uploads it), each with a queue
    s3, cfn = boto3.client("s3"), boto3.client("cloudformation")
    s3.create_bucket(Bucket="plantillas", CreateBucketConfiguration={"LocationConstraint": s3.meta.region_name})
    s3.put_object(Bucket="plantillas", Key="unidad.json", Body=json.dumps(HIJA))
    url = f"https://plantillas.s3.{s3.meta.region_name}.amazonaws.com/unidad.json"
    cfn.create_stack(StackName="padre", TemplateBody=json.dumps(_padre(url)))
    # WHEN its resources are read
    recursos = recursos_de_la_pila(cfn, "padre")
    # THEN the parent's and the unit's are there by logical id, each with its physical id
    assert recursos["ColaDelPadre"].endswith("cola-del-padre")
    assert recursos["ColaDeLaUnidad"].endswith("cola-de-la-unidad")
    assert "Unidad" in recursos
