"""Paired comparison: McNemar, the sign-flip permutation test and Holm, against values worked
out by hand; `harness compare` end to end on two scorings where answers were flipped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.demo import FILE_NAME
from harness.errors import HarnessError
from harness.stats.bootstrap import BootstrapSettings
from harness.stats.paired import compare_tables, holm, mcnemar
from harness.stats.records import Instance, InstanceTable
from harness.stats.statistics import Macro, Mean, plain_mean

Cli = Callable[..., tuple[int, str, str]]


def _table(columns: dict[str, list[float]]) -> InstanceTable:
    return InstanceTable.from_instances(
        Instance(f"q{i}", unit, (unit,), None, None, {"em": v})
        for unit, values in columns.items()
        for i, v in enumerate(values)
    )


def test_mcnemar_exact_binomial_by_hand() -> None:
    # 3 discordant pairs, all for A: P(X = 0 or X = 3 | n = 3, 1/2) = 2 / 8
    assert mcnemar(np.array([1, 1, 1, 0, 1]), np.array([0, 0, 0, 0, 1])).p_value == 0.25
    # 5 for A, 1 for B: 2 * P(X <= 1 | n = 6) = 2 * (1 + 6) / 64
    test = mcnemar(np.array([1] * 5 + [0] + [1] * 4), np.array([0] * 5 + [1] + [1] * 4))
    assert (test.a_only, test.b_only, test.p_value) == (5, 1, 14 / 64)
    assert mcnemar(np.ones(4), np.ones(4)).p_value == 1.0


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3 * 0.01, max(0.03, 2 * 0.03), max(0.06, 1 * 0.04)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == [1.0, 1.0]


def test_exact_permutation_and_mcnemar_of_a_small_row() -> None:
    """A right on 3 of 4 questions where B is wrong on all: of the 16 swap patterns, those that
    give |difference| >= 75 put the 3 differing questions on one side: 2 x 2 of 16 = 0.25."""
    a, b = _table({"xx": [1.0, 1.0, 1.0, 0.0]}), _table({"xx": [0.0, 0.0, 0.0, 0.0]})
    (row,) = compare_tables(a, b, {"xx": {"exact_match": Mean("xx", "em", binary=True)}}, BootstrapSettings(500))
    assert (row.a, row.b, row.difference) == (75.0, 0.0, 75.0)
    assert row.p_permutation == 0.25 and row.permutation == "exact (16 swaps)"
    assert row.mcnemar is not None and row.mcnemar.p_value == 0.25
    assert row.interval is not None and 0.0 <= row.interval[0] <= row.interval[1] <= 100.0


def test_permutation_of_a_macro_row_over_two_units() -> None:
    """Mean of two units' means: unit x differs on 1 of 2 questions (weight 1/2 per question in
    its mean), unit y on 1 of 3 (1/3): |T| = 100 * (1/2 + 1/3) / 2 needs both flips to agree,
    2 of the 4 sign patterns of the two differing questions: p = 0.5 (exact, 2**5 swaps)."""
    a, b = _table({"x": [1.0, 0.0], "y": [1.0, 1.0, 0.0]}), _table({"x": [0.0, 0.0], "y": [0.0, 1.0, 0.0]})
    statistic = Macro((Mean("x", "em", binary=True), Mean("y", "em", binary=True)), plain_mean)
    (row,) = compare_tables(a, b, {"mean": {"exact_match": statistic}}, BootstrapSettings(200))
    assert row.difference == pytest.approx(100 * (1 / 2 + 1 / 3) / 2)
    assert (row.p_permutation, row.permutation) == (0.5, "exact (32 swaps)")
    assert row.mcnemar is not None and (row.mcnemar.a_only, row.mcnemar.b_only) == (2, 0)


def test_monte_carlo_permutation_for_large_rows_is_seeded() -> None:
    rng = np.random.default_rng(1)
    a = _table({"xx": list((rng.random(200) < 0.6).astype(float))})
    b = _table({"xx": list((rng.random(200) < 0.5).astype(float))})
    rows = {"xx": {"exact_match": Mean("xx", "em", binary=True)}}
    first = compare_tables(a, b, rows, BootstrapSettings(400, seed=3))[0]
    again = compare_tables(a, b, rows, BootstrapSettings(400, seed=3))[0]
    assert first == again and first.permutation == "monte carlo (400 swaps)"
    assert 1 / 401 <= first.p_permutation <= 1


def test_different_questions_are_refused() -> None:
    with pytest.raises(HarnessError, match="different questions in unit xx"):
        compare_tables(
            _table({"xx": [1.0, 0.0]}),
            InstanceTable.from_instances(
                [
                    Instance("q0", "xx", ("xx",), None, None, {"em": 1.0}),
                    Instance("other", "xx", ("xx",), None, None, {"em": 1.0}),
                ]
            ),
            {"xx": {"em": Mean("xx", "em")}},
            BootstrapSettings(10),
        )


# -- harness compare end to end -------------------------------------------------------------------


def _predictions(folder: Path, name: str, flipped: int, limit: int, lang: str = "en") -> Path:
    """Gold answers of the demo ``lang`` file's first ``limit`` questions, ``flipped`` made wrong."""
    demo = json.loads(
        (
            Path(__file__).resolve().parents[3] / "harness" / "demo" / "parallel-qa" / FILE_NAME.format(lang=lang)
        ).read_text(encoding="utf-8")
    )
    qas = [qa for article in demo["data"] for p in article["paragraphs"] for qa in p["qas"]][:limit]
    answers = {qa["id"]: qa["answers"][0]["text"] for qa in qas}
    for qid in list(answers)[:flipped]:
        answers[qid] = "certainly not this"
    path = folder / name
    path.write_text(json.dumps(answers), encoding="utf-8")
    return path


