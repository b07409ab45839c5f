"""How an error names the user's options: as the command line's flags (``--data-dir``) or as the
library API's keywords (``data_dir``), whichever the user typed.

Checks deep in the harness word their errors once, with the command line's flags; the library
API (:mod:`harness.api`) and the leaderboard intake (a submission's manifest) reword them on the
way out (:func:`reword_options`), so a user is told the name they can actually write.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar

#: True while the ``harness`` command runs (it calls the library API: its errors keep the flags).
COMMAND_LINE: ContextVar[bool] = ContextVar("harness_command_line", default=False)

_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def reword_options(error: BaseException, name: Callable[[str], str | None]) -> None:
    """Rename, in ``error``'s message, each ``--flag`` that ``name`` gives another name for (None:
    leave it); the error keeps its type and fields, only its text changes."""
    if error.args and isinstance(error.args[0], str):
        error.args = (_FLAG.sub(lambda match: name(match.group()) or match.group(), error.args[0]), *error.args[1:])
