from __future__ import annotations

import pytest
from cfnlint.decode import decode_str
from template_cases import REPO
from template_model import Template, TemplateError, profile_parameters, with_defaults

PARENT = """
Parameters:
  NameSuffix: {Type: String, Default: "-dev"}
  ErpUrl: {Type: String, Default: ""}
Conditions:
  SimularErp: !Equals [!Ref ErpUrl, ""]
  Never: !Equals ["a", "b"]
Resources:
  Sandbox:
    Type: AWS::Serverless::Application
    Condition: SimularErp
    Properties:
      Location: unidades/sandbox.yaml
      Parameters:
        NameSuffix: !Ref NameSuffix
        Keys: ["a:*", "b:*"]
  Off:
    Type: AWS::Serverless::Application
    Condition: Never
    Properties:
      Location: unidades/nowhere.yaml
  Published:
    Type: AWS::Serverless::Application
    Properties:
      Location: {ApplicationId: arn:aws:serverlessrepo:us-east-1:1:applications/x, SemanticVersion: 1.0.0}
"""
CHILD = """
Parameters:
  NameSuffix: {Type: String}
  Keys: {Type: CommaDelimitedList}
Resources:
  SimuladorErpFunction:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: !Sub simulador-erp${NameSuffix}
"""


def test_a_unit_is_read_with_the_parameters_its_parent_passes(write) -> None:
    # GIVEN a parent whose sandbox unit is created (no ERP URL given) and a unit whose condition is false
    write(CHILD, "unidades/sandbox.yaml")
    parent = Template(path=write(PARENT))
    # WHEN its units are read
    units = parent.units()
    # THEN only the created local unit is there, resolved with what the parent passes (a list joined, as CFN does)
    assert list(units) == ["Sandbox"]
    sandbox = units["Sandbox"]
    assert sandbox.properties("SimuladorErpFunction")["FunctionName"] == "simulador-erp-dev"
    assert sandbox.parameter("Keys") == ["a:*", "b:*"]
    assert [path for path, _ in parent.walk()] == ["", "Sandbox/"]


def test_a_question_about_one_template_is_answered_for_the_whole_stack_by_path(write) -> None:
    # GIVEN a parent with a function of its own and a created unit holding another
    write(CHILD, "unidades/sandbox.yaml")
    own_function = "Resources:\n  Tienda: {Type: AWS::Serverless::Function}\n"
    parent = Template(path=write(PARENT.replace("Resources:\n", own_function)))
    # WHEN a question about one template is asked of the stack
    paths = parent.paths(lambda t: t.of_type("AWS::Serverless::Function"))
    # THEN each answer carries its unit's path, as SAM names it, and locates back to where it is written
    assert paths == ("Tienda", "Sandbox/SimuladorErpFunction")
    holder, logical_id = parent.locate(paths[1])
    assert (holder, logical_id) == (parent.units()["Sandbox"], "SimuladorErpFunction")


def test_a_unit_gets_what_cannot_be_resolved_here_as_written(write) -> None:
    # GIVEN a parent passing its unit ARNs of resources nobody created yet (a static read, no physical ids)
    write(CHILD, "unidades/sandbox.yaml")
    parent_text = PARENT.replace('Keys: ["a:*", "b:*"]', "Keys: !Join [',', [!GetAtt Erp.Arn, !GetAtt Correo.Arn]]")
    parent = Template(path=write(parent_text))
    # WHEN its unit is read
    sandbox = parent.units()["Sandbox"]
    # THEN what resolves is resolved, the rest is the parent's intrinsic, not a guess (nor a string split)
    assert sandbox.parameter("NameSuffix") == "-dev"
    assert sandbox.parameter("Keys") == {
        "Fn::Join": [",", [{"Fn::GetAtt": ["Erp", "Arn"]}, {"Fn::GetAtt": ["Correo", "Arn"]}]]
    }
    # AND once the parent knows the ARNs, the unit gets them as CloudFormation hands them over
    parent.physical_ids.update({"Erp": {"Arn": "arn:erp"}, "Correo": {"Arn": "arn:correo"}})
    assert parent.units()["Sandbox"].parameter("Keys") == ["arn:erp", "arn:correo"]


def test_a_list_still_holding_an_intrinsic_reaches_the_unit_as_written_not_joined(write) -> None:
    # GIVEN a parent passing a list one of whose items names a resource nobody created yet
    write(CHILD, "unidades/sandbox.yaml")
    parent = Template(path=write(PARENT.replace('Keys: ["a:*", "b:*"]', 'Keys: [!GetAtt Erp.Arn, "b:*"]')))
    # WHEN its unit is read  THEN the list is the parent's, not a string made of an intrinsic's text
    assert parent.units()["Sandbox"].parameter("Keys") == [{"Fn::GetAtt": ["Erp", "Arn"]}, "b:*"]


