"""MKQA's answer normaliser (``normalize_answer_by_language`` of the official ``mkqa_eval_util.py``).

It is neither SQuAD's nor MLQA's, and its differences decide scores:

1. lower-case (``str.lower``);
2. delete the 32 ASCII punctuation characters of ``string.punctuation`` -- *only* those, so
   ``，``, ``。``, ``「``, curly quotes and dashes stay and count as tokens;
3. replace per-language article patterns by a space. English, Spanish, German, Dutch, the
   Scandinavian languages, Portuguese, Finnish, Hungarian and Vietnamese match whole words. The
   French and Italian patterns have no closing ``\\b``, so they strip word *prefixes*
   (``leur`` -> ``ur``, ``isola`` -> ``sola``), and the alternatives are tried in the order
   written (``les`` loses only ``le``). Arabic deletes every ``ال`` wherever it occurs (the
   official pattern ``\\sال^|ال`` reduces to ``ال``: its first alternative would need ``^`` after
   three characters, which never matches). The ``l'``/``d'`` alternatives can never match,
   because step 2 already removed the apostrophe;
4. tokenise: zh_cn, zh_hk, zh_tw, ja, th and km put *every* non-space character in its own
   token (Latin letters and digits too: ``iphone`` is six tokens); all other languages, Korean
   included, split on whitespace. No word segmenter is used.
"""

from __future__ import annotations

import re
import string

#: Languages whose answers are compared character by character.
CHARACTER_SEGMENTED: frozenset[str] = frozenset({"zh_cn", "zh_hk", "zh_tw", "ja", "th", "km"})

#: Article (and, for vi, particle) patterns, replaced by a space after punctuation removal.
ARTICLES: dict[str, re.Pattern[str]] = {
    lang: re.compile(pattern)
    for lang, pattern in {
        "en": r"\b(a|an|the)\b",
        "es": r"\b(un|una|unos|unas|el|la|los|las)\b",
        "vi": r"\b(của|là|cái|chiếc|những)\b",
        "de": r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b",
        "ar": r"ال",
        "nl": r"\b(de|het|een|des|der|den)\b",
        "sv": r"\b(en|ett)\b",
        "da": r"\b(en|et)\b",
        "no": r"\b(en|et|ei)\b",
        # No closing \b: these strip prefixes, in this alternation order (see the module docstring).
        "fr": r"\b(le|la|l'|les|du|de|d'|des|un|une|des)",
        "pt": r"\b(o|a|os|as|um|uma|uns|umas)\b",
        "it": r"\b(il|lo|la|l'|i|gli|le|del|dello|della|dell'|dei|degli|degl'|delle|un'|uno|una|un)",
        "fi": r"\b(se|yks|yksi)\b",
        "hu": r"\b(a|az|egy)\b",
    }.items()
}

_DELETE_PUNCTUATION = str.maketrans("", "", string.punctuation)


def answer_tokens(text: str, lang: str) -> list[str]:
    """The tokens MKQA compares: lower-cased, ASCII punctuation and articles removed, split."""
    text = text.lower().translate(_DELETE_PUNCTUATION)
    articles = ARTICLES.get(lang)
    if articles is not None:
        text = articles.sub(" ", text)
    if lang in CHARACTER_SEGMENTED:
        return list("".join(text.split()))  # every non-whitespace character
    return text.split()


def normalize_answer(text: str, lang: str) -> str:
    """The normalised answer string (tokens joined by one space), as the official EM compares it."""
    return " ".join(answer_tokens(text, lang))
