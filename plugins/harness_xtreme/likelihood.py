"""XCOPA, XNLI and PAWS-X with a language model: the option it finds most likely, as
lm-evaluation-harness (``lm_eval/tasks/xcopa``, ``xnli``, ``paws-x``) and lighteval run them.

Each example becomes a context and one continuation per option (:class:`~harness.models.loglikelihood.
ChoiceQuestion`); the model scores every continuation, and the task reports three choices side by
side (:mod:`harness.models.loglikelihood`): ``accuracy``, the option of highest summed log-likelihood
(lm-eval's ``acc``), which is the prediction written to the submission files; ``accuracy_norm``,
the log-likelihood divided by the option's length in characters (lm-eval's ``acc_norm``: Python's
``len`` of the option string); ``accuracy_bytes``, divided by its length in UTF-8 bytes (lm-eval's
``acc_bytes``). The two normalisations differ where a script takes several bytes a character.

The prompts, in the language of the example, with lm-eval's words for each language:

* XCOPA: the premise without its final punctuation, then the connector (``because`` for a cause,
  ``therefore`` for an effect; ``sest`` / ``seetõttu`` in Estonian...); each choice follows after
  a space with its first letter lowercased. ``The man turned on the faucet therefore`` +
  `` the toilet filled with water.``
* XNLI: lm-eval writes each option as a whole sentence with an empty context, ``premise, right?
  Yes, hypothesis`` (``Also`` for neutral, ``No`` for contradiction). Here the part every option
  shares is the context, ``premise, right?``, and the continuation is `` Yes, hypothesis``: the
  summed choice is the same up to how the tokenizer cuts the boundary, and the normalised choices
  divide by the continuation that differs rather than the whole sentence.
* PAWS-X: ``sentence1, right?`` (its final ``.``, ``,`` or ``;`` dropped, as lm-eval does) and
  `` No, sentence2`` / `` Yes, sentence2`` (sentence2 with its first letter lowercased).

The version (:data:`PROMPT_VERSION`) is recorded in the result's diagnostics: an edit of a word
here changes the numbers, so it bumps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.plugin.services import NORMALISATIONS, ChoiceQuestion, Decision

PROMPT_VERSION = "lm-eval-words@1"

#: XCOPA's connectors (cause, effect) by language, lm-eval's words.
XCOPA_CONNECTORS: dict[str, tuple[str, str]] = {
    "et": ("sest", "seetõttu"),
    "ht": ("poukisa", "donk sa"),
    "id": ("karena", "maka"),
    "it": ("perché", "quindi"),
    "qu": ("imataq", "chaymi"),
    "sw": ("kwa sababu", "kwa hiyo"),
    "ta": ("காரணமாக", "எனவே"),
    "th": ("เพราะ", "ดังนั้น"),
    "tr": ("çünkü", "bu yüzden"),
    "vi": ("bởi vì", "vì vậy"),
    "zh": ("因为", "所以"),
}

#: XNLI's question word and its answers (entailment, neutral, contradiction) by language, lm-eval's.
XNLI_WORDS: dict[str, tuple[str, str, str, str]] = {
    "ar": ("صحيح", "نعم", "لذا", "رقم"),
    "bg": ("правилно", "да", "така", "не"),
    "de": ("richtig", "Ja", "Auch", "Nein"),
    "el": ("σωστός", "Ναί", "Έτσι", "όχι"),
    "en": ("right", "Yes", "Also", "No"),
    "es": ("correcto", "Sí", "Asi que", "No"),
    "fr": ("correct", "Oui", "Aussi", "Non"),
    "hi": ("सही", "हाँ", "इसलिए", "नहीं"),
    "ru": ("правильно", "Да", "Так", "Нет"),
    "sw": ("sahihi", "Ndiyo", "Hivyo", "Hapana"),
    "th": ("ถูกต้อง", "ใช่", "ดังนั้น", "ไม่"),
    "tr": ("doğru", "Evet", "Böylece", "Hayır"),
    "ur": ("صحیح", "جی ہاں", "اس لئے", "نہیں"),
    "vi": ("đúng", "Vâng", "Vì vậy", "Không"),
    "zh": ("正确", "是的", "所以", "不是的"),
}

#: PAWS-X's question and its answers (not a paraphrase, paraphrase) by language, lm-eval's words.
PAWSX_WORDS: dict[str, tuple[str, str, str]] = {
    "de": ("richtig", "Nein", "Ja"),
    "en": ("right", "No", "Yes"),
    "es": ("verdad", "No", "Sí"),
    "fr": ("n'est-ce pas", "Non", "Oui"),
    "ja": ("ですね", "いいえ", "はい"),
    "ko": ("맞죠", "아니요", "예"),
    "zh": ("对吧", "不是", "是"),
}

#: The metric of each normalisation, as the task's rows name them.
METRICS = {"sum": "accuracy", "chars": "accuracy_norm", "bytes": "accuracy_bytes"}
#: The per-item value of each normalised choice in the instance records (``correct`` is the summed one's).
ITEM_VALUES = {"chars": "correct_norm", "bytes": "correct_bytes"}


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def xcopa_question(premise: str, question: str, choices: Sequence[str], lang: str) -> ChoiceQuestion:
    """The choice between XCOPA's two options (see the module docstring)."""
    cause, effect = XCOPA_CONNECTORS[lang]
    stem = premise.strip()
    stem = stem[:-1] if stem[-1:] in ".。!?" else stem
    return ChoiceQuestion(
        f"{stem} {cause if question == 'cause' else effect}", tuple(f" {_lower_first(choice)}" for choice in choices)
    )


