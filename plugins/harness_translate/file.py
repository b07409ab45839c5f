"""The ``translations`` model: precomputed translations (human or machine) as a Translator.

The file is JSON lines, one record per text, keyed by its benchmark id and language:
``{"id": "-1018987027025691298", "lang": "te", "question": "...", "translation": "..."}`` for a
question, ``{"id": "en_3_1", "lang": "en", "text": "...", "translation": "..."}`` for a
candidate or a context (``question`` and ``text`` are the same field under two names).

Keyed by id, the same text may have different translations: XQuAD's human translations, used as
a translate-test upper bound, translate two different English questions into one Greek text, and
each keeps its own English original. Where the model sees ids (candidates, reading examples), a
text is looked up by (language, id) and must be the text the record names; where it sees only a
text (a retriever's queries), by (language, text), and a text with two different translations
is refused there, when asked for. Nothing is passed on untranslated.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.plugin import HarnessError, InputError, Model, ModelIdentity, Runtime, Translator
from harness.plugin.formats import validate
from harness.plugin.io import iter_jsonl, sha256_file


class TranslationsFile(Model):
    """A :class:`~harness.definitions.protocols.Translator` that reads its translations from a file."""

    provides = frozenset({Translator})

    def __init__(self, *, runtime: Runtime, file: Path, target_lang: str = "en", label: str | None = None) -> None:
        """``target_lang``: the language the file translates into."""
        if not file.is_file():
            raise HarnessError(f"model translations: file={file} does not exist")
        self.file, self.target_lang, self.label = file, target_lang, label
        #: (lang, id) -> (source text, translation)
        self.by_id: dict[tuple[str, str], tuple[str, str]] = {}
        #: (lang, text) -> every translation the file gives that text
        self.by_text: dict[tuple[str, str], set[str]] = {}
        for line, item in iter_jsonl(file):
            record = f"line {line}"
            validate(item, "translations", file=file, record=record)
            key = (item["lang"], item["id"])
            if key in self.by_id:
                raise InputError(
                    f"id '{item['id']}' appears twice for language '{item['lang']}'",
                    file=file,
                    record=record,
                    field="id",
                )
            text = item.get("question", item.get("text"))
            self.by_id[key] = (text, item["translation"])
            self.by_text.setdefault((item["lang"], text), set()).add(item["translation"])

    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            name=self.name or "translations",
            label=self.label or self.file.stem,
            weights=f"sha256:{sha256_file(self.file)}",
            options={"target_lang": self.target_lang},
            details={"file": str(self.file), "texts": len(self.by_id)},
        )

    def _check_target(self, target_lang: str) -> None:
        if target_lang != self.target_lang:
            raise HarnessError(f"model translations: {self.file} translates into {self.target_lang}, not {target_lang}")

    def translate(self, texts: Sequence[str], *, source_lang: str, target_lang: str) -> list[str]:
        """By (language, text): for callers that have no ids (a retriever's queries)."""
        self._check_target(target_lang)
        out = []
        for text in texts:
            translations = self.by_text.get((source_lang, text), set())
            if len(translations) != 1:
                problem = "no translation" if not translations else f"{len(translations)} different translations"
                raise HarnessError(
                    f"model translations: {self.file} has {problem} of the {source_lang} text "
                    f"'{text[:60]}'{'' if not translations else ' (keyed by id, it needs the id)'}"
                )
            out.append(next(iter(translations)))
        return out

    def translate_ids(
        self, ids: Sequence[str], texts: Sequence[str], *, source_lang: str, target_lang: str
    ) -> list[str]:
        """By (language, id); each record must name the text it translates."""
        self._check_target(target_lang)
        out = []
        for id_, text in zip(ids, texts):
            found = self.by_id.get((source_lang, id_))
            if found is None:
                raise HarnessError(
                    f"model translations: {self.file} has no translation of the {source_lang} text with id '{id_}'"
                )
            if found[0] != text:
                raise HarnessError(
                    f"model translations: {self.file} translates another text for the {source_lang} "
                    f"id '{id_}' ('{found[0][:40]}', not '{text[:40]}')"
                )
            out.append(found[1])
        return out
