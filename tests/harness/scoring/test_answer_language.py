"""Answers made for another language (issue 22): the evidence, by hand-made contexts and answers."""

from __future__ import annotations

from collections.abc import Mapping

from harness.scoring.answer_language import (
    ForeignAnswers,
    foreign_script,
    foreign_span_answers,
    script,
    script_share,
    squash,
)

EN = {
    "q1": "The tower was built in 1889 by Gustave Eiffel.",
    "q2": "Paris is the capital of France.",
    "q3": "The river Seine flows through the city.",
    "q4": "It is 330 metres tall.",
}
DE = {
    "q1": "Der Turm wurde 1889 von Gustave Eiffel gebaut.",
    "q2": "Paris ist die Hauptstadt Frankreichs.",
    "q3": "Die Seine fließt durch die Stadt.",
    "q4": "Er ist 330 Meter hoch.",
}
#: German answers: text of the German contexts, and of none of the English ones.
GERMAN = {"q1": "von Gustave Eiffel", "q2": "Hauptstadt Frankreichs", "q3": "Die Seine", "q4": "330 Meter"}


def no_other_data() -> Mapping[str, Mapping[str, str]]:
    raise AssertionError("other languages' data must not be read for answers that are text of their contexts")


def test_answers_that_are_text_of_their_contexts_pass_without_reading_other_languages() -> None:
    english = {"q1": "Gustave Eiffel", "q2": "paris", "q3": "river  Seine", "q4": "330 metres"}  # case, spacing
    assert foreign_span_answers("en", english, EN, no_other_data) is None


def test_answers_that_are_text_of_another_languages_contexts_are_named_with_their_counts() -> None:
    # Own contexts: none of the four German answers is text of its English context ("330 Meter"
    # is not "330 metres"); German contexts: all four. 4 >= 0.5 * 4 and 4 >= 2 * 0.
    found = foreign_span_answers("en", GERMAN, EN, lambda: {"de": DE, "en": EN})
    assert found == ForeignAnswers("de", "4 of 4 answers are text of the de contexts, 0 of the en ones scored")
    assert found.message("en").startswith("the answers look made for de, not en: 4 of 4")


def test_a_weak_model_whose_answers_are_text_of_no_context_is_not_refused() -> None:
    weak = {"q1": "a tower", "q2": "London", "q3": "water", "q4": "tall"}
    assert foreign_span_answers("en", weak, EN, lambda: {"de": DE}) is None


def test_too_few_answers_say_nothing() -> None:
    # Two non-empty answers (the empty and the blank one do not count) are below MIN_ANSWERS (3).
    few = {"q1": "von Gustave Eiffel", "q2": "Hauptstadt Frankreichs", "q3": "", "q4": "  "}
    assert foreign_span_answers("en", few, EN, lambda: {"de": DE}) is None


def test_without_other_data_a_foreign_script_names_the_language() -> None:
    russian = {"q1": "Гюстав Эйфель", "q2": "столица Франции", "q3": "Сена", "q4": "330 метров"}
    found = foreign_span_answers("en", russian, EN, lambda: {}, ("en", "de", "ru"))
    assert found is not None and found.likely == "ru"
    # 40 letters, all Cyrillic (digits and spaces are no letters); the English contexts have none.
    assert found.evidence == "100% of the answers' letters are Cyrillic, 0.0% of those of the en contexts"


def test_answers_in_another_script_that_no_other_language_holds_are_a_weak_models() -> None:
    # A generator (a tiny random one, say) answering English contexts in Cyrillic: the other
    # languages' contexts are at hand and hold none of the answers, so the file is scored as it is.
    russian = {"q1": "Гюстав Эйфель", "q2": "столица Франции", "q3": "Сена", "q4": "330 метров"}
    assert foreign_span_answers("en", russian, EN, lambda: {"de": DE}, ("en", "de", "ru")) is None


def test_latin_answers_are_no_evidence_by_script() -> None:
    # A model that answers in English on Russian contexts is weak, not another language's file.
    assert foreign_script(["Eiffel", "Paris", "Seine"], ["Эйфелева башня в Париже"], ("en", "ru"), what="ru") is None


def test_a_script_the_reference_uses_is_no_evidence() -> None:
    reference = ["東京タワー", "東京"]  # Han and Katakana
    assert foreign_script(["東京", "大阪", "京都"], reference, ("ja", "zh"), what="ja") is None


def test_scripts_and_squashing() -> None:
    assert [script(c) for c in "aЖ字カ한ก1 ."] == [
        "Latin",
        "Cyrillic",
        "Han",
        "Katakana",
        "Hangul",
        "Thai",
        None,
        None,
        None,
    ]
    assert squash(" Gustave\tEIFFEL\n") == "gustaveeiffel"


def test_the_share_of_answers_in_the_script_asked_for() -> None:
    # 東京 (Han) and とうきょう (Hiragana) are Japanese script; Tokyo is Latin; "" and "42" have no letters
    assert script_share(["東京", "Tokyo", "とうきょう", "", "42"], "ja") == 2 / 3
    # a Latin language expects Latin; MKQA's zh_cn is Chinese; one letter out of three is no majority
    assert script_share(["Pariisi", "Париж"], "fi") == 1 / 2
    assert script_share(["北京", "Bei京"], "zh_cn") == 1 / 2
    assert script_share(["", "1912"], "ru") is None
    # XOR-TyDi QA and MKQA answer yes/no questions with the English labels in every language: not counted
    assert script_share(["yes", "Москва", "No", "1 января"], "ru") == 1.0