def test_a_unit_is_not_created_when_its_parent_is_given_the_real_url(write) -> None:
    # GIVEN the deploy gives the ERP's URL  WHEN the units are read  THEN the sandbox unit is not among them
    write(CHILD, "unidades/sandbox.yaml")
    assert Template(path=write(PARENT), parameters={"ErpUrl": "https://erp.example"}).units() == {}


def test_a_profile_gives_its_parameter_overrides(tmp_path) -> None:
    # GIVEN a samconfig environment with quoted overrides, as `sam deploy --guided` writes them
    samconfig = tmp_path / "samconfig.toml"
    samconfig.write_text('[x.deploy.parameters]\nparameter_overrides = "Stage=\\"dev\\" NatGateway=instance"\n')
    # WHEN read  THEN each override is a parameter value
    assert profile_parameters("x", samconfig) == {"Stage": "dev", "NatGateway": "instance"}


def test_the_repository_profiles_are_read() -> None:
    # GIVEN the repository's samconfig.toml  WHEN its profiles are read  THEN they name template parameters
    template = Template(path=REPO / "template.yaml")
    for profile in ("default", "prod", "prueba"):
        parameters = profile_parameters(profile, REPO / "samconfig.toml")
        assert parameters and set(parameters) <= set(template.doc["Parameters"]), profile


def test_an_unknown_profile_is_a_template_error(tmp_path) -> None:
    samconfig = tmp_path / "samconfig.toml"
    samconfig.write_text("version = 0.1\n")
    with pytest.raises(TemplateError, match=r"no \[nada.deploy.parameters\]"):
        profile_parameters("nada", samconfig)


def test_with_defaults_makes_a_profile_the_defaults_and_refuses_an_unknown_parameter() -> None:
    # GIVEN the template's text and the prueba profile
    text = (REPO / "template.yaml").read_text()
    parameters = profile_parameters("prueba", REPO / "samconfig.toml")
    # WHEN its values become the defaults  THEN a template read from that text resolves them with no parameters
    copy = Template.from_document(decode_str(with_defaults(text, parameters))[0])
    assert {name: str(copy.parameter(name)) for name in parameters} == parameters
    with pytest.raises(TemplateError, match="no parameter Nada"):
        with_defaults(text, {"Nada": "x"})


def test_expand_writes_a_looped_template_flat_with_a_profile_as_defaults(write, tmp_path) -> None:
    # GIVEN a looped template and a profile that changes its suffix
    from template_cases import LOOPED
    from template_model.__main__ import main

    source = write(LOOPED)
    (source.parent / "samconfig.toml").write_text('[p.deploy.parameters]\nparameter_overrides = "NameSuffix=-p"\n')
    # WHEN expanded for checkov
    assert main(["expand", str(source), str(tmp_path / "out" / "flat.json"), "--profile", "p"]) == 0
    # THEN the copy has no loop, every instance, and the profile's value as the default
    flat = Template(path=tmp_path / "out" / "flat.json")
    assert {"ErpFunction", "CorreoFunction"} <= set(flat.resources)
    assert flat.properties("QueueErpDlq")["QueueName"] == "erp-dlq-p"
    # ...a parameter given on the command line is a default too
    assert main(["expand", str(source), str(tmp_path / "s.json"), "--parameter", "NameSuffix=-s"]) == 0
    assert Template(path=tmp_path / "s.json").properties("QueueErpDlq")["QueueName"] == "erp-dlq-s"
    # ...and an unknown profile is one line on stderr, exit 1
    assert main(["expand", str(source), str(tmp_path / "x.json"), "--profile", "nada"]) == 1


def test_nestings_finds_each_place_a_stack_nests_a_unit_file_whatever_its_condition() -> None:
    from template_model import nestings

    # GIVEN the project's units WHEN asked where each file is nested
    # THEN the store unit once, by the root; the chaos unit too although Chaos=disabled leaves it out
    (tienda,) = nestings(REPO / "unidades" / "tienda.yaml")
    assert (tienda.id_in_parent, tienda.parent.path.name) == ("Tienda", "template.yaml")
    assert [u.id_in_parent for u in nestings(REPO / "unidades" / "caos.yaml")] == ["Caos"]
    assert "Caos" not in Template(path=REPO / "template.yaml").units()
    # AND a parameter reads what that parent writes; the root itself is nested nowhere
    assert tienda.passed_by_parent("MaxReceiveCount") == {"Fn::FindInMap": ["Entrega", "Cola", "maxReceiveCount"]}
    assert nestings(REPO / "template.yaml") == []
