"""Passage collections are streamed: every row read back by position or in order equals a plain
csv/json reading of the file, the fingerprint follows the bytes, and bad rows are one line naming
the file, the line and the field."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from harness.data import passages as passages_module
from harness.data.passages import Passage, read_passages
from harness.errors import HarnessError, InputError

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "passages" / "psgs_w100-sample.tsv"


def plain_reading(path: Path) -> list[Passage]:
    """The file read whole as DPR reads psgs_w100.tsv: csv, tab-delimited, header first."""
    with open(path, encoding="utf-8", newline="") as handle:
        return [Passage(row["id"], row["title"], row["text"], "en") for row in csv.DictReader(handle, delimiter="\t")]


def test_the_official_layout_reads_as_csv_reads_it() -> None:
    expected = plain_reading(SAMPLE)
    assert len(expected) == 6
    passages = read_passages(SAMPLE)
    assert len(passages) == 6
    assert list(passages) == expected
    assert [passages.passage(i) for i in (5, 0, 3)] == [expected[5], expected[0], expected[3]]
    assert list(passages.stream(2, 4)) == expected[2:4]
    assert passages.texts[1:3] == [p.text for p in expected[1:3]]
    assert passages.titles[4] == "Saari (province)" and passages.ids[0] == "1"
    assert '"the Well"' in passages.texts[0]  # the doubled quotes of the official quoting, undone
    corpus = passages.as_corpus()
    assert list(corpus.texts) == [(p.title, p.text) for p in expected] and list(corpus.langs) == ["en"] * 6


def test_a_folder_holds_one_file_per_language_english_first(tmp_path: Path) -> None:
    shutil.copy(SAMPLE, tmp_path / "en.tsv")
    rows = [
        {"id": 1, "title": "ヴェッラモ湖", "text": "ヴェッラモ湖は湖です。"},
        {"id": "2", "title": "T", "text": "x\ty"},
    ]
    (tmp_path / "ja.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n", encoding="utf-8"
    )
    passages = read_passages(tmp_path)
    assert len(passages) == 8
    assert passages.ids[6:] == ["ja:1", "ja:2"] and passages.langs[5:] == ["en", "ja", "ja"]
    assert list(passages.langs) == ["en"] * 6 + ["ja"] * 2
    assert passages.passage(7) == Passage("ja:2", "T", "x\ty", "ja")
    assert list(passages.stream(5, 7)) == [
        plain_reading(SAMPLE)[5],
        Passage("ja:1", "ヴェッラモ湖", "ヴェッラモ湖は湖です。", "ja"),
    ]


def test_the_fingerprint_follows_the_bytes_not_the_path(tmp_path: Path) -> None:
    copy = tmp_path / "copy.tsv"
    shutil.copy(SAMPLE, copy)
    assert read_passages(copy).fingerprint == read_passages(SAMPLE).fingerprint
    copy.write_text(SAMPLE.read_text(encoding="utf-8").replace("212 square", "213 square"), encoding="utf-8")
    assert read_passages(copy).fingerprint != read_passages(SAMPLE).fingerprint
    passages = read_passages(SAMPLE)
    assert passages.as_corpus(True).fingerprint != passages.as_corpus(False).fingerprint


def test_a_file_changed_after_the_scan_is_refused(tmp_path: Path) -> None:
    copy = tmp_path / "psgs.tsv"
    shutil.copy(SAMPLE, copy)
    passages = read_passages(copy)
    copy.write_text(copy.read_text(encoding="utf-8").replace("Lake", "Loch"), encoding="utf-8")
    os.utime(copy, ns=(1, 1))
    with pytest.raises(HarnessError, match="changed while the run was reading it"):
        passages.passage(0)


def test_ids_are_compared_not_only_their_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every id hashing alike (a collision on each pair) is no error: the ids are read back."""
    monkeypatch.setattr(passages_module, "hash", lambda text: 7, raising=False)
    assert len(read_passages(SAMPLE)) == 6


def _with_line(tmp_path: Path, line: bytes, after: int = 3) -> Path:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "psgs.tsv"
    path.write_bytes(b"".join(lines[:after] + [line] + lines[after:]))
    return path


@pytest.mark.parametrize(
    "line, message",
    [
        (b"7\tNo title here\n", "record line 4: field 'title': has 2 of the 3 tab-separated columns"),
        (b'7\t"text"\ttitle\textra\n', "record line 4: has 4 tab-separated columns, the header 3"),
        (b'7\t"caf\xe9 au lait"\tCafe\n', "record line 4: is not UTF-8 (byte 7 of the line)"),
        (b'5\t"Another passage."\tCopy\n', "record line 7: field 'id': passage id '5' appears twice"),
    ],
)
def test_a_bad_row_is_named_by_file_line_and_field(tmp_path: Path, line: bytes, message: str) -> None:
    path = _with_line(tmp_path, line)
    with pytest.raises(InputError) as caught:
        read_passages(path)
    assert str(caught.value) == f"{path}: {message}"


def test_a_repeated_id_is_named_at_its_second_line_across_files(tmp_path: Path) -> None:
    (tmp_path / "fi.jsonl").write_text(
        json.dumps({"id": 1, "title": "A", "text": "a"})
        + "\n"
        + json.dumps({"id": 2, "title": "B", "text": "b"})
        + "\n"
        + json.dumps({"id": "1", "title": "C", "text": "c"})
        + "\n",
        encoding="utf-8",
    )
    shutil.copy(SAMPLE, tmp_path / "en.tsv")  # en:1 and fi:1 are different passages
    with pytest.raises(InputError, match=r"fi.jsonl: record line 3: field 'id': passage id '1' appears twice$"):
        read_passages(tmp_path)


def test_a_gzipped_corpus_is_refused_with_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "psgs_w100.tsv.gz"
    path.write_bytes(b"")
    with pytest.raises(HarnessError, match="decompress it first"):
        read_passages(path)


@pytest.mark.parametrize(
    "line, message",
    [
        (b'7\t"caf\xe9"\tCafe\n', "record line 8: is not UTF-8 (byte 7 of the line)"),
        (b"7\tNo title here\n", "record line 8: field 'title': has 2 of the 3 tab-separated columns"),
        (b'2\t"Again."\tCopy\n', "record line 8: field 'id': passage id '2' appears twice"),
    ],
)
def test_bad_corpus_input_through_the_command_line_writes_nothing(
    harness_cli, tmp_path: Path, line: bytes, message: str
) -> None:
    """One line naming file and line, exit 2, and no index folder left behind."""
    xor = tmp_path / "xor"
    xor.mkdir()
    question = {"id": "1", "question": "Missä Vellamo on?", "answers": ["Saari"], "lang": "fi", "split": "dev"}
    (xor / "xor_dev_retrieve_eng_span_v1_1.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    corpus = _with_line(tmp_path, line, after=7)
    index = tmp_path / "bm25-index"
    code, out, err = harness_cli(
        "run",
        f"xor-retrieve:corpus={corpus}",
        f"bm25:index_dir={index}",
        "--data-dir",
        xor,
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 2 and err == f"error: {corpus}: {message}\n"
    assert not index.exists()
