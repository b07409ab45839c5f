"""How a task's instances group across its units where its data is parallel, as the task declares it.

A light module (standard library only): a task's metadata names its :class:`Clusters`, and
``harness list`` imports every task's metadata. How the bootstrap and the paired tests draw the
clusters is :mod:`harness.stats.strata`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def shared_id(unit: str, instance_id: str) -> str:
    """The cluster of an instance whose translations carry its id in every unit (XQuAD, MLQA, MKQA)."""
    return instance_id


@dataclass(frozen=True)
class Clusters:
    """How a task's instances group across units where its data is parallel.

    XQuAD asks each of its 1,190 questions in 12 languages: a model's errors on a question and
    on its translations go together, so the questions of an aggregate row are not 14,280
    independent draws but 1,190 clusters of 12. The bootstrap of a row over several units, and
    the paired tests, resample such a cluster whole (:mod:`harness.stats.bootstrap`).
    """

    #: What one cluster is, as a result records it (``"question id"``): the resampling unit of
    #: the intervals that draw clusters.
    name: str
    #: The cluster of an instance from its unit and id; instances of several units with the same
    #: key are translations of one another.
    key: Callable[[str, str], str] = shared_id
