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
    modulo, _, atributo = target.rpartition(".")

    # WHEN the attribute a patch replaces is looked up
    dueno = resolve_name(modulo)

    # THEN it is there, under the name the patch uses
    assert hasattr(dueno, atributo), f"moto no longer has {target}: review sam_emulator.moto_patches"


def test_moto_server_patches_when_closed_leave_every_target_as_it_was() -> None:
    # GIVEN every target's object before any patch
    antes = {t: _objeto(t) for t in moto_patches.TARGETS}
    from moto.core.config import default_user_config

    configuracion = {k: dict(v) for k, v in default_user_config.items()}

    # WHEN the server's and the Lambda patches are applied (all of them) and closed
    with (
        moto_patches.moto_server_patches(10.0, comprimir_esperas=True),
        moto_patches.lambda_invoke_patches(lambda *a: None, lambda *a: None),
    ):
        durante = {t: _objeto(t) for t in moto_patches.TARGETS}
        configurado = default_user_config["stepfunctions"]["execute_state_machine"]

    # THEN each was replaced during the run and is its original afterwards
    cambiados = {t for t in moto_patches.TARGETS if durante[t] is not antes[t]}
    assert cambiados == set(moto_patches.TARGETS) - {"moto.core.config.default_user_config"}
    assert configurado is True
    assert {t: _objeto(t) for t in moto_patches.TARGETS} == antes
    assert {k: dict(v) for k, v in default_user_config.items()} == configuracion


def _objeto(target: str) -> object:
    modulo, _, atributo = target.rpartition(".")
    return getattr(resolve_name(modulo), atributo)
