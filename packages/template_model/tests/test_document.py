from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from template_cases import LOOPED
from template_model import Template, TemplateError, expand, read
from template_model.document import has_loops


def test_read_expands_a_loop_into_the_logical_ids_it_names(write) -> None:
    # GIVEN two consumers written once with Fn::ForEach
    path = write(LOOPED)
    # WHEN the file is read
    document = read(path)
    # THEN each instance is there under its own id, wired to its own queue, and no loop is left
    resources = document["Resources"]
    assert [lid for lid in resources if lid != "Table"] == [
        "QueueErpDlq", "QueueErp", "ErpFunction", "ErpFunctionRole",
        "QueueCorreoDlq", "QueueCorreo", "CorreoFunction", "CorreoFunctionRole",
    ]  # fmt: skip
    assert resources["QueueCorreo"]["Properties"]["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": ["QueueCorreoDlq", "Arn"]
    }
    assert resources["ErpFunction"]["Properties"]["CodeUri"] == {"Fn::FindInMap": ["Consumers", "Erp", "Name"]}
    assert Template(path=path).resolve(resources["ErpFunction"]["Properties"]["CodeUri"]) == "erp"
    assert not has_loops(document)


def test_a_find_in_map_is_kept_as_written_inside_and_outside_a_loop(write) -> None:
    # GIVEN a looped template whose bounds are read from a mapping, inside the loop and beside it
    # (cfn-lint's transform resolves every Fn::FindInMap whose keys it can: the declaration would be lost)
    fuera = "  Table:\n    Type: AWS::DynamoDB::Table\n"
    dentro = "          Handler: app.handler\n"
    looped = LOOPED.replace(fuera, fuera + "    Metadata:\n      Bound: !FindInMap [Consumers, Erp, Name]\n").replace(
        dentro, dentro + '          Timeout: !FindInMap [Consumers, !Sub "${Name}", Name]\n'
    )
    # WHEN it is read
    resources = read(write(looped))["Resources"]
    # THEN each is still a Fn::FindInMap into its mapping, the loop's identifier replaced
    assert resources["Table"]["Metadata"]["Bound"] == {"Fn::FindInMap": ["Consumers", "Erp", "Name"]}
    assert resources["CorreoFunction"]["Properties"]["Timeout"] == {"Fn::FindInMap": ["Consumers", "Correo", "Name"]}


def test_a_looped_function_gets_globals_under_its_own_properties(write) -> None:
    # GIVEN a function a loop generates (cfn-lint merges Globals before expanding: it would get none)
    created = {"CorreoFunctionRole": {"Arn": "arn:aws:iam::1:role/c"}, "QueueCorreo": {"Arn": "arn:aws:sqs:q"}}
    template = Template(path=write(LOOPED), physical_ids=created)
    # WHEN its properties are asked for
    properties = template.function_properties("CorreoFunction")
    # THEN Globals are under them, its own win, environment variables merged
    assert properties["Runtime"] == "python3.13"
    assert properties["Handler"] == "app.handler"
    assert properties["Environment"]["Variables"] == {"SHARED": "yes", "OWN": "1"}


def test_a_template_without_loops_is_returned_as_it_was(write) -> None:
    # GIVEN a decoded template with no language extensions
    document = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
    # WHEN expanded  THEN it is the same object (an already-linted cfn.template costs nothing)
    assert expand(document) is document


def test_an_already_decoded_document_is_expanded_too(write) -> None:
    # GIVEN the loop as a decoded dict (what a cfn-lint rule would hold before its transform)
    document = json.loads(json.dumps(read(write(LOOPED))))
    looped = Template(path=write(LOOPED)).doc
    # WHEN a template is made from it  THEN it reads the same resources
    assert list(Template.from_document(document).resources) == list(looped["Resources"])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Resources: [\n", "template.yaml"),
        ("- a list\n", "not a template"),
        (LOOPED.replace("[Erp, Correo]", "[Erp, Erp]"), "Fn::ForEach"),
    ],
    ids=["not yaml", "not a mapping", "a loop that repeats an id"],
)
def test_an_unreadable_template_is_a_template_error_that_names_it(write, text: str, says: str) -> None:
    # GIVEN a broken template  WHEN it is read  THEN the error says what and where
    with pytest.raises(TemplateError) as error:
        read(write(text))
    assert says in str(error.value)


def test_a_file_read_again_is_its_own_copy_and_a_changed_file_is_read_anew(write) -> None:
    # GIVEN a looped template read once, and what that read gave changed by its reader
    path = write(LOOPED)
    primera = read(path)
    primera["Resources"]["QueueErp"]["Properties"]["VisibilityTimeout"] = 1
    # WHEN it is read again  THEN the second reader sees the file, not the first reader's change
    assert read(path) == read(path) != primera
    # AND a file rewritten in place (one more consumer) is read as it is now
    path.write_text(LOOPED.replace("[Erp, Correo]", "[Erp, Correo, Factura]"))
    assert "FacturaFunction" in read(path)["Resources"]


def test_a_missing_file_is_a_template_error(tmp_path) -> None:
    with pytest.raises(TemplateError, match="no such template file"):
        read(tmp_path / "nowhere.yaml")


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_names = st.sampled_from(
    [
        "Ref",
        "Fn::Sub",
        "Fn::GetAtt",
        "Fn::If",
        "Fn::Join",
        "Fn::Select",
        "Fn::FindInMap",
        "Fn::Equals",
        "Fn::Not",
        "Fn::And",
        "Fn::Or",
        "Condition",
        "Other",
    ]
)
_nodes = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_names, inner, min_size=1, max_size=1)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(node=_nodes)
def test_resolving_any_intrinsic_shape_answers_or_raises_a_template_error(node) -> None:
    # GIVEN a template with a parameter, a condition and a mapping, and any nesting of intrinsics
    template = Template.from_document(
        {
            "Parameters": {"P": {"Type": "String", "Default": "x"}},
            "Conditions": {"C": {"Fn::Equals": [{"Ref": "P"}, "x"]}},
            "Mappings": {"M": {"k": {"v": "1"}}},
            "Resources": {},
        }
    )
    # WHEN it is resolved  THEN it resolves, or the only error is a TemplateError
    with contextlib.suppress(TemplateError):
        template.resolve(node)
