"""``python -m harness`` (and ``torchrun -m harness``) runs the command line."""

import sys

from harness.cli import main

sys.exit(main())
