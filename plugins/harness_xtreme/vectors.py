"""Sentence vectors as XTREME's retrieval tasks compare them (Tatoeba, BUCC, Mewsli-X)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.plugin import Encoder, Role


def unit_encodings(model: Encoder, texts: Sequence[str], role: Role, lang: str | Sequence[str]) -> np.ndarray:
    """Encodings scaled to length 1, so inner products are cosines (XTREME's ``--dist cosine``,
    ``faiss.normalize_L2``); a zero vector stays zero. ``lang``: the texts' language, or each one's."""
    langs = [lang] * len(texts) if isinstance(lang, str) else list(lang)
    vectors = np.asarray(model.encode(texts, role=role, langs=langs), dtype=np.float32)
    norms: np.ndarray = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = vectors / np.maximum(norms, np.finfo(np.float32).tiny)
    return unit
