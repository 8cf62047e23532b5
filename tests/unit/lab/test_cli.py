"""``mf-lab``: tables on stdout, plots where asked, clear errors."""

from __future__ import annotations

import pytest
from mercadofresco_lab import cli


def test_main_tormenta_with_png_writes_table_and_chart(tmp_path, capsys):
    # GIVEN a folder WHEN running the storm with --png THEN exit 0, a table row per defense set, and a PNG
    assert cli.main(["tormenta", "--seed", "2", "--png", str(tmp_path)]) == 0
    salida = capsys.readouterr().out
    assert "jitter+tope+presupuesto+breaker" in salida
    assert "36000" in salida
    png = tmp_path / "lab-tormenta.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_main_png_onto_a_file_gives_a_clear_error(tmp_path, capsys):
    # GIVEN --png pointing at a regular file WHEN running THEN exit 2 and one line saying why
    fichero = tmp_path / "no-soy-carpeta"
    fichero.write_text("x")
    assert cli.main(["tormenta", "--png", str(fichero)]) == 2
    assert "cannot write the plot into" in capsys.readouterr().err


def test_main_unknown_command_exits_with_usage():
    # GIVEN an unknown subcommand WHEN parsing THEN argparse exits 2 with the usage
    with pytest.raises(SystemExit) as salida:
        cli.main(["huracan"])
    assert salida.value.code == 2
