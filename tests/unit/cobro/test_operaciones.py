"""functions/cobro/operaciones.py: after the compensation, cobro:{pedido_id} is closed with the verbs, never left open.

The real table (moto) and the loopback gateway, which has no charge for the order: the refund is
answered 404 (nothing to refund), and the charge's record is then closed ``FALLIDO`` whatever an
attempt left behind, unless it already has an outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
import pytest
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import CobroRechazado, ReembolsoRechazado
from mercadofresco.http import ProviderClient
from mercadofresco.idempotency import IdempotencyStore
from mercadofresco.idempotency.exceptions import OperationFailedError
from mercadofresco_local.proveedores import Pasarela

from tests.conftest import load_event

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

T0_S = 1_790_000_000
PEDIDO = "PED-2026-084417"
CLAVE = f"cobro:{PEDIDO}"
LEASE_S = 90  # the layer's default lease, the store's here


@pytest.fixture
def pasarela() -> Iterator[Pasarela]:
    with Pasarela() as p:
        yield p


@pytest.fixture
def modulo(app_module, tabla_idempotencia: str, pasarela: Pasarela) -> Any:
    return app_module("cobro", PASARELA_URL=pasarela.url, TABLA_IDEMPOTENCIA=tabla_idempotencia, PASARELA_SECRET_ARN="")


@pytest.fixture
def operaciones(modulo: Any, tabla_idempotencia: str, pasarela: Pasarela) -> Any:
    """The function's operations on the test's clock, with a client that goes straight to the stand-in."""
    cliente = ProviderClient(dependency="pasarela", base_url=pasarela.url)
    store = IdempotencyStore(tabla_idempotencia, boto3.client("dynamodb"), now_s=lambda: T0_S)
    return modulo.Operaciones(pasarela=lambda: cliente, store=store, reloj_s=lambda: T0_S)


def _registro(tabla: str) -> dict[str, Any] | None:
    return boto3.client("dynamodb").get_item(TableName=tabla, Key={"clave": {"S": CLAVE}}).get("Item")


ANTES = {
    "absent": None,
    "en-curso-lapsed": {"estado": "EN_CURSO", "propietario": "intento-muerto", "caduca_bloqueo": T0_S - 1},
    "en-curso-live": {"estado": "EN_CURSO", "propietario": "intento-muerto", "caduca_bloqueo": T0_S + LEASE_S},
}


@pytest.mark.parametrize("antes", list(ANTES))
def test_reembolso_404_closes_an_open_or_absent_cobro_as_fallido(
    modulo: Any, operaciones: Any, pasarela: Pasarela, tabla_idempotencia: str, antes: str
) -> None:
    # GIVEN cobro:{id} absent, or EN_CURSO under an attempt that will never answer (its lease lapsed or live)
    if (campos := ANTES[antes]) is not None:
        item = {k: {"N": str(v)} if isinstance(v, int) else {"S": v} for k, v in campos.items()}
        item |= {"clave": {"S": CLAVE}, "expira_en": {"N": str(T0_S + 86_400)}}
        boto3.client("dynamodb").put_item(TableName=tabla_idempotencia, Item=item)
    solicitud = modulo.Solicitud.desde_evento(load_event("cobro-reembolso.json"))
    # WHEN the compensation's refund is answered "nothing to refund"
    with pytest.raises(ReembolsoRechazado):
        operaciones.reembolso(solicitud)
    # THEN the charge's record is FALLIDO (CobroCompensado), 24 h from now, no lease, its holder kept if it had one
    registro = _registro(tabla_idempotencia)
    assert registro["estado"] == {"S": "FALLIDO"} and "caduca_bloqueo" not in registro
    assert registro["error"]["M"]["tipo"]["S"].endswith(".CobroCompensado")
    assert registro["expira_en"] == {"N": str(T0_S + 86_400)}
    if antes == "en-curso-live":
        assert registro["propietario"] == {"S": "intento-muerto"}
    # AND a late charge of the same order gets that failure (a class outside the layer: replayed by name), never
    # a charge
    with pytest.raises(OperationFailedError) as info:
        operaciones.cobro(modulo.Solicitud.desde_evento(load_event("cobro-pedido.json")))
    assert info.value.error_type.endswith(".CobroCompensado")
    assert pasarela.llamadas["/cobros"] == 0 and pasarela.cobros_de(PEDIDO) == 0


@pytest.mark.parametrize("resultado", ["COMPLETADO", "FALLIDO"])
def test_reembolso_404_leaves_a_cobro_with_its_outcome_as_it_is(
    modulo: Any, operaciones: Any, tabla_idempotencia: str, resultado: str
) -> None:
    # GIVEN cobro:{id} already closed with an outcome (a charge recorded, or a declined card)
    store = operaciones.store
    reclamo = store.claim(claves.cobro(PEDIDO))
    if resultado == "COMPLETADO":
        store.complete(reclamo, {"referencia_cobro": "ch_000001"})
    else:
        store.fail(reclamo, CobroRechazado("tarjeta denegada"))
    cerrado = _registro(tabla_idempotencia)
    solicitud = modulo.Solicitud.desde_evento(load_event("cobro-reembolso.json"))
    # WHEN the compensation's refund is answered "nothing to refund"
    with pytest.raises(ReembolsoRechazado):
        operaciones.reembolso(solicitud)
    # THEN the record is untouched: the conditional write refused the close
    assert _registro(tabla_idempotencia) == cerrado
