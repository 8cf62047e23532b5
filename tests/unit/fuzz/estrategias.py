"""Hypothesis strategies for bad input: any Unicode, SQS-legal bodies, hostile JSON, wrong-source AWS events.

Shared by ``tests/unit/fuzz`` and ``tests/integration/fuzz``. The AWS events in ``eventos_aws/``
are ``sam local generate-event`` output (AWS's own sample shapes), fed to functions that expect
something else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

EVENTOS_AWS_DIR = Path(__file__).parent / "eventos_aws"
EVENTOS_AWS = {ruta.stem: json.loads(ruta.read_text()) for ruta in sorted(EVENTOS_AWS_DIR.glob("*.json"))}

# Any code point, lone surrogates included (they reach Python through JSON's "\ud800" escapes), with the
# characters that break things (NUL, line ends, ":", "%", non-Latin-1) made likely rather than rare.
caracter_cualquiera = st.one_of(
    st.characters(codec=None, exclude_categories=()),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=()),
    st.sampled_from("\x00\n\r\t :%ñ€日\u2028\ufeff"),
)
texto_cualquiera = st.text(caracter_cualquiera, max_size=60)
# What SQS accepts in a body or a string attribute: #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF.
caracter_sqs = st.one_of(
    st.sampled_from("\t\n\r"),
    st.characters(min_codepoint=0x20, max_codepoint=0xD7FF),
    st.characters(min_codepoint=0xE000, max_codepoint=0xFFFD),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
)
texto_sqs = st.text(caracter_sqs, max_size=60)
texto_fuera_de_latin1 = st.text(
    st.characters(min_codepoint=0x100, max_codepoint=0x10FFFF, codec="utf-8"), min_size=1, max_size=10
)

escalar_json = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    texto_cualquiera,
)
valor_json = st.recursive(
    escalar_json,
    lambda hijos: st.lists(hijos, max_size=4) | st.dictionaries(texto_cualquiera, hijos, max_size=4),
    max_leaves=12,
)
# Amounts as a careless or hostile producer sends them.
importe_malo = st.one_of(
    st.integers(max_value=0),
    st.integers(min_value=100_000_001, max_value=10**30),
    st.sampled_from(["48.20", "4820", "", "NaN", "-1", "1e9"]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)
moneda_mala = st.one_of(
    st.sampled_from(["eur", "EURO", "€", "XXX", "XAU", "", "EU", "E U", "US$", "HRK"]),
    texto_cualquiera.filter(lambda s: not (len(s) == 3 and s.isascii() and s.isupper())),
    st.integers(),
    st.none(),
)
version_mala = st.one_of(st.integers().filter(lambda v: v != 1), st.sampled_from(["1", "1.0", 1.0, True, None]))
tipo_desconocido = texto_cualquiera.filter(
    lambda s: (
        s not in {"PedidoConfirmado", "CarritoAbandonado", "ReservaStock", "LiberacionStock", "PedidoNoConfirmado"}
    )
)


@st.composite
def json_profundo(draw: Any) -> str:
    """A JSON text nested deeper than Python's recursion limit allows ``json.loads`` to follow."""
    profundidad = draw(st.sampled_from([1_100, 5_000, 50_000]))
    abrir, cerrar = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    return abrir * profundidad + "1" + cerrar * profundidad


json_grande = st.integers(min_value=200_000, max_value=250_000).map(
    lambda n: json.dumps({"tipo": "PedidoConfirmado", "version": 1, "pedido_id": "PED-1", "relleno": "x" * n})
)
cuerpo_malo = st.one_of(
    texto_sqs,
    json_profundo(),
    valor_json.map(lambda v: json.dumps(v, ensure_ascii=True)),
    st.sampled_from(["", " ", "\n", "null", "[]", "{}", '"texto"', "{", '{"tipo": "PedidoConfirmado", "version":']),
    st.sampled_from(list(EVENTOS_AWS.values())).map(json.dumps),
)


def ejemplos(fraccion: float) -> settings:
    """A share of the active profile's examples, for a property whose example is slow (moto, a provider, SQS).

    Scales with the profile: a handful in CI, hundreds with ``HYPOTHESIS_PROFILE=largo``.
    """
    return settings(max_examples=max(5, int(settings.default.max_examples * fraccion)))
