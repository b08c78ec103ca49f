"""``python -m skillkit``: the ``skillkit`` command, for environments where the
console script is not on the path."""

import sys

from skillkit.cli import main

sys.exit(main())