def xnli_question(premise: str, hypothesis: str, lang: str, labels: Sequence[str]) -> ChoiceQuestion:
    """The choice among XNLI's labels, one continuation per label of ``labels``, in its order."""
    right, yes, also, no = XNLI_WORDS[lang]
    word = {"entailment": yes, "neutral": also, "contradiction": no}
    return ChoiceQuestion(f"{premise}, {right}?", tuple(f" {word[label]}, {hypothesis}" for label in labels))


def pawsx_question(first: str, second: str, lang: str, labels: Sequence[str]) -> ChoiceQuestion:
    """The choice between PAWS-X's labels ``"0"`` (not a paraphrase) and ``"1"``, in the order of ``labels``."""
    right, no, yes = PAWSX_WORDS[lang]
    stem = first.strip()
    stem = stem[:-1] if stem[-1:] in ".,;" else stem
    word = {"0": no, "1": yes}
    return ChoiceQuestion(
        f"{stem}, {right}?", tuple(f" {word[label]}, {_lower_first(second.strip())}" for label in labels)
    )


@dataclass(frozen=True)
class LikelihoodPredictions:
    """One language's predictions by log-likelihood, as a unit's predictions keep them (JSON):
    the label each normalisation chose (``sum`` is the submission's), and every option's
    log-likelihood, in the task's label order."""

    chosen: dict[str, list[object]]
    loglikelihoods: list[list[float]]

    @classmethod
    def of(cls, decisions: Sequence[Decision], labels: Sequence[object]) -> LikelihoodPredictions:
        return cls(
            {name: [labels[d.chosen[name]] for d in decisions] for name in NORMALISATIONS},
            [list(d.loglikelihoods) for d in decisions],
        )

    def to_json(self) -> dict[str, object]:
        return {"chosen": self.chosen, "loglikelihoods": self.loglikelihoods}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> LikelihoodPredictions:
        """``raw`` as a file held it: a value of the wrong shape raises KeyError or TypeError."""
        return cls(dict(raw["chosen"]), list(raw["loglikelihoods"]))


def is_likelihood(predictions: object) -> bool:
    """Whether a unit's predictions are a language model's (:class:`LikelihoodPredictions` JSON)."""
    return isinstance(predictions, dict) and "chosen" in predictions
