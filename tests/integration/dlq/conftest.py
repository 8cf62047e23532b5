"""Fixtures for the DLQ tests: moto's SQS with the project's queue pairs."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from dlq_colas import PARES, crear_par


@pytest.fixture
def sqs(aws: None) -> Any:
    return boto3.client("sqs", region_name="eu-south-2")


@pytest.fixture
def colas(sqs: Any) -> dict[str, tuple[str, str]]:
    """Every pair, created empty: {"pedidos": (source URL, DLQ URL), ...}."""
    return {clave: crear_par(sqs, origen, dlq) for clave, (origen, dlq) in PARES.items()}
