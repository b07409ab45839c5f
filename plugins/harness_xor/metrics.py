"""The three XOR QA metrics, as the official scripts ``evals/eval_xor_{retrieve,engspan,full}.py``
compute them (AkariAsai/XORQA), with their quirks; corrected variants are separate functions.

R@kt (XOR-Retrieve): the retrieved passages, tokenised with ``nltk.word_tokenize`` and
concatenated in rank order, are cut to the first ``k * 1000`` tokens and joined with spaces; the
question counts as a hit if any non-yes/no answer is a *raw, case-sensitive substring* of that
string. Nothing is normalised: an answer like ``2.8%`` can never match (the tokens are ``2.8 %``).

EnglishSpan F1/EM: SQuAD v1.1 normalisation (lowercase, ASCII punctuation, English articles,
whitespace), max over golds.

XOR-Full F1/EM/BLEU: lowercase, ASCII punctuation removed, every ``年 歳 人 년`` deleted anywhere
("counter removal"), whitespace collapsed. Japanese text is first split by MeCab (``-Owakati``,
unidic-lite); the prediction alone has ``・`` replaced by a space and ``、`` by a comma before
that. BLEU is NLTK's ``sentence_bleu`` with default weights and no smoothing, called with plain
strings, i.e. character 4-grams of the raw prediction against the (for Japanese: wakati-split,
trailing ``" \\n"`` included) references. sacrebleu does not reproduce it: with
``BLEU(tokenize="char", smooth_method="none")`` the gold dev answers give 82.24 instead of the
official 75.18 (ja 71.13 instead of 20.69, te 90.88 instead of 91.17), because sacrebleu drops the
spaces and newlines that NLTK counts as characters; so the n-gram statistics are computed here.
"""

from __future__ import annotations

import math
import string
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cache

from harness.plugin.scoring import best_over_golds, token_f1

# -- XOR-Retrieve ------------------------------------------------------------------------------


def first_tokens(contexts: Iterable[str], max_tokens: int, tokenize: Callable[[str], list[str]]) -> list[str]:
    """The first ``max_tokens`` tokens of the contexts, concatenated in rank order.

    Contexts are tokenised one at a time and only until enough tokens are collected, as the
    official loop does; the cut of a longer list is a prefix, so one call serves every k.
    """
    tokens: list[str] = []
    for text in contexts:
        tokens += tokenize(text)
        if len(tokens) >= max_tokens:
            break
    return tokens[:max_tokens]


def recall_hit(tokens: Sequence[str], answers: Iterable[str]) -> bool:
    """Whether any answer is a raw substring of the space-joined tokens."""
    joined = " ".join(tokens)
    return any(answer in joined for answer in answers)


# -- XOR-EnglishSpan ---------------------------------------------------------------------------

_ASCII_PUNCTUATION = frozenset(string.punctuation)


def f1_and_em(prediction: str, golds: Sequence[str], normalize: Callable[[str], list[str]]) -> tuple[float, float]:
    """(F1, EM) of one answer under ``normalize`` (text -> tokens), each the maximum over the gold
    answers (token F1 is 0 when nothing overlaps, also for an empty prediction against an empty
    gold). EnglishSpan uses SQuAD v1.1's normaliser (``harness.scoring.normalize.ascii_english``)."""
    f1 = best_over_golds(lambda p, g: token_f1(normalize(p), normalize(g)), prediction, golds)
    em = best_over_golds(lambda p, g: float(normalize(p) == normalize(g)), prediction, golds)
    return f1, em


# -- XOR-Full ----------------------------------------------------------------------------------

#: Characters the XOR-Full normaliser deletes wherever they occur (counter words).
COUNTERS = "年歳人년"
_COUNTER_TABLE = str.maketrans("", "", COUNTERS)


def full_normalize(text: str) -> list[str]:
    """XOR-Full's ``normalize_answer`` (lowercase, ASCII punctuation, counters, whitespace), as tokens."""
    text = "".join(ch for ch in text.lower() if ch not in _ASCII_PUNCTUATION)
    return text.translate(_COUNTER_TABLE).split()


@cache
def _mecab() -> Callable[[str], list[str]]:
    import fugashi

    tagger = fugashi.Tagger("-Owakati")  # unidic-lite, the dictionary the XOR README prescribes
    return lambda text: [word.surface for word in tagger(text)]


def wakati(text: str) -> str:
    """``MeCab.Tagger("-Owakati").parse(text)`` exactly: tokens joined by spaces, then ``" \\n"``
    (just ``"\\n"`` when there is no token). fugashi's own ``parse`` strips that ending, which BLEU
    counts as two characters, so the string is rebuilt from the tokens."""
    tokens = _mecab()(text)
    return " ".join(tokens) + " \n" if tokens else "\n"


def japanese_prediction(text: str) -> str:
    """The official preprocessing of a Japanese *prediction* (golds skip the replacements)."""
    return wakati(text.replace("・", " ").replace("、", ","))


def char_bleu(references: Sequence[str], hypothesis: str, *, effective_order: bool = False) -> float:
    """NLTK's ``sentence_bleu(references, hypothesis)`` on plain strings: character n-grams
    (n = 1..4, weights 1/4), clipped counts, closest-reference brevity penalty, no smoothing.

    As in NLTK: no matching character gives 0; an n-gram order with no match contributes
    ``log(sys.float_info.min)``, so any hypothesis under 4 characters scores about 1e-77 or less
    even when exact. ``effective_order=True`` is the corrected variant: a hypothesis of m < 4
    characters is scored on orders 1..m with weights 1/m (NLTK's ``auto_reweigh``), so an exact
    short answer scores 1.
    """
    hyp_len = len(hypothesis)
    order = min(4, hyp_len) if effective_order and hyp_len else 4
    numerators, denominators = [], []
    for n in range(1, order + 1):
        counts = Counter(hypothesis[i : i + n] for i in range(hyp_len - n + 1))
        best: Counter[str] = Counter()
        for reference in references:
            for gram, count in Counter(reference[i : i + n] for i in range(len(reference) - n + 1)).items():
                if gram in counts and count > best[gram]:
                    best[gram] = count
        numerators.append(sum(min(count, best[gram]) for gram, count in counts.items()))
        denominators.append(max(1, sum(counts.values())))
    if numerators[0] == 0:
        return 0.0
    closest = min((len(r) for r in references), key=lambda length: (abs(length - hyp_len), length))
    penalty = 1.0 if hyp_len > closest else math.exp(1 - closest / hyp_len)
    weight = 1 / order
    log_precisions = (
        weight * math.log(num / den if num else sys.float_info.min) for num, den in zip(numerators, denominators)
    )
    return penalty * math.exp(math.fsum(log_precisions))


def full_references(golds: Sequence[str], lang: str, *, symmetric: bool = False) -> list[str]:
    """The gold answers as the official script compares them: wakati-split for Japanese.

    ``symmetric=True`` is the corrected variant: Japanese golds get the prediction's ``・``/``、``
    replacement too, so a gold such as ``アンリ・ブラコノー`` can be matched by itself.
    """
    if lang != "ja":
        return list(golds)
    return [japanese_prediction(g) if symmetric else wakati(g) for g in golds]


def full_prediction(prediction: str, lang: str) -> str:
    """The prediction as the official script compares it for F1/EM (BLEU takes it raw)."""
    return japanese_prediction(prediction) if lang == "ja" else prediction
