"""Fixtures of the retrieve-read tests: the stub reader registered, the corpus and data files written."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from harness.definitions.hookspecs import hookimpl
from harness.definitions.registry import Registry
from harness.definitions.specs import ModelSpec, PluginInfo
from tests.plugins.harness_opendomain.world import EN, ENGLISH, FI, JA, QUESTIONS, StubReader, translations_file


@pytest.fixture
def stub_reader(monkeypatch: pytest.MonkeyPatch) -> type[StubReader]:
    """Every registry lookup (the CLI's, and the pipeline's for its inner models) also knows
    ``stub-reader``."""
    registry = Registry.discover()
    spec = ModelSpec("stub-reader", f"{StubReader.__module__}:StubReader")
    plugin = types.SimpleNamespace(harness_models=hookimpl(lambda: [spec]))
    registry.add_plugin(plugin, PluginInfo("test-stub-reader"))
    monkeypatch.setattr(Registry, "discover", classmethod(lambda cls, group=None: registry))
    StubReader.calls.clear()
    return StubReader


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A folder corpus: en.tsv (DPR's layout), fi.jsonl and ja.jsonl."""
    folder = tmp_path / "wiki"
    folder.mkdir()
    (folder / "en.tsv").write_text(
        "id\ttext\ttitle\n" + "".join(f"{pid}\t{text}\t{title}\n" for pid, (text, title) in EN.items()),
        encoding="utf-8",
    )
    for lang, passages in (("fi", FI), ("ja", JA)):
        (folder / f"{lang}.jsonl").write_text(
            "".join(
                json.dumps({"id": pid, "text": text, "title": title}, ensure_ascii=False) + "\n"
                for pid, (text, title) in passages.items()
            ),
            encoding="utf-8",
        )
    return folder


@pytest.fixture
def xor_dir(tmp_path: Path) -> Path:
    """The four questions as official XOR-TyDi QA dev files (EnglishSpan and Full)."""
    folder = tmp_path / "xor"
    folder.mkdir()
    for name, column in (("xor_dev_retrieve_eng_span_v1_1.jsonl", 3), ("xor_dev_full_v1_1.jsonl", 4)):
        (folder / name).write_text(
            "".join(
                json.dumps(
                    {"id": q[0], "question": q[1], "answers": q[column], "lang": q[2], "split": "dev"},
                    ensure_ascii=False,
                )
                + "\n"
                for q in QUESTIONS
            ),
            encoding="utf-8",
        )
    return folder


@pytest.fixture
def question_translations(tmp_path: Path) -> Path:
    return translations_file(
        tmp_path / "questions-en.jsonl", [(lang, text, ENGLISH[qid]) for qid, text, lang, _, _ in QUESTIONS]
    )
