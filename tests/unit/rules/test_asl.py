"""The standalone ASL checker: targets, reachability and nested scopes."""

from __future__ import annotations

import pytest
from cfn_lint_mensajeria import asl


def _maquina(**estados):
    return {"StartAt": next(iter(estados)), "States": estados}


def test_structure_problems_correct_definition_has_no_problems():
    # GIVEN a Choice with Default and a Catch, all targets present WHEN checked THEN no problems
    definicion = _maquina(
        Decidir={
            "Type": "Choice",
            "Choices": [{"Variable": "$.x", "IsPresent": True, "Next": "Hacer"}],
            "Default": "Fin",
        },
        Hacer={
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage",
            "End": True,
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Fallo"}],
        },
        Fin={"Type": "Succeed"},
        Fallo={"Type": "Fail"},
    )
    assert asl.structure_problems(definicion) == []


def test_structure_problems_names_a_dangling_next_in_a_nested_map():
    # GIVEN a Map whose processor points at a state that only exists at the top level
    definicion = _maquina(
        Reservar={"Type": "Map", "End": True, "ItemProcessor": _maquina(Enviar={"Type": "Pass", "Next": "Fin"})},
        Fin={"Type": "Succeed"},
    )
    # WHEN checked THEN the dangling target is reported in the processor's scope, and Fin is unreachable
    assert asl.structure_problems(definicion) == [
        "Fin: unreachable from StartAt",
        "Reservar/Enviar: Next 'Fin' is not a state in this scope",
    ]


def test_structure_problems_catch_makes_reachable_and_dead_end_is_detected():
    # GIVEN a state reachable only through a Catch and a Task with neither Next nor End
    definicion = _maquina(
        A={
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage",
            "Next": "B",
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "C"}],
        },
        B={"Type": "Wait", "Seconds": 1},
        C={"Type": "Fail"},
    )
    # WHEN checked THEN only the dead end is reported
    assert asl.structure_problems(definicion) == ["B: neither Next nor End"]


def test_schema_problems_unknown_type_reports_e3601():
    # GIVEN a state of an unknown type WHEN run through cfn-lint's own ASL schema THEN it is reported
    problemas = asl.schema_problems(_maquina(X={"Type": "Magia", "End": True}))
    assert len(problemas) == 1
    assert "Magia" in problemas[0]


def test_load_file_invalid_json_gives_a_clear_error(tmp_path):
    # GIVEN a broken file WHEN loaded THEN a clear AslLoadError names it
    roto = tmp_path / "roto.asl.json"
    roto.write_text('{"StartAt": ')
    with pytest.raises(asl.AslLoadError) as info:
        asl.load_file(roto)
    assert "roto.asl.json is not valid JSON" in str(info.value)
