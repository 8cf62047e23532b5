"""Usage errors: exit 2 and one line, before any AWS call."""

from __future__ import annotations

import pytest
from mercadofresco_ops.dlq import cli
from mercadofresco_ops.dlq.argumentos import construir_parser


@pytest.mark.parametrize(
    ("argumentos", "mensaje"),
    [
        (["--nativo", "--filtro", "version == `2`"], "--nativo mueve todo tal cual"),
        (["--filtro", "version == ["], "--filtro no es JMESPath válido"),
        (["--transformar", "sin_dos_puntos"], "modulo:funcion"),
        (["--transformar", "mercadofresco_ops.no_existe:f"], "no se puede cargar"),
        (["--transformar", "mercadofresco_ops.dlq.adaptadores:no_existe"], "no se puede cargar"),
        (["--tasa", "0"], "deben ser positivas"),
    ],
)
def test_reprocesar_invalid_arguments_exit_2_with_one_line(argumentos, mensaje, capsys) -> None:
    # GIVEN / WHEN an invalid combination (no AWS endpoint reachable: none is needed)
    codigo = cli.main(["reprocesar", "--cola", "mercadofresco-pedidos-fallidos", *argumentos])

    # THEN exit 2, one line on stderr that says what is wrong, nothing on stdout
    salida = capsys.readouterr()
    assert codigo == cli.USO
    assert mensaje in salida.err
    assert salida.err.count("\n") == 1 and "Traceback" not in salida.err
    assert salida.out == ""


def test_missing_queue_exits_2_from_argparse_in_spanish(capsys) -> None:
    # GIVEN / WHEN a subcommand without --cola
    with pytest.raises(SystemExit) as salida:
        cli.main(["inspeccionar"])

    # THEN argparse's usage error code, its usage and its error in the on-call's Spanish
    assert salida.value.code == cli.USO
    err = capsys.readouterr().err
    assert err.startswith("uso: mf-dlq inspeccionar")
    assert err.endswith("mf-dlq inspeccionar: error: faltan argumentos obligatorios: --cola/--queue\n")


def test_the_english_names_the_runbooks_printed_still_parse_as_the_spanish_ones() -> None:
    # GIVEN the runbooks' commands before issue 39 (--queue, --dry-run) and as they are now (--cola, --simulacro)
    antes = construir_parser().parse_args(["reprocesar", "--queue", "dlq-a", "--dry-run"])
    ahora = construir_parser().parse_args(["reprocesar", "--cola", "dlq-a", "--simulacro"])
    # WHEN both are parsed  THEN they are the same command
    assert vars(antes) == vars(ahora)
    assert (ahora.cola, ahora.simulacro) == ("dlq-a", True)


def test_unknown_profile_exits_2_with_one_line(capsys) -> None:
    # GIVEN / WHEN a profile that is not in ~/.aws/config
    codigo = cli.main(["inspeccionar", "--cola", "mercadofresco-pedidos-fallidos", "--profile", "mf-no-existe"])

    # THEN exit 2 with the profile named
    assert codigo == cli.USO
    assert capsys.readouterr().err == "mf-dlq: perfil desconocido: mf-no-existe\n"


def test_unreachable_endpoint_exits_2_with_one_line(capsys) -> None:
    # GIVEN / WHEN an endpoint nobody listens on (a closed loopback port)
    codigo = cli.main(
        ["inspeccionar", "--cola", "mercadofresco-pedidos-fallidos", "--endpoint-url", "http://127.0.0.1:9"]
    )

    # THEN exit 2, one line naming the endpoint, no traceback
    err = capsys.readouterr().err
    assert codigo == cli.USO
    assert err.count("\n") == 1 and "127.0.0.1:9" in err and "Traceback" not in err
