"""A language-identification probe: how much language a model leaves in its vectors.

The LAReQA paper asks whether a multilingual embedding space has "factored out" language: a
logistic regression trained to tell two languages apart from the vectors alone (English vs
Chinese in the paper) is near chance in a language-agnostic space and near 1 in a space where
each language keeps its own region (which is what lets same-language answers rank first).

Any task that has vectors of several languages can run it; the split is a seeded one-third
hold-out, stratified by language so that both sides keep the two languages' proportions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The share of the vectors held out to measure accuracy.
HOLD_OUT = 1 / 3
#: Enough iterations for lbfgs to converge on a few thousand 384-1024-d vectors (scikit-learn's
#: default of 100 stops early on unnormalised vectors and warns).
MAX_ITER = 1000


@dataclass(frozen=True)
class ProbeResult:
    """Hold-out accuracy of a logistic regression predicting ``languages[1]`` vs ``languages[0]``."""

    languages: tuple[str, str]
    accuracy: float
    #: Accuracy of always answering the hold-out's more frequent language: the chance line.
    majority: float
    train: int
    test: int
    seed: int


def language_id_probe(
    vectors: np.ndarray, langs: Sequence[str], languages: tuple[str, str], seed: int
) -> ProbeResult | None:
    """Train on two thirds of the vectors in ``languages`` (seeded, stratified), score on the rest.

    ``None`` when either language has fewer than 3 vectors (no hold-out of both is possible)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    labels = np.asarray(langs)
    keep = np.isin(labels, languages)
    x, y = np.asarray(vectors, dtype=np.float64)[keep], (labels[keep] == languages[1]).astype(np.int64)
    if min(int(y.sum()), int(len(y) - y.sum())) < 3:
        return None
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=HOLD_OUT, random_state=seed, stratify=y)
    model = LogisticRegression(max_iter=MAX_ITER).fit(x_train, y_train)
    return ProbeResult(
        languages=languages,
        accuracy=float(model.score(x_test, y_test)),
        majority=float(max(y_test.mean(), 1 - y_test.mean())),
        train=len(y_train),
        test=len(y_test),
        seed=seed,
    )
