"""Every moto internal the emulator patches still exists, and each patch is undone when its run ends.

moto is pinned because :mod:`sam_emulator.moto_patches` replaces its internals; an upgrade that
moves one fails here, naming it, instead of deep inside a run.
"""

from __future__ import annotations

from pkgutil import resolve_name

import pytest
from sam_emulator import moto_patches


@pytest.mark.parametrize("target", moto_patches.TARGETS)
def test_each_patched_moto_target_still_exists(target: str) -> None:
    # GIVEN the pinned moto
    module, _, attribute_name = target.rpartition(".")

    # WHEN the attribute a patch replaces is looked up
    owner = resolve_name(module)

    # THEN it is there, under the name the patch uses
    assert hasattr(owner, attribute_name), f"moto no longer has {target}: review sam_emulator.moto_patches"


def test_moto_server_patches_when_closed_leave_every_target_as_it_was() -> None:
    # GIVEN every target's object before any patch
    before = {t: _object(t) for t in moto_patches.TARGETS}
    from moto.core.config import default_user_config

    configuration = {k: dict(v) for k, v in default_user_config.items()}

    # WHEN the server's and the Lambda patches are applied (all of them) and closed
    with (
        moto_patches.moto_server_patches(10.0, compress_waits=True),
        moto_patches.lambda_invoke_patches(lambda *a: None, lambda *a: None),
    ):
        during = {t: _object(t) for t in moto_patches.TARGETS}
        configured = default_user_config["stepfunctions"]["execute_state_machine"]

    # THEN each was replaced during the run and is its original afterwards
    changed = {t for t in moto_patches.TARGETS if during[t] is not before[t]}
    assert changed == set(moto_patches.TARGETS) - {"moto.core.config.default_user_config"}
    assert configured is True
    assert {t: _object(t) for t in moto_patches.TARGETS} == before
    assert {k: dict(v) for k, v in default_user_config.items()} == configuration


def _object(target: str) -> object:
    module, _, attribute_name = target.rpartition(".")
    return getattr(resolve_name(module), attribute_name)


def test_jsonata_evaluator_gives_each_asl_parse_its_own_query_language_scopes() -> None:
    # GIVEN moto's ASL preprocessor, one per parse (concurrent executions parse in their own threads)
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    # WHEN two are made under the emulator's JSONata patches
    with moto_patches.jsonata_evaluator():
        one, other = Preprocessor(), Preprocessor()
    # THEN they do not share the stack of QueryLanguage scopes (moto 5.2.5's is a class attribute), so
    # one parse's JSONata state is never read in another's JSONPath scope
    assert one._query_language_per_scope is not other._query_language_per_scope


# A loop counted in a variable (Assign, a JSONPath-mode $n reference in a Choice and an intrinsic), a
# JSONata Wait and a JSONata Output: each goes through moto's JSONata bridge.
_WITH_VARIABLES = {
    "StartAt": "Inicio",
    "States": {
        "Inicio": {"Type": "Pass", "Assign": {"n": 0, "x.$": "$.x"}, "Next": "Contar"},
        "Contar": {"Type": "Pass", "Assign": {"n.$": "States.MathAdd($n, 1)"}, "Next": "Queda"},
        "Queda": {
            "Type": "Choice",
            "Choices": [{"Variable": "$n", "NumericLessThan": 3, "Next": "Contar"}],
            "Default": "Esperar",
        },
        "Esperar": {"Type": "Wait", "QueryLanguage": "JSONata", "Seconds": "{% $n - 3 %}", "Next": "Fin"},
        "Fin": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% {'n': $n, 'x': $x * 2} %}", "End": True},
    },
}


@pytest.mark.integration
def test_workflow_with_variables_and_jsonata_runs_on_the_emulators_moto(moto_server) -> None:
    import json

    import boto3
    from sam_emulator.testing import wait_until

    # GIVEN a state machine that counts in a variable and evaluates JSONata, on the emulator's moto server
    sfn = boto3.client("stepfunctions", endpoint_url=moto_server.url)
    arn = sfn.create_state_machine(
        name="mf-variables", definition=json.dumps(_WITH_VARIABLES), roleArn="arn:aws:iam::123456789012:role/x"
    )["stateMachineArn"]
    # WHEN it runs
    execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"x": 7}))["executionArn"]
    end = wait_until(
        lambda: (d := sfn.describe_execution(executionArn=execution))["status"] != "RUNNING" and d, "the execution"
    )
    # THEN moto evaluated every variable and expression (without the bridge: TypeError, States.Runtime)
    assert end["status"] == "SUCCEEDED", end.get("cause")
    assert json.loads(end["output"]) == {"n": 3, "x": 14}
