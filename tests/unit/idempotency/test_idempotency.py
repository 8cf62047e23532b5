"""The package's surface (``idempotency/__init__.py``): a few names, and handlers that use only the verbs."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import mercadofresco.idempotency as idempotency

RAIZ = Path(__file__).resolve().parents[3]
MAX_PUBLICOS = 8  # Powertools' idempotency exports 6: what a user needs, not everything that exists
# What only the store may compute or touch: the lease and expiry arithmetic, the records under the verbs.
SOLO_DEL_STORE = {"lease_s", "expires_after_s", "records", "IdempotencyRecord", "StoredError", "caduca_bloqueo"}


def test_package_exports_at_most_eight_names_each_of_them_defined() -> None:
    # GIVEN the package  WHEN its public names are listed
    publicos = idempotency.__all__
    # THEN they are the few a user needs (store, config, the claim, decorator, key type, states, the main errors)
    assert len(publicos) <= MAX_PUBLICOS
    assert set(publicos) == {
        "Claim",
        "IdempotencyConfig",
        "IdempotencyError",
        "IdempotencyKey",
        "IdempotencyPersistenceError",
        "IdempotencyStatus",
        "IdempotencyStore",
        "idempotent",
    }
    assert all(hasattr(idempotency, n) for n in publicos)


def test_every_module_declares_what_it_offers_and_defines_it() -> None:
    # GIVEN every module of the package (what tests and the domain import from, beyond the package's names)
    prefijo = "mercadofresco.idempotency."
    modulos = [importlib.import_module(m.name) for m in pkgutil.iter_modules(idempotency.__path__, prefijo)]
    # WHEN their __all__ are read  THEN each module has one, and every name in it exists
    assert {m.__name__.rsplit(".", 1)[1] for m in modulos} >= {"claim", "store", "dynamodb", "keys", "record"}
    assert [m.__name__ for m in modulos if not hasattr(m, "__all__")] == []
    assert [f"{m.__name__}.{n}" for m in modulos for n in m.__all__ if not hasattr(m, n)] == []


def test_handlers_neither_compute_a_lease_nor_reach_into_records() -> None:
    # GIVEN every function's code
    fuera = []
    for fichero in sorted((RAIZ / "functions").rglob("*.py")):
        for nodo in ast.walk(ast.parse(fichero.read_text())):
            nombre = {ast.Attribute: "attr", ast.Name: "id", ast.alias: "name"}.get(type(nodo))
            if nombre and getattr(nodo, nombre) in SOLO_DEL_STORE:
                fuera.append(f"{fichero.relative_to(RAIZ)}:{nodo.lineno} {getattr(nodo, nombre)}")
    # THEN none names the lease, the expiry, the records or the stored item: they call claim, complete, fail, run
    assert fuera == []
