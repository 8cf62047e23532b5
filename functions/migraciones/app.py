"""CloudFormation custom resource MigracionesAurora (each deploy) -> migrations as the admin user + the runtime role."""

from __future__ import annotations

import os
from typing import Any

from mercadofresco.outbox import deployment


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    # DATABASE_URL only in the local run and the tests (the template declares it empty).
    database_url = os.environ.get("DATABASE_URL") or None
    estado = deployment.run(
        event,
        context.get_remaining_time_in_millis,
        lambda propiedades, plazo_s: deployment.migrate_from_properties(propiedades, plazo_s, database_url),
    )
    return {"estado": estado}
