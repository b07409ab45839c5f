"""The plugin contract's checked records: schemas and result files.

Validating a prediction file against the JSON schema a plugin registered (:func:`validate`),
reading a result file (:func:`read_result`, any version, migrated) and finding the results of a
task below a folder (:func:`task_results`), and the model card a model adapter may put in its
identity's details under :data:`CARD_DETAIL` (:class:`ModelCard`, as a submission's), which the
leaderboard and its page show with the model's entries. See :mod:`harness.plugin`.
"""

from __future__ import annotations

from harness.definitions.validation import validate
from harness.leaderboard.entry import CARD_DETAIL, ModelCard
from harness.results.layout import task_results
from harness.results.result import read_result

__all__ = [
    "CARD_DETAIL",
    "ModelCard",
    "read_result",
    "task_results",
    "validate",
]
