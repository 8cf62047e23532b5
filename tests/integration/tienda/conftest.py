"""The store's tests write orders on the schema the outbox's tests use: migrated, with a pool on it."""

from tests.integration.outbox.conftest import outbox_dsn, pool  # noqa: F401 (fixtures)
