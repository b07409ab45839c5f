"""The ``translations`` model: precomputed translations (human or machine) as a Translator.

The file is JSON lines, one record per question, keyed by its id:
``{"id": "-1018987027025691298", "lang": "te", "question": "...", "translation": "..."}``.
A retriever or reader sees question texts, not ids, so a text is looked up by (language,
question text); the question must therefore be given exactly as in the benchmark file. Two
records with the same question and different translations are refused, and so is a text the
file does not translate: nothing is passed on untranslated.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.errors import HarnessError, InputError
from harness.io import iter_jsonl, sha256_file
from harness.model import Model, ModelIdentity, Runtime
from harness.protocols import Translator
from harness.validation import validate


class TranslationsFile(Model):
    """A :class:`~harness.protocols.Translator` that reads its translations from a file."""
    provides = frozenset({Translator})

    def __init__(self, *, runtime: Runtime, file: Path, target_lang: str = "en", label: str | None = None) -> None:
        """``target_lang``: the language the file translates into."""
        if not file.is_file():
            raise HarnessError(f"model translations: file={file} does not exist")
        self.file, self.target_lang, self.label = file, target_lang, label
        self.table: dict[tuple[str, str], str] = {}
        seen: set[str] = set()
        for line, item in iter_jsonl(file):
            record = f"line {line}"
            validate(item, "translations", file=file, record=record)
            if item["id"] in seen:
                raise InputError(f"question id '{item['id']}' appears twice", file=file, record=record, field="id")
            seen.add(item["id"])
            key = (item["lang"], item["question"])
            if self.table.setdefault(key, item["translation"]) != item["translation"]:
                raise InputError("the same question has two different translations", file=file, record=record,
                                 field="translation")

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name=self.name or "translations", label=self.label or self.file.stem,
                             weights=f"sha256:{sha256_file(self.file)}", options={"target_lang": self.target_lang},
                             details={"file": str(self.file), "questions": len(self.table)})

    def translate(self, texts: Sequence[str], *, source_lang: str, target_lang: str) -> list[str]:
        if target_lang != self.target_lang:
            raise HarnessError(f"model translations: {self.file} translates into {self.target_lang}, not {target_lang}")
        out = []
        for text in texts:
            translation = self.table.get((source_lang, text))
            if translation is None:
                raise HarnessError(f"model translations: {self.file} has no translation of the {source_lang} question "
                                   f"'{text[:60]}'")
            out.append(translation)
        return out
