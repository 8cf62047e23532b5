"""The on-call's CLIs against an AWS they cannot use: one Spanish line and exit code 2, never a traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from mercadofresco_ops import retenidos, smoke
from mercadofresco_ops.dlq import cli as dlq

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# Each CLI with a command that must talk to AWS at once (a stack, a queue), at an endpoint nobody serves.
ORDENES: list[tuple[str, Callable[[Sequence[str]], int], list[str]]] = [
    ("mf-smoke", smoke.main, ["--pila", "x", "--endpoint-url", "http://127.0.0.1:9"]),
    ("mf-retenidos", retenidos.main, ["--pila", "x", "--endpoint-url", "http://127.0.0.1:9", "listar"]),
    ("mf-dlq", dlq.main, ["inspeccionar", "--cola", "x", "--endpoint-url", "http://127.0.0.1:9"]),
]


@pytest.mark.parametrize(("nombre", "main", "argumentos"), ORDENES, ids=[o[0] for o in ORDENES])
@pytest.mark.parametrize(
    "entorno",
    [
        {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"},
        {"AWS_DEFAULT_REGION": "eu-south-2"},
        {"AWS_DEFAULT_REGION": "eu-south-2", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"},
    ],
    ids=["no region", "no credentials", "nobody at the endpoint"],
)
def test_ops_cli_that_cannot_use_aws_says_so_in_one_line_and_exits_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    nombre: str,
    main: Callable[[Sequence[str]], int],
    argumentos: list[str],
    entorno: dict[str, str],
) -> None:
    # GIVEN an environment with no region, or no credentials (and no AWS config files), or nobody at the endpoint
    for variable in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for variable, valor in entorno.items():
        monkeypatch.setenv(variable, valor)
    # WHEN the command runs
    codigo = main(argumentos)
    # THEN it exits 2 with one line naming the command (what is missing, or what failed), no traceback
    err = capsys.readouterr().err
    assert codigo == 2, err
    assert err.count("\n") == 1 and err.startswith(f"{nombre}: "), err
