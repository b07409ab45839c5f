"""Language-aware word tokens for lexical retrieval.

Spaced scripts: case-folded runs of letters, digits and combining marks (so Devanagari vowel
signs and Arabic diacritics stay inside their word, which ``\\w`` alone would split on).
Unspaced scripts get a real segmenter, all offline: jieba (zh, search mode for sub-word
recall), MeCab with UniDic-lite through fugashi (ja), PyThaiNLP's newmm (th). Korean is spaced,
but a space-separated word carries its particles and endings (서울의, 서울이다), so it is split
into morphemes by Kiwi (kiwipiepy), as XOR QA's BM25 baseline splits it with Elasticsearch's nori.
Bengali and Telugu words keep their vowel signs and viramas (combining marks), so the default
rule suits them. Punctuation is dropped everywhere.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable
from functools import cache


@cache
def _word_pattern() -> re.Pattern[str]:
    """Runs of \\w plus combining marks (category M), built once from the Unicode tables."""
    ranges: list[str] = []
    start = None
    for code in range(sys.maxunicode + 1):
        is_mark = unicodedata.category(chr(code)).startswith("M")
        if is_mark and start is None:
            start = code
        elif not is_mark and start is not None:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(code - 1))}")
            start = None
    return re.compile(r"(?:[^\W_]|[" + "".join(ranges) + "])+")


def word_tokens(text: str) -> list[str]:
    """Case-folded words of a spaced script."""
    return _word_pattern().findall(text.casefold())


def _keep(tokens: list[str]) -> list[str]:
    """Case-fold segmenter output and drop pure punctuation/space tokens."""
    pattern = _word_pattern()
    return [t.casefold() for t in (tok.strip() for tok in tokens) if t and pattern.search(t)]


@cache
def _chinese() -> Callable[[str], list[str]]:
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return lambda text: _keep(jieba.lcut_for_search(text))


@cache
def _japanese() -> Callable[[str], list[str]]:
    import fugashi

    tagger = fugashi.Tagger()  # picks up unidic-lite
    return lambda text: _keep([word.surface for word in tagger(text)])


@cache
def _thai() -> Callable[[str], list[str]]:
    from pythainlp.tokenize import word_tokenize

    return lambda text: _keep(word_tokenize(text, engine="newmm", keep_whitespace=False))


@cache
def _korean() -> Callable[[str], list[str]]:
    from kiwipiepy import Kiwi

    kiwi = Kiwi()
    return lambda text: _keep([token.form for token in kiwi.tokenize(text)])


_SEGMENTERS: dict[str, Callable[[], Callable[[str], list[str]]]] = {
    "zh": _chinese,
    "ja": _japanese,
    "th": _thai,
    "ko": _korean,
}


def tokenize(text: str, lang: str | None) -> list[str]:
    """Tokens of ``text`` in language ``lang`` (ISO 639-1; regional variants like zh_cn accepted)."""
    base = (lang or "").split("_")[0].split("-")[0].lower()
    segmenter = _SEGMENTERS.get(base)
    if segmenter is None:
        return word_tokens(text)
    return segmenter()(unicodedata.normalize("NFKC", text))


def describe() -> dict[str, str]:
    """Which tokeniser each language uses, for a result's model details."""
    return {
        "default": "case-folded letter/digit/mark runs",
        "zh": "jieba lcut_for_search",
        "ja": "fugashi + unidic-lite surface forms",
        "th": "pythainlp newmm",
        "ko": "kiwipiepy morphemes",
    }
