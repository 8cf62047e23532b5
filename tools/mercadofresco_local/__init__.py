"""The local run: the template's wiring on moto, real PostgreSQL/Redis, loopback providers."""

from pathlib import Path

RAIZ = Path(__file__).resolve().parents[2]  # the repository: template.yaml, functions/, statemachines/
