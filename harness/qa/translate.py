"""Translating texts of mixed languages with any :class:`~harness.definitions.protocols.Translator`.

In the core because the translate-test wrapper and the retrieve-then-read pipeline both translate
questions (and answers) this way, and neither plugin may import the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from harness.definitions.protocols import Translator


@runtime_checkable
class KeyedTranslator(Protocol):
    """A translator that can look a text up by its benchmark id (a file of human translations,
    where one text may have several translations under different ids)."""

    def translate_ids(
        self, ids: Sequence[str], texts: Sequence[str], *, source_lang: str, target_lang: str
    ) -> list[str]: ...


def translate_each(
    translator: Translator,
    texts: Sequence[str],
    sources: Sequence[str],
    targets: Sequence[str],
    ids: Sequence[str] | None = None,
) -> list[str]:
    """``texts[i]`` translated from ``sources[i]`` into ``targets[i]``; a text already in its target
    language is kept. One translator call per (source, target) pair, so a model batches each
    direction's texts together; with ``ids``, a :class:`KeyedTranslator` looks texts up by id."""
    out = list(texts)
    for source, target in sorted({(s, t) for s, t in zip(sources, targets) if s != t}):
        positions = [i for i, pair in enumerate(zip(sources, targets)) if pair == (source, target)]
        part = [texts[i] for i in positions]
        if ids is not None and isinstance(translator, KeyedTranslator):
            translated = translator.translate_ids(
                [ids[i] for i in positions], part, source_lang=source, target_lang=target
            )
        else:
            translated = translator.translate(part, source_lang=source, target_lang=target)
        for i, text in zip(positions, translated):
            out[i] = text
    return out
