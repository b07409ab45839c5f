"""Telling answers made for another language from answers to the language scored.

Why: XQuAD, MLQA and MKQA use the same question ids in every language, so a predictions file
made for one language passes every id check when another language is scored, and the official
scorer turns it into a plausible, wrong number (German XQuAD answers score F1 41 against the
English gold, with no word). The answers give such a file away:

* an extractive reader's answers are text of the context it read. On XQuAD and MLQA dev, the
  gold answers of one language are text of the same question's context in another language for
  2-33% of the questions, and of their own for 100%; so answers that are mostly not text of the
  contexts scored, but are text of another language's, were made for that language;
* where no other language's data is at hand, answers written in a script that the scored
  language's text hardly uses (Cyrillic answers to English contexts) were made for another
  language. (Where it is at hand and holds none of the answers, they are a weak model's, say a
  generator answering in another script, and are scored as they are.) Latin letters are no
  such evidence: every language's answers have names and numbers in them, and a model that can
  only answer in English gives a weak file for the language scored, not another language's.

Both tests are cheap on a right file: it stops at the first (its answers are text of their
contexts); other languages' data is read only for a file that fails it. A file is called foreign
only on a clear majority, so weak or generative models (answers not always text of the context)
are never refused for being weak.
"""

from __future__ import annotations

import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from harness.definitions.task import InputRules
from harness.errors import InputError

#: Fewer non-empty answers than this say too little about their language to refuse them.
MIN_ANSWERS = 3
#: Answers are suspect when fewer than this share of them is text of their contexts ...
SUSPECT_BELOW = 0.5
#: ... and foreign when at least this share is text of another language's contexts, and at least
#: :data:`FOREIGN_RATIO` times as many as of their own.
FOREIGN_SHARE = 0.5
FOREIGN_RATIO = 2
#: A script is foreign to a text when under this share of the text's letters is written in it,
#: while at least :data:`SCRIPT_MAJORITY` of the answers' letters are.
RARE_SCRIPT = 0.01
SCRIPT_MAJORITY = 0.8

#: The scripts of languages not written in Latin letters, named as Unicode names them (the first
#: word of a letter's name; CJK ideographs are ``Han``), for naming the language of answers whose
#: script gives them away. A language not listed is written in Latin letters.
SCRIPTS: dict[str, tuple[str, ...]] = {
    "ar": ("Arabic",),
    "fa": ("Arabic",),
    "ur": ("Arabic",),
    "he": ("Hebrew",),
    "el": ("Greek",),
    "ru": ("Cyrillic",),
    "bg": ("Cyrillic",),
    "uk": ("Cyrillic",),
    "kk": ("Cyrillic",),
    "hi": ("Devanagari",),
    "mr": ("Devanagari",),
    "bn": ("Bengali",),
    "ta": ("Tamil",),
    "te": ("Telugu",),
    "ml": ("Malayalam",),
    "th": ("Thai",),
    "ka": ("Georgian",),
    "km": ("Khmer",),
    "my": ("Myanmar",),
    "ko": ("Hangul",),
    "zh": ("Han",),
    "ja": ("Han", "Hiragana", "Katakana"),
}


@dataclass(frozen=True)
class ForeignAnswers:
    """Evidence that answers were made for another language: the likely language and the counts."""

    likely: str  # a language code, or several ("ja or zh"), or a script ("a language in Thai script")
    evidence: str  # the counts, e.g. "1190 of 1190 answers are text of the de contexts, 397 of the en ones"

    def message(self, scored: str) -> str:
        """One line for an error or a warning about answers scored as ``scored``."""
        return f"the answers look made for {self.likely}, not {scored}: {self.evidence}"


def refuse_or_warn(foreign: ForeignAnswers, scored: str, *, file: Path, input_rules: InputRules) -> None:
    """Refuse answers made for another language (strict input rules), or warn and let them be
    scored as the official script scores them (``--input-rules official``)."""
    if input_rules == "official":
        warnings.warn(
            f"{file}: {foreign.message(scored)}; scored as given (--input-rules official)", UserWarning, stacklevel=3
        )
    else:
        raise InputError(f"{foreign.message(scored)} (--input-rules official scores them anyway)", file=file)


def squash(text: str) -> str:
    """``text`` case-folded without white space: how an answer is looked for in a context, since
    readers' detokenisation changes spacing (and tools casing), never letters."""
    return "".join(text.split()).casefold()


def text_of_contexts(answers: Mapping[str, str], contexts: Mapping[str, str]) -> int:
    """How many of ``answers`` (question id -> squashed answer) are text of their question's
    squashed context in ``contexts`` (a question without one there counts as not)."""
    return sum(1 for qid, answer in answers.items() if answer in contexts.get(qid, ""))


#: :func:`squash` of contexts, each distinct one once: a paragraph has several questions, and
#: MLQA's G-XLT scores every context in seven files.
_squash_context = lru_cache(maxsize=4096)(squash)


def squashed_contexts(contexts: Mapping[str, str]) -> dict[str, str]:
    """Question id -> squashed context."""
    return {qid: _squash_context(context) for qid, context in contexts.items()}


