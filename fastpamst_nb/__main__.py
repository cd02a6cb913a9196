"""``python -m fastpamst_nb``: the same as the ``fastpamst`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
