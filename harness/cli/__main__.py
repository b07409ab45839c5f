"""``python -m harness.cli`` runs the command line, as ``python -m harness`` does (the command
line was one module, ``harness/cli.py``, that ran itself)."""

import sys

from harness.cli import main

sys.exit(main())
