"""The store's order creation against the real PostgreSQL, under hostile bodies and keys.

Property: every request either creates exactly one order with exactly one ``PedidoCreado``
outbox row holding valid values, or is refused with the store's own error and writes nothing.
Never a database error (a NUL byte, a lone surrogate, an amount past ``bigint``) and never a
half-written order.
"""

from __future__ import annotations

import copy
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.dominio import claves
from mercadofresco.dominio.pedidos import Pedido, PedidoDuplicado, PedidoInvalido, crear_pedido
from mercadofresco.dominio.solicitudes import ClaveIdempotenciaInvalida, ClaveReutilizada, registrar_pedido
from mercadofresco.dominio.valores import IMPORTE_MAX_CENTIMOS, MONEDAS_ISO_4217, email

from tests.unit.fuzz.estrategias import importe_malo, moneda_mala, texto_cualquiera, valor_json

pytestmark = pytest.mark.integration

BUENO = {
    "cliente_id": "CLI-0193",
    "email": "ana@example.es",
    "moneda": "EUR",
    "lineas": [{"sku": "MANZ-1", "cantidad": 3, "precio_centimos": 120}],
}


def _cuenta(pool) -> tuple[int, int]:
    with pool.connection() as conn:
        return conn.execute("SELECT (SELECT count(*) FROM pedidos), (SELECT count(*) FROM outbox)").fetchone()


def _registrar(pool, clave, cuerpo) -> None:
    antes = _cuenta(pool)
    try:
        with pool.connection() as conn:
            registrado = registrar_pedido(conn, clave, cuerpo)
    except (PedidoInvalido, ClaveIdempotenciaInvalida, ClaveReutilizada) as exc:
        # THEN refused with a clear message, and nothing written
        assert str(exc) and len(str(exc)) < 2000
        assert _cuenta(pool) == antes
        return
    # THEN created once with its event, every value one the consumers and the charge will accept
    pedido = registrado.pedido
    assert _cuenta(pool) == (antes[0] + registrado.creado, antes[1] + registrado.creado)
    assert 0 < pedido["importe_centimos"] <= IMPORTE_MAX_CENTIMOS and pedido["moneda"] in MONEDAS_ISO_4217
    email(pedido["email"])
    for linea in pedido["lineas"]:
        claves.reserva(pedido["pedido_id"], linea["sku"])
    claves.cobro(pedido["pedido_id"])


def _con(campo, valor, linea: bool = False) -> dict:
    cuerpo = copy.deepcopy(BUENO)
    (cuerpo["lineas"][0] if linea else cuerpo)[campo] = valor
    return cuerpo


@given(
    cuerpo=st.one_of(valor_json, st.dictionaries(st.sampled_from(list(BUENO)), valor_json)),
    clave=st.one_of(st.none(), texto_cualquiera),
)
def test_fuzz_registrar_pedido_any_body_and_key_creates_once_or_writes_nothing(pool, cuerpo, clave) -> None:
    _registrar(pool, clave, cuerpo)


@given(
    campo=st.sampled_from(["cliente_id", "email", "moneda"]), valor=st.one_of(texto_cualquiera, moneda_mala, valor_json)
)
def test_fuzz_registrar_pedido_any_text_in_order_fields_never_reaches_postgres_broken(pool, campo, valor) -> None:
    _registrar(pool, uuid.uuid4().hex, _con(campo, valor))


@given(
    campo=st.sampled_from(["sku", "cantidad", "precio_centimos"]),
    valor=st.one_of(texto_cualquiera, importe_malo, st.integers()),
)
def test_fuzz_registrar_pedido_any_line_value_gives_valid_order_or_refusal(pool, campo, valor) -> None:
    _registrar(pool, uuid.uuid4().hex, _con(campo, valor, linea=True))


@given(
    datos=st.one_of(
        valor_json,
        st.fixed_dictionaries(
            {
                "pedido_id": st.one_of(texto_cualquiera, st.integers(), valor_json),
                "cliente_id": texto_cualquiera,
                "lineas": st.lists(
                    st.fixed_dictionaries(
                        {
                            "sku": texto_cualquiera,
                            "cantidad": st.integers(-2, 10**12),
                            "precio_centimos": st.one_of(st.integers(-5, 10**12), importe_malo),
                        }
                    ),
                    max_size=2,
                ),
                "moneda": st.one_of(st.just("EUR"), moneda_mala),
                "email": st.one_of(st.none(), texto_cualquiera),
            }
        ),
    )
)
def test_fuzz_crear_pedido_any_mapping_is_written_whole_or_refused_as_pedido_invalido(pool, datos) -> None:
    # GIVEN any mapping offered to the store directly (the local store, scripts)
    antes = _cuenta(pool)
    try:
        pedido = Pedido.desde_dict(datos) if isinstance(datos, dict) else Pedido.desde_dict({"lineas": datos})
        with pool.connection() as conn:
            crear_pedido(conn, pedido)
    except (PedidoInvalido, PedidoDuplicado):
        # THEN refused with the store's own error and nothing written
        assert _cuenta(pool) == antes
        return
    # THEN or written whole: the order and its event, with keys the workflow can build
    assert _cuenta(pool) == (antes[0] + 1, antes[1] + 1)
    claves.cobro(pedido.pedido_id)