def foreign_span_answers(
    scored: str,
    answers: Mapping[str, str],
    contexts: Mapping[str, str],
    others: Callable[[], Mapping[str, Mapping[str, str]]],
    languages: Sequence[str] = (),
    *,
    asked: str | None = None,
) -> ForeignAnswers | None:
    """Whether extractive answers (question id -> answer) to contexts of language ``scored``
    (question id -> context) were made for another language: they are mostly not text of their
    contexts, but are of another language's (``others()``: language -> question id -> context,
    called only then), or are written in a script foreign to the contexts (see
    :func:`foreign_script`; ``languages`` are those it may name). ``asked``: the questions'
    language, where it is not the contexts' (G-XLT): a generator may answer in it, and the names
    and numbers it writes are then text of that language's parallel contexts, which says nothing
    of the file's origin, so those contexts are no evidence."""
    given = {qid: squash(answer) for qid, answer in answers.items() if qid in contexts}
    given = {qid: answer for qid, answer in given.items() if answer}
    if len(given) < MIN_ANSWERS:
        return None
    own_contexts = squashed_contexts(contexts)
    own = text_of_contexts(given, own_contexts)
    if own >= SUSPECT_BELOW * len(given):
        return None
    hits = {
        lang: text_of_contexts(given, squashed_contexts(texts))
        for lang, texts in others().items()
        if lang not in (scored, asked)
    }
    best = max(hits, key=hits.__getitem__, default=None)
    if best is not None and hits[best] >= FOREIGN_SHARE * len(given) and hits[best] >= FOREIGN_RATIO * own:
        return ForeignAnswers(
            best,
            f"{hits[best]} of {len(given)} answers are text of the {best} contexts, {own} of the {scored} ones scored",
        )
    if hits:  # the other languages' contexts were at hand and do not hold these answers: a weak model's
        return None  # (a generator answering in another script, say), not another language's file
    return foreign_script(given.values(), contexts.values(), languages, what=f"the {scored} contexts")


@cache
def script(char: str) -> str | None:
    """The script of a letter as Unicode names it (``Latin``, ``Cyrillic``, ``Han``...); None for
    anything that is not a letter (digits, punctuation and marks belong to no language)."""
    if not unicodedata.category(char).startswith("L"):
        return None
    word = unicodedata.name(char, "").split(" ")[0]
    return "Han" if word == "CJK" else word.capitalize() or None


def script_letters(texts: Iterable[str]) -> Counter[str]:
    """Letters per script over ``texts``."""
    letters: Counter[str] = Counter()
    for char, count in Counter(char for text in texts for char in text).items():
        name = script(char)
        if name is not None:
            letters[name] += count
    return letters


def foreign_script(
    answers: Iterable[str], reference: Iterable[str], languages: Sequence[str] = (), *, what: str
) -> ForeignAnswers | None:
    """Whether ``answers`` are written in a script that ``reference`` (the scored language's
    contexts or gold answers, called ``what`` in the evidence) hardly uses: at least
    :data:`SCRIPT_MAJORITY` of the answers' letters are in one script other than Latin, under
    :data:`RARE_SCRIPT` of the reference's. The likely language is named from ``languages`` by
    :data:`SCRIPTS`."""
    answers = [answer for answer in answers if answer.strip()]
    if len(answers) < MIN_ANSWERS:
        return None
    written = script_letters(answers)
    if not written:
        return None
    main, count = written.most_common(1)[0]
    if main == "Latin" or count < SCRIPT_MAJORITY * sum(written.values()):
        return None
    letters = script_letters(reference)
    if not letters or letters[main] >= RARE_SCRIPT * sum(letters.values()):
        return None
    named = [lang for lang in languages if main in SCRIPTS.get(lang.split("_")[0], ("Latin",))]
    likely = " or ".join(named) if named else f"a language in {main} script"
    share = letters[main] / sum(letters.values())
    return ForeignAnswers(
        likely,
        f"{count / sum(written.values()):.0%} of the answers' letters are {main}, {share:.1%} of those of {what}",
    )


#: Answers that are labels, not text in a language (see :func:`script_share`).
YES_NO = frozenset({"yes", "no"})


def script_share(answers: Iterable[str], lang: str) -> float | None:
    """The share of ``answers`` (those with letters) written mostly in the script of ``lang``
    (:data:`SCRIPTS`; Latin for a language not listed): whether a model answered in the script of
    the language the benchmark scores (XOR-Full and MKQA want the question's). A generative model
    that answers Japanese questions in English scores 0 here whatever its F1. Script only: an
    English answer to a Finnish question is Latin, as Finnish is. Digits, dates and the yes/no
    labels (XOR-TyDi QA and MKQA answer yes/no questions with the English words, in every language)
    belong to no language and are not counted: the gold answers score 0.97-1 here, where counting
    the labels gave 0.81-0.94. None when no answer is counted."""
    expected = set(SCRIPTS.get(lang.split("_")[0], ("Latin",)))
    judged = in_script = 0
    for answer in answers:
        if answer.strip().lower() in YES_NO:
            continue
        letters = script_letters([answer])
        if not letters:
            continue
        judged += 1
        in_script += sum(letters[name] for name in expected) * 2 > sum(letters.values())
    return None if judged == 0 else in_script / judged
