"""The papers' reported results (``leaderboard/reported/*.json``): every one names the exact scope it
was measured on, consistent with the task it is shown beside, its numbers are the paper's as
printed (checked against the papers' text where ``$HARNESS_PAPERS`` or ``$HARNESS_REAL_DATA/../papers``
has it; where the papers folder has no text of the tables, XTREME's, each result names the pinned
copies it was read from and its average is checked against its cells), and ``leaderboard show
--reported`` shows them apart from the ranked entries."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from harness import leaderboard
from harness.definitions.registry import Registry
from harness.errors import HarnessError, InputError
from harness.leaderboard.reported import Reported, ReportedResult, load_paper, load_reported

Cli = Callable[..., tuple[int, str, str]]
REPOSITORY = Path(__file__).resolve().parents[3]
SHIPPED = REPOSITORY / "leaderboard" / "reported"
REGISTRY = Registry.discover()

#: Each task's metrics as its results name them, with their unit and split, written out here (from
#: the official scorers' outputs) rather than read from the harness.
METRICS: dict[str, dict[str, str]] = {
    "lareqa": {"map": "fraction", "map@20": "fraction"},
    "mlqa-r": {"map": "fraction", "map@20": "fraction"},
    "xquad": {"f1": "percent", "exact_match": "percent"},
    "mlqa": {"f1": "percent", "exact_match": "percent"},
    "tydiqa": {"f1": "percent", "exact_match": "percent"},
    "xor-retrieve": {"r@2kt": "percent", "r@5kt": "percent"},
    "xor-engspan": {"f1": "percent", "em": "percent"},
    "xor-full": {"f1": "percent", "em": "percent", "bleu": "percent"},
    "mkqa": {
        "best_f1": "percent",
        "best_em": "percent",
        "best_answerable_f1": "percent",
        "best_unanswerable_em": "percent",
    },
    "tatoeba": {"accuracy": "percent"},
    "xnli": {"accuracy": "percent"},
    "pawsx": {"accuracy": "percent"},
    "panx": {"f1": "percent"},
}
#: TyDiQA-GoldP's one split is XTREME's test set: the GoldP v1.1 dev files.
SPLITS = {
    "lareqa": {"test"},
    "mlqa-r": {"dev", "test"},
    "xquad": {"test"},
    "mlqa": {"dev", "test"},
    "tydiqa": {"test"},
    "xor-retrieve": {"dev", "test"},
    "xor-engspan": {"dev", "test"},
    "xor-full": {"dev", "test"},
    "mkqa": {"test"},
    "tatoeba": {"test"},
    "xnli": {"dev", "test"},
    "pawsx": {"dev", "test"},
    "panx": {"dev", "test"},
}


def scope_errors(result: ReportedResult) -> list[str]:
    """What is wrong with a reported result's scope: a task the harness does not have, languages,
    split or a metric the task does not have, a unit that is not the metric's, a number outside
    its unit's range, a cell of a language (or pair) outside the result's languages."""
    entry = REGISTRY.tasks.entries.get(result.task)
    if entry is None or result.task not in METRICS:
        return [f"task {result.task!r} unknown"]
    errors = []
    declared = set(entry[0].languages)
    if not set(result.languages) <= declared:
        errors.append(f"languages {sorted(set(result.languages) - declared)} are not {result.task}'s")
    if result.split not in SPLITS[result.task]:
        errors.append(f"split {result.split!r} is not {result.task}'s")
    top = 1.0 if result.unit == "fraction" else 100.0
    for metric, reported in result.metrics().items():
        if METRICS[result.task].get(metric) != result.unit:
            errors.append(f"{metric} in {result.unit} is not a metric of {result.task}")
        for subset, value in ({"": reported.score} | reported.subsets).items():
            if value is not None and not 0 <= value <= top:
                errors.append(f"{metric} {subset} {value} outside 0-{top:g}")
            if subset and not set(subset.split("-")) <= set(result.languages):
                errors.append(f"{metric}: cell {subset!r} is not of the languages {','.join(result.languages)}")
    if result.score is None and not result.main.subsets:
        errors.append("neither a score nor cells")
    return errors


def test_every_shipped_reported_result_names_its_exact_scope() -> None:
    results = load_reported(SHIPPED)
    assert {r.paper.key for r in results} == {"lareqa", "mlqa", "mkqa", "xor-qa", "xtreme"}
    assert len(results) > 50
    assert {r.source: scope_errors(r) for r in results if scope_errors(r)} == {}
    for result in results:  # headline and cells of the task's whole language set, or said to be fewer
        if set(result.languages) != set(REGISTRY.tasks.entries[result.task][0].languages):
            assert result.note or result.task == "mlqa", result.source


def test_a_wrong_scope_is_caught(tmp_path: Path) -> None:
    """The check above can fail: an XQuAD F1 naming languages XQuAD lacks, in fractions, over 1."""
    raw = json.loads((SHIPPED / "mlqa.json").read_text(encoding="utf-8"))
    wrong = {
        **raw["results"][1],
        "task": "xquad",
        "languages": ["en", "xx"],
        "unit": "fraction",
        "subsets": {"en": 77.7, "xx": 64.3},
        "other_metrics": {},
    }
    (tmp_path / "mlqa.json").write_text(json.dumps({**raw, "results": [wrong]}), encoding="utf-8")
    (result,) = load_paper(tmp_path / "mlqa.json")
    assert scope_errors(result) == [
        "languages ['xx'] are not xquad's",
        "f1 in fraction is not a metric of xquad",
        "f1 en 77.7 outside 0-1",
        "f1 xx 64.3 outside 0-1",
    ]


#: Where a number read outside the papers folder may be read: a repository's file at a commit (the
#: copy does not change under the reference), or papers-with-code's data of the paper.
PINNED = re.compile(r"^https://(github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+|www\.wizwand\.com/paper/\w+)$")


def _decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text else 0


def average_errors(result: ReportedResult) -> list[str]:
    """Each metric whose headline is not the mean of its cells to the table's rounding: cells and
    average rounded to the last printed digit, so they may differ by one unit of it (half from the
    average, at most half from the cells' mean)."""
    errors = []
    for metric, reported in result.metrics().items():
        cells = list(reported.subsets.values())
        if reported.score is None or not cells:
            continue
        places = max(_decimals(v) for v in [reported.score, *cells])
        mean = sum(cells) / len(cells)
        if abs(mean - reported.score) > 10**-places + 1e-9:
            errors.append(f"{metric}: {reported.score} is not the mean of its cells ({mean:.3f})")
    return errors


def test_results_read_outside_the_papers_folder_name_pinned_copies_and_their_averages_add_up() -> None:
    """XTREME's tables are not in the papers folder: its numbers were read from repositories that
    quote them, so no test can read them back from the paper. What can be checked without it:
    each names where it was read (pinned), covers every language of its scope with a cell or says
    why not, and every printed average is the mean of its printed cells."""
    results = [r for r in load_reported(SHIPPED) if r.paper.text is None]
    assert {r.paper.key for r in results} == {"xtreme"} and len(results) >= 19
    assert [r.source for r in results if not all(PINNED.match(url) for url in r.read_from)] == []
    assert {r.task for r in results} >= {"xnli", "pawsx", "panx", "xquad", "mlqa", "tydiqa"}
    assert {r.source + " " + r.model: average_errors(r) for r in results if average_errors(r)} == {}
    for result in results:
        assert not result.main.subsets or list(result.main.subsets) == list(result.languages), result.model
        assert result.main.subsets or result.note, result.model  # a headline alone says where its cells are
    with_cells = [r for r in results if r.main.subsets]
    assert {(r.task, r.model) for r in with_cells} == {
        *(("pawsx", m) for m in ("mBERT", "XLM", "MMTE", "XLM-R Large")),
        *(("xquad", m) for m in ("mBERT", "XLM-R Large", "Translate-train mBERT", "Translate-test BERT-L")),
        ("mlqa", "XLM-R Large"),  # en and hi alone (the MuRIL card), beside Table 2's mean
        ("tydiqa", "XLM-R Large"),  # en, bn and te alone (likewise)
    }  # PAWS-X and XQuAD per language


def test_a_wrong_average_is_caught() -> None:
    """The check above can fail: XTREME's mBERT PAWS-X cells under a mean one point off."""
    (mbert,) = [r for r in load_reported(SHIPPED) if r.task == "pawsx" and r.model == "mBERT"]
    assert average_errors(mbert) == [] and average_errors(replace(mbert, main=Reported(82.0, mbert.main.subsets))) == []
    for wrong in (80.9, 82.2):
        assert average_errors(replace(mbert, main=Reported(wrong, mbert.main.subsets))) == [
            f"accuracy: {wrong} is not the mean of its cells (81.957)"
        ]


def test_a_paper_without_text_names_where_each_result_was_read(tmp_path: Path) -> None:
    raw = json.loads((SHIPPED / "xtreme.json").read_text(encoding="utf-8"))
    assert "text" not in raw["paper"]
    del raw["results"][2]["read_from"]
    (tmp_path / "xtreme.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(
        InputError,
        match=r"xtreme\.json: record results\.2 \(MMTE\): field 'read_from': the paper "
        r"names no text",
    ):
        load_reported(tmp_path)
    raw["results"][2]["read_from"] = ["http://example.com/not-https"]
    (tmp_path / "xtreme.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(HarnessError, match=r"xtreme\.json.*results\.2\.read_from\.0"):
        load_reported(tmp_path)


def test_a_paper_file_is_validated(tmp_path: Path) -> None:
    raw = json.loads((SHIPPED / "lareqa.json").read_text(encoding="utf-8"))
    raw["results"][0]["unit"] = "points"
    (tmp_path / "lareqa.json").write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(HarnessError, match=r"lareqa\.json.*results\.0\.unit"):
        load_reported(tmp_path)
    raw["results"][0]["unit"] = "fraction"
    (tmp_path / "other.json").write_text(json.dumps(raw), encoding="utf-8")
    (tmp_path / "lareqa.json").unlink()
    with pytest.raises(HarnessError, match=r"paper.key: 'lareqa' is not the file's name"):
        load_reported(tmp_path)


def _papers() -> Path | None:
    explicit = os.environ.get("HARNESS_PAPERS")
    if explicit:
        return Path(explicit)
    data = os.environ.get("HARNESS_REAL_DATA")
    return Path(data).parent / "papers" if data else None


NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def _numbers(line: str) -> list[float]:
    return [float(n) for n in NUMBER.findall(line)]


def _in_order(values: list[float], line: list[float]) -> bool:
    found = iter(line)
    return all(any(v == x for x in found) for v in values)


def _label(line: str) -> str:
    """A table row's label, as a language code compares with it (``Ar |``, ``zhcn\\t``: ar, zhcn)."""
    first = re.split(r"[\s|]+", line.strip(), maxsplit=1)[0]
    return first.lower()


@pytest.mark.skipif(
    _papers() is None or not _papers().is_dir(),
    reason="needs the papers' text ($HARNESS_PAPERS, or papers/ beside $HARNESS_REAL_DATA)",
)
def test_every_reported_number_is_printed_in_its_paper() -> None:
    """Each result's numbers, read back from the paper's text: the cells of one system in one
    printed row, in order (a table with a row per system), or each cell in the row of its language
    (a table with a row per language); the headline printed in the paper too."""
    folder = _papers()
    assert folder is not None
    unmatched = []
    for result in load_reported(SHIPPED):
        if result.paper.text is None:  # read elsewhere (``read_from``), checked above
            continue
        lines = (folder / result.paper.text).read_text(encoding="utf-8").splitlines()
        numbers = [_numbers(line) for line in lines]
        everything = {n for found in numbers for n in found}
        for metric, reported in result.metrics().items():
            cells = list(reported.subsets.values())
            headline = [] if reported.score is None else [reported.score]
            if reported.score is not None and reported.score not in everything:
                unmatched.append(f"{result.source} {result.model} {metric}: {reported.score}")
            if not cells or any(_in_order(cells + headline, found) or _in_order(cells, found) for found in numbers):
                continue
            for subset, value in reported.subsets.items():
                label = subset.replace("_", "")
                if "-" in subset:  # a G-XLT cell: the row of its context language, the column of its question's
                    context, question = subset.split("-")
                    row = [found for line, found in zip(lines, numbers) if _label(line) == context]
                    column = result.languages.index(question)
                    if not any(len(found) == len(result.languages) and found[column] == value for found in row):
                        unmatched.append(f"{result.source} {result.model} {metric} {subset}: {value}")
                elif not any(_label(line) == label and value in found for line, found in zip(lines, numbers)):
                    unmatched.append(f"{result.source} {result.model} {metric} {subset}: {value}")
    assert unmatched == [], unmatched


def test_show_reported_apart_from_the_ranked_entries(harness_cli: Cli, tmp_path: Path) -> None:
    board = tmp_path / "leaderboard.json"
    (tmp_path / "reported").mkdir()
    for name in ("lareqa.json", "mlqa.json"):
        (tmp_path / "reported" / name).write_bytes((SHIPPED / name).read_bytes())
    from tests.harness.leaderboard.boards import result_for

    leaderboard.add_result(board, result_for("ours", 42.0), Path("a.json"))
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--wide")
    assert code == 0, err
    assert "REPORTED" not in out and "X-Y" not in out  # only when asked
    code, out, err = harness_cli(
        "leaderboard", "show", "--leaderboard", board, "--reported", "--task", "lareqa", "--wide"
    )
    assert code == 0, err
    blocks = out.split("\n\n")
    assert blocks[0] == "(no entries for task 'lareqa')"
    assert all(
        block.startswith(
            "REPORTED lareqa (test) - map (fraction): as printed in the papers, no predictions, "
            "not re-scored, not ranked"
        )
        for block in blocks[1:]
    )
    table2 = blocks[1].splitlines()
    assert table2[1] == "scope: candidates=pair; 11 languages"
    assert [line.split()[:2] for line in table2[4:]] == [
        ["En-En", "0.29"],
        ["X-X", "0.23"],
        ["X-X-mono", "0.52"],
        ["X-Y", "0.66"],
        ["Translate-Test", "0.72"],
    ]
    assert "#" not in table2[2]  # no rank column
    mono = next(block for block in blocks if "pool=mono" in block).splitlines()
    assert mono[2].split()[:4] == ["system", "map", "ar", "de"]
    # Table 4 as printed (line 266 of the paper's text: 0.76 0.87 ... 0.80, the average last): to two places
    assert mono[4].split()[:4] == ["En-En", "0.80", "0.76", "0.87"]
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--reported", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert [g["entries"][0]["model"] for g in shown["groups"]] == ["ours"]
    assert len(shown["reported"]) == len(load_reported(tmp_path / "reported"))
    assert shown["reported"][0]["source"] == "Roy et al. 2020, Table 2"
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--reported", "--csv", "--model", "x-y")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split(",")[:3] == ["kind", "task", "task_options"]
    assert {line.split(",")[0] for line in lines[1:]} == {"reported"}  # "ours" is not X-Y
    assert "reported,mlqa-r,candidates=pair,dev" in out


def test_show_reported_xtreme_rows(harness_cli: Cli, tmp_path: Path) -> None:
    """XTREME's rows show beside the board as the others do, each naming where it was read."""
    (tmp_path / "reported").mkdir()
    (tmp_path / "reported" / "xtreme.json").write_bytes((SHIPPED / "xtreme.json").read_bytes())
    board = tmp_path / "leaderboard.json"
    from tests.harness.leaderboard.boards import result_for

    leaderboard.add_result(board, result_for("ours", 42.0), Path("a.json"))
    code, out, err = harness_cli(
        "leaderboard", "show", "--leaderboard", board, "--reported", "--task", "pawsx", "--wide"
    )
    assert code == 0, err
    block = out.split("\n\n")[1].splitlines()
    assert block[0].startswith("REPORTED pawsx (test) - accuracy (percent): as printed in the papers")
    assert block[1] == "scope: no options; languages en,de,es,fr,ja,ko,zh"
    assert block[2].split()[:4] == ["system", "accuracy", "en", "de"]
    assert [line.split()[:3] for line in block[4:]] == [
        ["mBERT", "81.9", "94.0"],  # as the table prints it, to one place (the JSON holds 94)
        ["XLM", "80.9", "94.0"],
        ["MMTE", "81.3", "93.1"],
        ["XLM-R", "Large", "86.4"],
    ]
    assert "Hu et al. 2020, per-language PAWS-X results (quoted by the ERNIE-M README)" in block[4]
    code, out, err = harness_cli(
        "leaderboard", "show", "--leaderboard", board, "--reported", "--task", "xquad", "--wide"
    )
    assert code == 0, err
    xquad = out.split("\n\n")[1].splitlines()
    assert xquad[1] == "scope: no options; incomplete: 11 of 12 languages (missing ro)"
    assert [line.split()[:3] for line in xquad[4:]] == [
        ["mBERT", "64.5", "83.5"],  # per language from the XQuAD README, en first as it prints them
        ["XLM", "59.8", "-"],  # Table 2's mean alone
        ["XLM-R", "Large", "76.6"],
        ["Translate-train", "mBERT", "70.0"],
        ["Translate-test", "BERT-L", "76.3"],
    ]
    code, out, err = harness_cli("leaderboard", "show", "--leaderboard", board, "--reported", "--json")
    assert code == 0, err
    shown = json.loads(out)["reported"]
    assert len(shown) == 23 and all(item["read_from"] for item in shown)
    assert shown[0]["source"] == "Hu et al. 2020, per-language PAWS-X results (quoted by the ERNIE-M README)"
