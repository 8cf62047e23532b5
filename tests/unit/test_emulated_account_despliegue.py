"""make deploy-emulated's parameters and what it tells the user (tools/levels/emulated_account/despliegue.py)."""

from __future__ import annotations

from emulated_account import despliegue


def test_deploy_parameters_are_samconfigs_the_cpu_then_the_users() -> None:
    # GIVEN samconfig.toml's default environment (Stage=dev) and a user's overrides
    valores = despliegue.parametros({"SimuladorProporcionFallos": "1", "Stage": "prod"})
    # THEN the README's deploy, on this machine's CPU (the account's containers run it), the user's last
    assert valores == {"Stage": "prod", "Architecture": despliegue.ARQUITECTURA, "SimuladorProporcionFallos": "1"}
    assert despliegue.parametros() == {"Stage": "dev", "Architecture": despliegue.ARQUITECTURA}
    assert despliegue.PILA == "mercadofresco-dev"  # samconfig.toml's stack_name, the one sam deploy creates
