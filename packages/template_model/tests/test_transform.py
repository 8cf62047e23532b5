from __future__ import annotations

import pytest
from template_cases import TEMPLATE
from template_model import Template, TemplateError
from template_model.transform import sam_transformed


def test_the_sam_transform_gives_what_sam_deploy_would_send() -> None:
    # GIVEN the repository's template  WHEN SAM's translator transforms it
    transformed = sam_transformed(Template(path=TEMPLATE))
    resources = transformed["Resources"]
    # THEN functions are native, their SQS events are mappings, code locations are packaged ones
    assert resources["CobroFunction"]["Type"] == "AWS::Lambda::Function"
    assert resources["CobroFunction"]["Properties"]["Code"]["S3Bucket"] == "sam-package"
    assert resources["Consumidores"]["Type"] == "AWS::CloudFormation::Stack"
    # ...and a unit's: its SQS events are mappings
    unidad = sam_transformed(Template(path=TEMPLATE).units()["Consumidores"])["Resources"]
    assert unidad["ErpFunctionAvisoErp"]["Type"] == "AWS::Lambda::EventSourceMapping"
    assert "Transform" not in transformed


def test_a_template_sam_refuses_is_a_template_error() -> None:
    # GIVEN a SAM function with an event of an unknown type
    document = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {"F": {"Type": "AWS::Serverless::Function", "Properties": {
            "CodeUri": "f/", "Handler": "app.h", "Runtime": "python3.13", "Events": {"E": {"Type": "Nada"}}}}},
    }  # fmt: skip
    # WHEN transformed  THEN the translator's refusal is a TemplateError
    with pytest.raises(TemplateError, match="SAM transform refused"):
        sam_transformed(document, "eu-south-2")
