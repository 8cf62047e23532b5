"""The local run: the template's wiring on moto, real PostgreSQL/Redis, loopback providers."""
