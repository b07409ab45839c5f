"""Declares translate-test and the translations-file translator; importing this imports nothing heavy."""

from harness.plugin import ModelSpec, hookimpl


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "translate-test",
            "harness_translate.model:TranslateTest",
            "translate questions to English (translator=...) before any English retriever or reader (model=...)",
        ),
        ModelSpec(
            "translations",
            "harness_translate.file:TranslationsFile",
            "precomputed question translations (file=... JSON lines of id, lang, question, translation)",
        ),
    ]