def _score(harness_cli: Cli, predictions: Path, *extra: str) -> Path:
    code, out, err = harness_cli("score", "xquad", "--langs", "en", "--predictions", predictions, *extra)
    assert code == 0, err
    return Path(next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("result: ")))


def test_compare_cli_gives_the_hand_computed_p_values(harness_cli: Cli, tmp_path: Path) -> None:
    """B is A with 3 of 10 answers wrong: EM and F1 differ by 30 points on exactly 3 questions,
    so the exact sign-flip p is 2 / 8 = 0.25 and McNemar's (b = 3, c = 0) 0.25 too."""
    a = _score(harness_cli, _predictions(tmp_path, "a.json", 0, 10), "--limit", "10")
    b = _score(harness_cli, _predictions(tmp_path, "b.json", 3, 10), "--limit", "10")
    code, out, err = harness_cli("compare", a, b, "--json", "--holm")
    assert code == 0, err
    rows = {(r["subset"], r["metric"]): r for r in json.loads(out)["rows"]}
    em = rows[("en", "exact_match")]
    assert (em["a"], em["b"], em["difference"]) == (100.0, 70.0, 30.0)
    assert em["p_permutation"] == 0.25 and em["permutation"] == "exact (1024 swaps)"
    assert em["mcnemar"] == {"a_only": 3, "b_only": 0, "p_value": 0.25}
    assert em["p_holm"] == 0.25  # one language: Holm changes nothing
    assert rows[("en", "f1")]["p_permutation"] == 0.25 and rows[("en", "f1")]["mcnemar"] is None
    assert rows[("mean", "f1")]["difference"] == 30.0 and rows[("mean", "f1")]["p_holm"] is None
    low, high = em["interval"]
    assert 0.0 <= low <= 30.0 <= high <= 60.0  # the paired differences are 0 or 100 on 10 questions

    code, out, _ = harness_cli("compare", a, b)
    assert code == 0 and "p (McNemar)" in out and "0.25" in out

    out = harness_cli("leaderboard", "show")[1]
    assert "100.00 [100.00, 100.00]" in out  # A's main score with its interval, in F1's one format


@pytest.mark.parametrize(
    ("extra", "differs"),
    [
        (("--limit", "9"), "limit (10 vs 9)"),
        (
            ("--limit", "10", "--input-rules", "official"),
            "scorer signature (squad-v1.1|norm:ascii-english|em+f1|avg:mean vs "
            "squad-v1.1|norm:ascii-english|em+f1|avg:mean|input:official)",
        ),
    ],
)
def test_compare_refuses_runs_that_score_different_things(
    harness_cli: Cli, tmp_path: Path, extra: tuple[str, ...], differs: str
) -> None:
    a = _score(harness_cli, _predictions(tmp_path, "a.json", 0, 10), "--limit", "10")
    b = _score(harness_cli, _predictions(tmp_path, "b.json", 3, 10), *extra)
    code, out, err = harness_cli("compare", a, b)
    assert code == 2 and out == ""
    assert err == f"error: cannot compare: the runs differ in {differs}\n"


def test_compare_names_the_languages_that_differ(harness_cli: Cli, tmp_path: Path) -> None:
    """Other languages read other files: the refusal names the languages, not the fingerprint."""
    a = _score(harness_cli, _predictions(tmp_path, "a.json", 0, 10), "--limit", "10")
    folder = tmp_path / "b"
    folder.mkdir()
    for lang in ("en", "de", "es"):  # one file per language (the demo's ids are the same in each)
        _predictions(folder, f"{lang}.json", 0, 10, lang)
    b = _score(harness_cli, folder, "--limit", "10", "--langs", "en,de,es")
    code, out, err = harness_cli("compare", a, b)
    assert code == 2 and out == ""
    assert err == "error: cannot compare: the runs differ in languages (only B has de, es)\n"


def test_compare_refuses_edited_instances(harness_cli: Cli, tmp_path: Path) -> None:
    a = _score(harness_cli, _predictions(tmp_path, "a.json", 0, 10), "--limit", "10")
    b = _score(harness_cli, _predictions(tmp_path, "b.json", 3, 10), "--limit", "10")
    instances = b.parent / "instances.jsonl"
    instances.write_text(
        instances.read_text(encoding="utf-8").replace('"exact_match":0.0', '"exact_match":1.0'), encoding="utf-8"
    )
    code, _, err = harness_cli("compare", a, b)
    assert code == 2 and "instances.jsonl: not the file this result wrote" in err and err.count("\n") == 1


def test_compare_scores_predictions_again_where_the_instances_are_not_shipped(harness_cli: Cli, tmp_path: Path) -> None:
    """The shipped board keeps predictions, not per-instance records: without B's records beside
    it, B's predictions are scored again, and the comparison is the one its records gave (B is A
    with 3 of 10 answers wrong, as above: 30 points of EM, exact p 0.25)."""
    a = _score(harness_cli, _predictions(tmp_path, "a.json", 0, 10), "--limit", "10")
    b = _score(harness_cli, _predictions(tmp_path, "b.json", 3, 10), "--limit", "10")
    with_records = json.loads(harness_cli("compare", a, b, "--json")[1])
    (b.parent / "instances.jsonl").unlink()
    code, out, err = harness_cli("compare", a, b, "--json")
    assert code == 0, err
    assert json.loads(out) == with_records
    em = next(r for r in json.loads(out)["rows"] if (r["subset"], r["metric"]) == ("en", "exact_match"))
    assert (em["difference"], em["p_permutation"]) == (30.0, 0.25)

    (b.parent / "predictions" / "en.json").write_text(json.dumps({"edited": "after scoring"}), encoding="utf-8")
    code, out, err = harness_cli("compare", a, b)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "changed after it was scored" in err
