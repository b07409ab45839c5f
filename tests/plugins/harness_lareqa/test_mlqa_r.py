"""MLQA-R built from MLQA files: the pool, the correct answers across languages, the layouts, bad
input, and the real MLQA dev set against the LAReQA paper's Table 1.

The analyses of an MLQA-R run are checked against the per-question reference in test_analyses.py
(on the fixture below and on real MLQA dev).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from harness.data.sentences import split_sentences
from harness.definitions.task import DataRequest
from harness.errors import HarnessError, InputError
from harness.running import planning, settings
from harness_lareqa.mlqa_r import MLQAR

#: Per language: paragraphs of (context, [(MLQA id, answer start)]). "a1" is asked in 3 languages,
#: "b1" in 2, "c1" in English only; "d1"'s answer starts on the space between two sentences.
FIXTURE: dict[str, list[tuple[str, list[tuple[str, int]]]]] = {
    "en": [
        ("The river rises in the hills. It flows north for 200 km. Brown mapped it in 1850.", [("a1", 49)]),
        ("The town has a market. The market opens on Mondays.", [("b1", 43), ("c1", 15)]),
    ],
    "de": [
        ("Der Fluss entspringt in den Hügeln. Er fließt 200 km nach Norden. Brown kartierte ihn 1850.", [("a1", 46)]),
        ("Die Stadt hat einen Markt. Der Markt öffnet montags.", [("b1", 44), ("d1", 26)]),
    ],
    "zh": [("河流发源于山丘。它向北流200公里。布朗在1850年绘制了地图。", [("a1", 12)])],
}


def write_mlqa_fixture(folder: Path) -> Path:
    """The FIXTURE as MLQA's official layout (``MLQA_V1/dev/dev-context-{l}-question-{l}.json``)."""
    split = folder / "MLQA_V1" / "dev"
    split.mkdir(parents=True, exist_ok=True)
    for lang, paragraphs in FIXTURE.items():
        doc = {
            "version": 1.0,
            "data": [
                {
                    "title": "t",
                    "paragraphs": [
                        {
                            "context": context,
                            "qas": [
                                {
                                    "id": qid,
                                    "question": f"{qid} in {lang}?",
                                    "answers": [{"text": context[start : start + 3], "answer_start": start}],
                                }
                                for qid, start in qas
                            ],
                        }
                        for context, qas in paragraphs
                    ],
                }
            ],
        }
        (split / f"dev-context-{lang}-question-{lang}.json").write_text(
            json.dumps(doc, ensure_ascii=False), encoding="utf-8"
        )
    return folder


def test_the_pool_is_every_sentence_and_the_answers_are_parallel(tmp_path: Path) -> None:
    data = MLQAR().load(DataRequest(write_mlqa_fixture(tmp_path), "dev"))
    assert data.languages == ("de", "en", "zh")  # the task's order, the languages that have a file
    assert data.pool.ids == [
        "de_1_0",
        "de_1_1",
        "de_1_2",
        "de_2_0",
        "de_2_1",
        "en_1_0",
        "en_1_1",
        "en_1_2",
        "en_2_0",
        "en_2_1",
        "zh_1_0",
        "zh_1_1",
        "zh_1_2",
    ]
    assert data.pool.sentences[5:10] == [
        "The river rises in the hills.",
        "It flows north for 200 km.",
        "Brown mapped it in 1850.",
        "The town has a market.",
        "The market opens on Mondays.",
    ]
    assert data.pool.sentences[10:] == ["河流发源于山丘。", "它向北流200公里。", "布朗在1850年绘制了地图。"]
    targets = {xid: sorted(data.pool.ids[t] for t in positions) for xid, positions in data.targets.items()}
    assert targets == {"a1": ["de_1_1", "en_1_1", "zh_1_1"], "b1": ["de_2_1", "en_2_1"], "c1": ["en_2_0"]}
    assert [q.uid for q in data.questions] == ["a1_de", "b1_de", "a1_en", "b1_en", "c1_en", "a1_zh"]
    assert data.skipped == 1  # d1: its answer starts between two sentences
    assert data.statistics["candidates_per_language"] == {"de": 5, "en": 5, "zh": 3}
    assert data.statistics["correct_per_question"] == {
        "min": 1,
        "max": 3,
        "mean": round((3 + 2 + 3 + 2 + 1 + 3) / 6, 4),
    }
    assert data.statistics["sentence_splitter"].startswith("sentencex ")


