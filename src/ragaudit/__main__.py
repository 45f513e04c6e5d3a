"""``python -m ragaudit``: the same command line as the ``ragaudit`` console script (same arguments,
same output, same exit code), for environments where the script is not on ``PATH``."""

from __future__ import annotations

import sys

from ragaudit.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
