"""The plugin contract's checked records: schemas and result files.

Validating a prediction file against the JSON schema a plugin registered (:func:`validate`),
reading a result file (:func:`read_result`, any version, migrated) and finding the results of a
task below a folder (:func:`task_results`). See :mod:`harness.plugin`.
"""

from __future__ import annotations

from harness.definitions.validation import validate
from harness.results.layout import task_results
from harness.results.result import read_result

__all__ = [
    "read_result", "task_results", "validate",
]