def test_sentence_offsets_leave_out_the_whitespace_around_sentences() -> None:
    context = "  Dr. Smith arrived.  He left.\n"
    assert split_sentences(context, "en") == [(2, 20), (22, 30)]
    assert [context[s:e] for s, e in split_sentences(context, "en")] == ["Dr. Smith arrived.", "He left."]


@pytest.mark.parametrize("where", [".", "MLQA_V1", "MLQA_V1/dev"])
def test_data_dir_may_name_the_release_folder_or_the_split(tmp_path: Path, where: str) -> None:
    write_mlqa_fixture(tmp_path)
    data = MLQAR().load(DataRequest(tmp_path / where, "dev"))
    assert len(data.pool.ids) == 13


def test_missing_files_and_bad_records_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"no mlqa-r files in .*expected .*dev-context-\{lang\}-question-\{lang\}"):
        MLQAR().load(DataRequest(tmp_path, "dev"))
    write_mlqa_fixture(tmp_path)
    path = tmp_path / "MLQA_V1" / "dev" / "dev-context-en-question-en.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["data"][0]["paragraphs"][1]["qas"][0]["answers"][0]["answer_start"] = "43"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        MLQAR().load(DataRequest(tmp_path, "dev"))
    message = str(caught.value)
    assert str(path) in message and "data[0].paragraphs[1].qas[0]" in message and "answer_start" in message


def test_without_a_data_dir_the_run_asks_for_one() -> None:
    with pytest.raises(HarnessError, match="no built-in demo data; pass --data-dir"):
        planning.load_data(MLQAR(), settings.DataOptions())


#: The LAReQA paper's Table 1, MLQA-R column (questions, candidates per language).
TABLE_1 = {
    "ar": (517, 2545),
    "de": (512, 2362),
    "en": (1148, 6264),
    "es": (500, 1787),
    "hi": (507, 2426),
    "vi": (511, 2828),
    "zh": (504, 2322),
}
#: The candidates sentencex 1.0.32 gives (the paper's splitter is not public; README).
CANDIDATES = {"ar": 2461, "de": 2446, "en": 6730, "es": 2078, "hi": 2337, "vi": 2878, "zh": 2290}


def test_real_mlqa_dev_gives_the_papers_questions_and_every_parallel_answer(real_data: Path) -> None:
    data = planning.load_data(MLQAR(), settings.DataOptions(data_dir=real_data))
    stats = data.statistics
    assert stats["questions_per_language"] == {lang: q for lang, (q, _) in TABLE_1.items()}
    assert stats["candidates_per_language"] == CANDIDATES
    assert stats["skipped_questions"] == 0
    assert (stats["correct_per_question"]["min"], stats["correct_per_question"]["max"]) == (2, 4)  # paper: 2-4
    # independently: the languages of a question's answers are those whose file has its id
    languages_of: dict[str, set[str]] = defaultdict(set)
    for lang in TABLE_1:
        doc: dict[str, Any] = json.loads(
            (real_data / "mlqa" / "MLQA_V1" / "dev" / f"dev-context-{lang}-question-{lang}.json").read_text(
                encoding="utf-8"
            )
        )
        for article in doc["data"]:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    languages_of[qa["id"]].add(lang)
    assert {xid: {data.pool.langs[t] for t in positions} for xid, positions in data.targets.items()} == languages_of
