"""Answer normalisers of the official span-QA scorers, as named, documented functions.

They live in the core, named for what they do rather than for the benchmark that introduced
them, because several benchmarks share each one (SQuAD's English normaliser scores XQuAD,
TyDiQA-GoldP and XOR-EnglishSpan; MLQA's multilingual one scores MLQA in its own plugin and in
XTREME submissions).

A normaliser maps an answer string to the tokens the official scorer compares: exact match is
"the token lists are equal" (the official scripts compare the space-joined normalised strings,
which is the same thing because no token contains white space), and F1 is the bag-of-tokens
overlap of :func:`harness.scoring.answers.token_f1`. Two official normalisers are here:

* :func:`ascii_english` -- SQuAD v1.1's ``normalize_answer`` (``evaluate-v1.1.py``; XTREME's
  ``third_party/evaluate_squad.py``), which XQuAD, TyDiQA-GoldP and XOR-EnglishSpan apply to
  *every* language: ASCII punctuation only, English articles, white-space tokens. So a Thai or
  Chinese answer without spaces is a single token, and partial overlap scores F1 0.
* :func:`multilingual` -- MLQA's ``normalize_answer(s, lang)`` (``facebookresearch/MLQA:
  mlqa_evaluation_v1.py``), selected by the *answer* (context) language: all Unicode ``P*``
  punctuation plus ASCII symbols, per-language "articles", and mixed segmentation for Chinese.

Both follow the official order: lowercase -> delete punctuation -> articles to a space -> split.
Punctuation is deleted, not replaced by a space ("U.S." -> "us"). The Unicode categories come
from the running Python's :mod:`unicodedata`, as they do for the official script.
"""

from __future__ import annotations

import re
import string
import sys
import unicodedata
from collections.abc import Callable
from functools import cache

from harness.errors import HarnessError

#: A normaliser: answer text -> the tokens the official scorer compares.
Normalizer = Callable[[str], list[str]]

_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ENGLISH_ARTICLES = re.compile(r"\b(a|an|the)\b")


def ascii_english(text: str) -> list[str]:
    """SQuAD v1.1 normalisation: lowercase, delete ``string.punctuation``, replace the English
    articles a/an/the (whole words) by a space, split on white space.

    >>> ascii_english("The Eiffel-Tower!")
    ['eiffeltower']
    """
    return _ENGLISH_ARTICLES.sub(" ", text.lower().translate(_ASCII_PUNCTUATION)).split()


#: Words replaced by a space, per language; its keys are the languages :func:`multilingual` has
#: rules for (any other is an error, as in MLQA's script). Vietnamese lists words that are not articles
#: (của "of", là "is", cái/chiếc classifiers, những plural marker): the official list, kept.
_ARTICLES: dict[str, re.Pattern[str] | None] = {
    "en": _ENGLISH_ARTICLES,
    "es": re.compile(r"\b(un|una|unos|unas|el|la|los|las)\b"),
    "de": re.compile(r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b"),
    "ar": None,  # see _ARABIC_ARTICLE
    "hi": None,
    "vi": re.compile(r"\b(của|là|cái|chiếc|những)\b"),
    "zh": None,
}

#: Arabic: the official pattern ``'\sال^|ال'`` has a first alternative that can never match
#: (``^`` after two consumed characters), so every "ال" anywhere -- also inside a word --
#: becomes a space: "الكتاب رجال" -> " كتاب رج " (one word can become two tokens).
_ARABIC_ARTICLE = "ال"

#: Chinese characters that mixed segmentation makes single tokens: the official regex class
#: ``[\u4e00-\u9fa5]``, which stops short of the end of the CJK block (U+9FA6-U+9FFF) and leaves
#: out extension A (U+3400-U+4DBF): those characters stay inside white-space tokens.
_CJK_FIRST, _CJK_LAST = "\u4e00", "\u9fa5"


@cache
def _unicode_punctuation() -> frozenset[str]:
    """Every code point below ``sys.maxunicode`` of a ``P*`` category, plus ``string.punctuation``
    (which adds the ASCII symbols ``$+<=>^`|~``), so non-ASCII symbols (category ``S*``: ``€ £ °``)
    are kept while CJK punctuation (``，。「」``) goes. Built once: scanning all of Unicode takes
    a noticeable moment."""
    marks = {chr(i) for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P")}
    return frozenset(marks.union(string.punctuation))


@cache
def _unicode_punctuation_table() -> dict[int, None]:
    return dict.fromkeys(map(ord, _unicode_punctuation()))


def _mixed_segmentation(text: str) -> list[str]:
    """MLQA's Chinese tokenisation: each character in U+4E00-U+9FA5 is a token of its own; the
    runs between them are split on white space. (The official loop also splits off punctuation,
    which has already been deleted at this point, so only the character range matters.)"""
    tokens: list[str] = []
    start = 0
    for i, char in enumerate(text):
        if _CJK_FIRST <= char <= _CJK_LAST:
            tokens.extend(text[start:i].split())
            tokens.append(char)
            start = i + 1
    tokens.extend(text[start:].split())
    return tokens


@cache
def multilingual(lang: str) -> Normalizer:
    """MLQA's normaliser for answers in ``lang`` (the context language of an MLQA file).

    Lowercase; delete every Unicode punctuation character (category ``P*``) and the ASCII
    symbols of ``string.punctuation``; replace the language's articles by a space (en a/an/the;
    es un/una/unos/unas/el/la/los/las; de ein/eine/einen/einem/eines/einer/der/die/das/den/dem/
    des; vi của/là/cái/chiếc/những; ar every "ال"; hi and zh none); split on white space, or
    for zh with mixed segmentation. An unknown language is an error, as in the official script.

    The same function object is returned for the same language, so callers can memoise on it.

    >>> multilingual("es")("¡Una casa!")
    ['casa']
    >>> multilingual("zh")("Apple iPhone 12，苹果")
    ['apple', 'iphone', '12', '苹', '果']
    """
    if lang not in _ARTICLES:
        raise HarnessError(f"no answer normalisation rules for language '{lang}' (known: {', '.join(_ARTICLES)})")
    table = _unicode_punctuation_table()
    articles = _ARTICLES[lang]
    segment = _mixed_segmentation if lang == "zh" else str.split

    def normalize(text: str) -> list[str]:
        text = text.lower().translate(table)
        if lang == "ar":
            text = text.replace(_ARABIC_ARTICLE, " ")
        elif articles is not None:
            text = articles.sub(" ", text)
        return segment(text)

    normalize.__name__ = f"multilingual_{lang}"
    normalize.__doc__ = f"MLQA normalisation for answers in '{lang}' (see :func:`multilingual`)."
    return normalize
