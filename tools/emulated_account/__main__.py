"""``python -m emulated_account run --out FILE``: the deploy level once (see :mod:`emulated_account.nivel`)."""

import sys

from emulated_account.nivel import main

sys.exit(main())
