"""A child of a parallel campaign: ``mf-demo`` on its share of the seeds, with the request recorder installed.

The recorder must hook boto3's session before the child's session builds any client, so it is
installed here, around ``mf-demo``'s own entry point; each seed then checks its requests against
the roles (:mod:`.permisos`) and its JSON line carries the outcome to the parent.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from mercadofresco_caos import permisos

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from mercadofresco_local import demo

    with permisos.registrando():
        return demo.main(argv)


if __name__ == "__main__":
    sys.exit(main())
