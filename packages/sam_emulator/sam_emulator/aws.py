"""The emulator's own boto3 clients: its pollers, pipes and sweepers talking to the local moto.

``AWS_ENDPOINT_URL`` (honoured by botocore itself, set by :class:`~sam_emulator.moto_server.MotoServer`)
points them at the loopback moto server. moto answers from this process, so a call can wait for
the GIL on a loaded machine: the read timeout is generous, a hang guard rather than a policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from botocore.client import BaseClient

CONFIG = Config(retries={"mode": "standard", "max_attempts": 2}, connect_timeout=2, read_timeout=60)


def client(service: str, **kwargs: Any) -> BaseClient:
    """A boto3 client for ``service`` from boto3's default session (the one :mod:`sam_emulator.deaths` hooks)."""
    return boto3.client(service, config=kwargs.pop("config", CONFIG), **kwargs)
