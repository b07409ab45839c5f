"""Synthetic passage corpora with the shape of the open-retrieval corpora, for the scale benchmarks.

    python benchmarks/synthetic_corpus.py 1000000 /work/scale-data/psgs-1m.tsv
    python benchmarks/synthetic_corpus.py 1000000 /work/scale-data/xor-full-1m --languages en,ar,bn,fi,ja,ko,ru,te

A file is written in the layout of DPR's ``psgs_w100.tsv`` (header ``id<TAB>text<TAB>title``, the
text in double quotes, ids 1..n), so the harness reads it as it reads the real one; a folder gets
one ``{lang}.tsv`` per language, as XOR-Full's multilingual corpus is given (half the passages
English, the rest shared by the other languages). Like psgs_w100, articles are cut into passages
of 100 words (the last one of an article shorter), an article being 1 to 8 passages under one
title of 1 to 3 capitalised words. Words are drawn from a Zipf distribution (exponent
:data:`ZIPF_EXPONENT`) over :data:`VOCABULARY` made-up words per language, written in that
language's script and built from syllables so that frequent words are short, as in text; posting
lists are therefore as skewed as a real corpus's. Japanese is written without spaces.

Never stored in the repository: the corpora run to gigabytes (about 700 bytes a passage).
Deterministic: the same size, languages and seed give the same bytes.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import numpy as np

VOCABULARY = 1_000_000
ZIPF_EXPONENT = 1.07
WORDS_PER_PASSAGE = 100
MAX_ARTICLE_PASSAGES = 8
BLOCK = 20_000  # passages generated at a time


def _pairs(consonants: str, vowels: list[str] | str) -> list[str]:
    return [c + v for c in consonants for v in vowels]


#: Syllables per language, in its script: consonant x vowel (a Hangul syllable is one code point).
SYLLABLES = {
    "en": _pairs("bcdfghklmnprstvwz", "aeiouy"),
    "fi": _pairs("hjklmnprstv", "aeiouyäö"),
    "ru": _pairs("бвгдзклмнпрстфхч", "аеиоуыя"),
    "ar": _pairs("بتجحدرزسشصطعفقكلمنه", ["", "ا", "و", "ي"]),
    "bn": _pairs("কখগঘচছজটডতদধনপবভমরলশসহ", ["", "া", "ি", "ী", "ু", "ে", "ো"]),
    "te": _pairs("కగచజటడతదనపబమయరలవశసహ", ["", "ా", "ి", "ీ", "ు", "ె", "ో"]),
    "ja": _pairs("かきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもらりるれろ", ["", "ん", "う"]),
    "ko": [chr(0xAC00 + 588 * initial + 28 * vowel) for initial in range(19) for vowel in range(21)],
}


def vocabulary(lang: str, size: int = VOCABULARY) -> np.ndarray:
    """``size`` distinct made-up words, most frequent first (rank r spelt in base len(syllables))."""
    parts = SYLLABLES[lang]
    base = len(parts)
    words = []
    for rank in range(size):
        word, r = [], rank
        while True:
            word.append(parts[r % base])
            r //= base
            if r == 0:
                break
            r -= 1  # bijective numbering: every syllable string is used once
        words.append("".join(word))
    return np.asarray(words, dtype=object)


def _zipf_cdf(size: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** ZIPF_EXPONENT
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def passages(n: int, lang: str = "en", seed: int = 0) -> Iterator[tuple[str, str]]:
    """``n`` (title, text) pairs of one language."""
    rng = np.random.default_rng([seed, sum(map(ord, lang))])
    words = vocabulary(lang)
    cdf = _zipf_cdf(len(words))
    space = "" if lang == "ja" else " "
    made = 0
    title, left = "", 0  # the current article's title and passages left in it
    while made < n:
        size = min(BLOCK, n - made)
        ranks = np.searchsorted(cdf, rng.random((size, WORDS_PER_PASSAGE)))
        for row in words[ranks]:
            length = WORDS_PER_PASSAGE
            if left == 0:
                left = int(rng.integers(1, MAX_ARTICLE_PASSAGES + 1))
                title_words = words[np.searchsorted(cdf, rng.random(int(rng.integers(1, 4))))]
                title = " ".join(w[:1].upper() + w[1:] for w in title_words)
            left -= 1
            if left == 0:  # an article's last passage is shorter
                length = int(rng.integers(10, WORDS_PER_PASSAGE + 1))
            yield title, space.join(row[:length]) + "."
        made += size


def write_tsv(path: Path, n: int, lang: str = "en", seed: int = 0) -> None:
    """``n`` passages in psgs_w100's layout (written beside ``path``, then moved into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8", newline="") as handle:
        handle.write("id\ttext\ttitle\n")
        for number, (title, text) in enumerate(passages(n, lang, seed), start=1):
            handle.write(f'{number}\t"{text}"\t{title}\n')  # no quote or tab in the made-up words
    partial.replace(path)


def write_corpus(location: Path, n: int, languages: list[str], seed: int = 0) -> None:
    """One English file, or a folder of ``{lang}.tsv`` (half English, the rest shared alike)."""
    if languages == ["en"]:
        write_tsv(location, n, "en", seed)
        return
    others = [lang for lang in languages if lang != "en"]
    english = n // 2 if "en" in languages else 0
    shares = {"en": english} if english else {}
    for i, lang in enumerate(others):
        shares[lang] = (n - english) // len(others) + (i < (n - english) % len(others))
    for lang, count in shares.items():
        write_tsv(location / f"{lang}.tsv", count, lang, seed)


def queries(n: int, lang: str = "en", seed: int = 1, words: int = 5) -> list[str]:
    """``n`` queries of ``words`` words, drawn from the same distribution as the passages."""
    rng = np.random.default_rng([seed, sum(map(ord, lang))])
    vocab = vocabulary(lang)
    ranks = np.searchsorted(_zipf_cdf(len(vocab)), rng.random((n, words)))
    return [" ".join(row) for row in vocab[ranks]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", type=int, help="number of passages")
    parser.add_argument("location", type=Path, help="a .tsv file (English), or a folder when several languages")
    parser.add_argument("--languages", default="en", help="comma-separated codes, e.g. en,ar,bn,fi,ja,ko,ru,te")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    languages = args.languages.split(",")
    unknown = sorted(set(languages) - set(SYLLABLES))
    if unknown:
        raise SystemExit(f"no script for {', '.join(unknown)}; known: {', '.join(SYLLABLES)}")
    write_corpus(args.location, args.size, languages, args.seed)


if __name__ == "__main__":
    main()
