"""Machine translations kept on disk, so a second run (another task, another retriever behind the
same translator, a resumed run) translates nothing twice.

A machine translator is a function of the text, so its translations are kept by (source
language, target language, text), one file per translator identity (name, weights, options):
``{cache_dir}/translations/{sha256 of the identity}.json``. A translations *file* needs no cache;
it is keyed by id (see :mod:`harness_translate.file`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.plugin import InputError
from harness.plugin.io import dump_json, read_json, sha256_text


class TranslationCache:
    """Translations of one translator, read once and written back after each batch of new ones."""

    def __init__(self, folder: Path, translator: dict[str, Any]) -> None:
        self.path = folder / "translations" / f"{sha256_text(json.dumps(translator, sort_keys=True))}.json"
        self.translator = translator
        self.table: dict[str, dict[str, dict[str, str]]] = {}  # source -> target -> text -> translation
        if self.path.exists():
            try:
                self.table = read_json(self.path)["translations"]
            except (InputError, KeyError, TypeError):  # a damaged cache is rebuilt, never trusted
                self.table = {}

    def translate(
        self, texts: Sequence[str], source: str, target: str, translate: Callable[[list[str]], list[str]]
    ) -> list[str]:
        """``texts`` translated, each distinct text not in the cache once (in one call)."""
        known = self.table.setdefault(source, {}).setdefault(target, {})
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        if missing:
            known.update(zip(missing, translate(missing)))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            dump_json({"translator": self.translator, "translations": self.table}, self.path, indent=None)
        return [known[text] for text in texts]
