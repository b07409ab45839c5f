"""Answer-string metrics shared by the extractive and open-domain QA scorers.

The official scorers agree on the shape (exact match and bag-of-tokens F1 after a normaliser,
maximum over the gold answers) and differ in the normaliser and in one corner: the F1 of an
empty prediction against an empty gold is 0 for SQuAD, MLQA and XOR but 1 for MKQA. Both are
parameters here; each task plugin supplies its official normaliser and tokeniser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

Tokens = Sequence[str]


def token_f1(prediction: Tokens, gold: Tokens, *, both_empty: float = 0.0) -> float:
    """Bag-of-tokens F1 (``Counter`` intersection, as every official QA scorer computes it).

    ``both_empty`` is the score when neither side has a token (0 in SQuAD/MLQA/XOR, 1 in MKQA);
    when only one side is empty the score is 0.
    """
    if not prediction or not gold:
        return both_empty if not prediction and not gold else 0.0
    common = Counter(prediction) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(prediction)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def best_over_golds(metric: Callable[[str, str], float], prediction: str, golds: Iterable[str]) -> float:
    """The official "max over ground truths" (0 when there are no golds)."""
    return max((metric(prediction, gold) for gold in golds), default=0.0)
