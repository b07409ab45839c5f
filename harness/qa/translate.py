"""Translating texts of mixed languages with any :class:`~harness.protocols.Translator`.

In the core because the translate-test wrapper and the retrieve-then-read pipeline both translate
questions (and answers) this way, and neither plugin may import the other.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.protocols import Translator


def translate_each(translator: Translator, texts: Sequence[str], sources: Sequence[str],
                   targets: Sequence[str]) -> list[str]:
    """``texts[i]`` translated from ``sources[i]`` into ``targets[i]``; a text already in its target
    language is kept. One translator call per (source, target) pair, so a model batches each
    direction's texts together."""
    out = list(texts)
    for source, target in sorted({(s, t) for s, t in zip(sources, targets) if s != t}):
        positions = [i for i, pair in enumerate(zip(sources, targets)) if pair == (source, target)]
        translated = translator.translate([texts[i] for i in positions], source_lang=source, target_lang=target)
        for i, text in zip(positions, translated):
            out[i] = text
    return out
