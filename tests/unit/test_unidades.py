"""A unit is linted alone (cfn-lint with the rule pack, file by file), so a number the rule pack multiplies
and the parent hands it from its ``Mappings`` (a queue's maxReceiveCount, E9111) is read from the unit
parameter's ``Default``: the parent must pass exactly that, or the unit's worst case is computed on a
number the deploy does not use."""

from __future__ import annotations

from template_model import Template


def _pasados_desde_mappings(raiz: Template) -> list[tuple[str, str, object, object]]:
    """(unit, parameter, what the parent passes resolved, the unit's default) for every parameter the root
    passes from its Mappings to a unit that declares a default for it."""
    encontrados = []
    for unidad, plantilla in raiz.units().items():
        pasados = raiz.resources[unidad]["Properties"].get("Parameters") or {}
        for nombre, valor in pasados.items():
            declarado = (plantilla.doc.get("Parameters") or {}).get(nombre) or {}
            if isinstance(valor, dict) and "Fn::FindInMap" in valor and "Default" in declarado:
                encontrados.append((unidad, nombre, raiz.resolve(valor), declarado["Default"]))
    return encontrados


def test_a_number_the_root_hands_a_unit_from_its_mappings_is_the_units_default() -> None:
    pasados = _pasados_desde_mappings(Template())
    # the projection's maxReceiveCount at least (unidades/tienda.yaml)
    assert ("Tienda", "MaxReceiveCount") in {(u, n) for u, n, _, _ in pasados}
    for unidad, nombre, valor, por_defecto in pasados:
        assert str(valor) == str(por_defecto), (
            f"{unidad}.{nombre}: the parent passes {valor}, the unit lints {por_defecto}"
        )


def test_the_rule_pack_reads_the_projections_redrive_count_from_that_default() -> None:
    from template_model.wiring import redrive

    unidad = Template().units()["Tienda"]
    assert redrive(unidad.doc, unidad.resources["ColaProyeccion"]) == ("ProyeccionDlqArn", 4)
