"""Intervals and paired tests on parallel data: clusters (a question and its translations)
resampled whole, against a straightforward reference loop, against the within-unit bootstrap
where every cluster is one question, and against p-values worked out by hand; the record a
result keeps of what each interval resampled."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from harness.results.result import RunResult, read_result
from harness.stats.bootstrap import INSTANCE, BootstrapSettings, resample, row_intervals, unit_draws
from harness.stats.clusters import Clusters
from harness.stats.paired import compare_tables
from harness.stats.records import Instance, InstanceTable
from harness.stats.statistics import Macro, Mean, Pooled, plain_mean
from harness.stats.strata import stratify

Cli = Callable[..., tuple[int, str, str]]
QUESTION = Clusters("question id")


def _table(units: dict[str, Sequence[tuple[str, float]]]) -> InstanceTable:
    """Units of ``(id, value)`` instances, the values under metric ``v``."""
    return InstanceTable.from_instances(
        Instance(qid, unit, (unit,), None, None, {"v": value}) for unit, items in units.items() for qid, value in items
    )


def _rows(units: Sequence[str], clusters: Clusters | None) -> dict[str, dict[str, object]]:
    parts = tuple(Mean(u, "v") for u in units)
    return {
        "mean": {"v": Macro(parts, plain_mean, clusters=clusters)},
        "all": {"v": Pooled(parts, clusters)},
        **{u: {"v": part} for u, part in zip(units, parts)},
    }


def _reference_samples(
    units: dict[str, Sequence[tuple[str, float]]], settings: BootstrapSettings
) -> tuple[list[float], list[float]]:
    """The cluster bootstrap written out plainly: clusters are the ids; clusters present in the
    same units as often are one stratum (strata and clusters in order of first appearance); each
    stratum draws ``rng.integers(0, size, (R, size))`` in turn from ``default_rng(seed)``; a
    resample of a unit is, stratum by stratum, every instance in it of every drawn cluster. The
    macro mean (mean of unit means x 100) and the pooled mean of each resample."""
    members: dict[str, dict[str, list[float]]] = {}
    for unit, items in units.items():
        for qid, value in items:
            members.setdefault(qid, {}).setdefault(unit, []).append(value)
    strata: dict[tuple, list[str]] = {}
    for qid, by_unit in members.items():
        strata.setdefault(tuple((u, len(v)) for u, v in by_unit.items()), []).append(qid)
    rng = np.random.default_rng(settings.seed)
    drawn = [rng.integers(0, len(ids), (settings.resamples, len(ids))) for ids in strata.values()]
    macro, pooled = [], []
    for b in range(settings.resamples):
        values: dict[str, list[float]] = {unit: [] for unit in units}
        for ids, draws in zip(strata.values(), drawn):
            for j in draws[b]:
                for unit, unit_values in members[ids[j]].items():
                    values[unit].extend(unit_values)
        macro.append(sum(100.0 * sum(v) / len(v) for v in values.values()) / len(values))
        pooled.append(100.0 * sum(sum(v) for v in values.values()) / sum(len(v) for v in values.values()))
    return macro, pooled


def _parallel_units(seed: int) -> dict[str, list[tuple[str, float]]]:
    """Three languages of 40 questions, unbalanced as MLQA: q0-q24 everywhere, q25-q32 in x and
    y only, q33-q39 in x only; z holds q5 twice (a question asked two ways); per-question values
    correlated across languages."""
    rng = np.random.default_rng(seed)
    ability = rng.random(40)
    units: dict[str, list[tuple[str, float]]] = {"x": [], "y": [], "z": []}
    for i in range(40):
        languages = "xyz" if i < 25 else "xy" if i < 33 else "x"
        for unit in languages:
            units[unit].append((f"q{i}", float(rng.random() < ability[i])))
    units["z"].insert(3, ("q5", 1.0))
    return units


def test_cluster_bootstrap_equals_the_reference_loop() -> None:
    units = _parallel_units(3)
    settings = BootstrapSettings(400, seed=7)
    intervals = row_intervals(_table(units), _rows(list(units), QUESTION), settings)
    macro, pooled = _reference_samples(units, settings)
    assert intervals["mean"]["v"] == pytest.approx(tuple(np.percentile(macro, [2.5, 97.5])), abs=1e-9, rel=0)
    assert intervals["all"]["v"] == pytest.approx(tuple(np.percentile(pooled, [2.5, 97.5])), abs=1e-9, rel=0)
    assert intervals["mean"].resampled == intervals["all"].resampled == "question id"


def test_unit_rows_keep_their_within_unit_draws() -> None:
    """A language's row reads the within-unit draws whether or not the aggregates cluster."""
    units = _parallel_units(4)
    settings = BootstrapSettings(300, seed=1)
    clustered = row_intervals(_table(units), _rows(list(units), QUESTION), settings)
    within = row_intervals(_table(units), _rows(list(units), None), settings)
    for unit in units:
        assert clustered[unit] == within[unit] and clustered[unit].resampled == INSTANCE
    assert within["mean"].resampled == INSTANCE and clustered["mean"] != within["mean"]


def test_independent_data_agrees_with_the_within_unit_bootstrap() -> None:
    """Where no id is shared across languages every cluster is one question: the strata are the
    units and the draws are the within-unit ones, number for number."""
    rng = np.random.default_rng(5)
    units = {
        u: [(f"{u}{i}", float(v)) for i, v in enumerate(rng.random(n))] for u, n in (("a", 30), ("b", 55), ("c", 8))
    }
    table = _table(units)
    settings = BootstrapSettings(500, seed=11)
    clustered = resample(
        [table], [_rows(list(units), QUESTION)["mean"]["v"], _rows(list(units), QUESTION)["all"]["v"]], settings
    )[0]
    within = resample([table], [_rows(list(units), None)["mean"]["v"], _rows(list(units), None)["all"]["v"]], settings)[
        0
    ]
    assert all(np.array_equal(c, w) for c, w in zip(clustered, within))
    strata = stratify(table, QUESTION).strata
    assert [list(s.members) for s in strata] == [["a"], ["b"], ["c"]] and [s.size for s in strata] == [30, 55, 8]


def test_the_aggregate_interval_on_parallel_data_is_that_of_one_language_when_all_agree() -> None:
    """A model right on a question in every language or in none: the mean over 4 languages is
    the mean over the questions, so its interval must be as wide as one language's (the same
    draws: one stratum drawn first, as the first unit's within-unit draws). Resampled within each
    language, as before, it came out about half as wide (sqrt(4))."""
    rng = np.random.default_rng(9)
    right = rng.random(200) < 0.6
    units = {lang: [(f"q{i}", float(r)) for i, r in enumerate(right)] for lang in ("ar", "de", "en", "zh")}
    intervals = row_intervals(_table(units), _rows(list(units), QUESTION), BootstrapSettings(1000, seed=2))
    assert intervals["mean"]["v"] == pytest.approx(intervals["ar"]["v"], abs=1e-9, rel=0)
    assert intervals["all"]["v"] == pytest.approx(intervals["ar"]["v"], abs=1e-9, rel=0)
    before = row_intervals(_table(units), _rows(list(units), None), BootstrapSettings(1000, seed=2))["mean"]["v"]
    assert 1.7 < (intervals["mean"]["v"][1] - intervals["mean"]["v"][0]) / (before[1] - before[0]) < 2.3


def test_cluster_draws_reproduce_the_first_units_draws_where_every_language_has_every_question() -> None:
    units = {lang: [(f"q{i}", 0.0) for i in range(17)] for lang in ("en", "de")}
    table = _table(units)
    settings = BootstrapSettings(20, seed=4)
    (first, unit_matrix), _ = list(unit_draws(table, settings))
    assert first == "en" and np.array_equal(stratify(table, QUESTION).index_matrix("de", [unit_matrix]), unit_matrix)


# -- paired tests ---------------------------------------------------------------------------------


def test_exact_permutation_swaps_a_question_in_every_language_by_hand() -> None:
    """A right on q0 and q1 in both languages, B on none: the mean differs by 66.7 points. With
    q0-q2 swapped whole (2**3 patterns), |T| >= 66.7 needs q0 and q1 on one side: 2 x 2 of 8 =
    0.5. Swapped question by question (2**6), all four differing instances on one side: 2 x 4 of
    64 = 0.125 -- what a within-language test claims."""
    a = _table({u: [("q0", 1.0), ("q1", 1.0), ("q2", 0.0)] for u in ("en", "de")})
    b = _table({u: [("q0", 0.0), ("q1", 0.0), ("q2", 0.0)] for u in ("en", "de")})
    (clustered,) = compare_tables(
        a, b, {"mean": {"v": _rows(["en", "de"], QUESTION)["mean"]["v"]}}, BootstrapSettings(50)
    )
    (within,) = compare_tables(a, b, {"mean": {"v": _rows(["en", "de"], None)["mean"]["v"]}}, BootstrapSettings(50))
    assert clustered.difference == within.difference == pytest.approx(200 / 3)
    assert (clustered.p_permutation, clustered.permutation, clustered.resampled) == (
        0.5,
        "exact (8 swaps)",
        "question id",
    )
    assert (within.p_permutation, within.permutation, within.resampled) == (0.125, "exact (64 swaps)", INSTANCE)


def test_monte_carlo_swaps_of_independent_data_are_the_within_unit_ones() -> None:
    """Where every cluster is one question: the same swaps, and McNemar still applies."""
    rng = np.random.default_rng(6)
    units_a = {u: [(f"{u}{i}", float(rng.random() < 0.6)) for i in range(40)] for u in ("a", "b")}
    units_b = {u: [(qid, float(rng.random() < 0.5)) for qid, _ in items] for u, items in units_a.items()}
    settings = BootstrapSettings(300, seed=8)
    parts = (Mean("a", "v", binary=True), Mean("b", "v", binary=True))
    (clustered,) = compare_tables(
        _table(units_a), _table(units_b), {"mean": {"v": Macro(parts, plain_mean, clusters=QUESTION)}}, settings
    )
    (within,) = compare_tables(_table(units_a), _table(units_b), {"mean": {"v": Macro(parts, plain_mean)}}, settings)
    assert clustered.permutation == "monte carlo (300 swaps)"
    assert (clustered.p_permutation, clustered.interval) == (within.p_permutation, within.interval)
    assert clustered.mcnemar is not None and clustered.mcnemar == within.mcnemar


def test_monte_carlo_swaps_move_a_cluster_together() -> None:
    """Identical languages (each question's values equal in both): swapping clusters whole, the
    mean of the two languages swaps exactly as one language does, so the p-values agree."""
    rng = np.random.default_rng(12)
    a_values, b_values = rng.random(60) < 0.7, rng.random(60) < 0.5
    a = _table({u: [(f"q{i}", float(v)) for i, v in enumerate(a_values)] for u in ("en", "de")})
    b = _table({u: [(f"q{i}", float(v)) for i, v in enumerate(b_values)] for u in ("en", "de")})
    settings = BootstrapSettings(400, seed=5)
    rows = {"mean": {"v": _rows(["en", "de"], QUESTION)["mean"]["v"]}, "en": {"v": Mean("en", "v")}}
    mean, en = compare_tables(a, b, rows, settings)
    assert mean.p_permutation == en.p_permutation and mean.interval == pytest.approx(en.interval, abs=1e-9)


# -- declarations on the real data ---------------------------------------------------------------


def _real_table(task_name: str, data_dir: Path, split: str) -> tuple[object, InstanceTable]:
    from harness.definitions.registry import Registry
    from harness.running.planning import load_data, load_task
    from harness.running.settings import DataOptions

    task, _ = load_task(Registry.discover(), task_name)
    data = load_data(task, DataOptions(data_dir=data_dir, split=split))
    evaluation = task.evaluate(data, task.reference_predictions(data, "gold"))
    return task, InstanceTable.from_instances(evaluation.instances)


@pytest.mark.parametrize(
    ("task_name", "folder", "split", "clusters", "strata", "languages"),
    [
        ("xquad", "xquad", "test", 1190, 1, 12),
        ("mlqa", "mlqa", "dev", 1148, 41, 7),
        ("mlqa:mode=gxlt", "mlqa", "dev", 1148, 41, 49),
        ("lareqa", "lareqa/xquad-r", "test", 1190, 1, 11),
    ],
)
def test_real_parallel_data_clusters_as_declared(
    real_data: Path, task_name: str, folder: str, split: str, clusters: int, strata: int, languages: int
) -> None:
    """XQuAD's and XQuAD-R's questions are in every language; MLQA's in 2 to 7, 41 patterns."""
    task, table = _real_table(task_name, real_data / folder, split)
    found = stratify(table, task.metadata.clusters)
    assert (sum(s.size for s in found.strata), len(found.strata), len(table.units)) == (clusters, strata, languages)
    rows = task.statistics(table)
    summary = next(iter(rows.values()))
    assert all(statistic.clusters is task.metadata.clusters for statistic in summary.values())


def test_declared_clusters() -> None:
    """Parallel: XQuAD, MLQA, MKQA, LAReQA, MLQA-R, XNLI, PAWS-X, XCOPA (and XTREME submissions
    holding them). Not: TyDiQA (written in each language), XOR-TyDi, Tatoeba (other English
    sentences per language), BUCC, Mewsli-X, PAN-X, UD-POS."""
    from harness.definitions.registry import Registry, load_target

    registry = Registry.discover()
    declared = {}
    for name in (
        "xquad",
        "mlqa",
        "mkqa",
        "lareqa",
        "mlqa-r",
        "xnli",
        "pawsx",
        "xcopa",
        "xtreme",
        "tydiqa",
        "xor-engspan",
        "xor-full",
        "xor-retrieve",
        "tatoeba",
        "bucc2018",
        "mewslix",
        "panx",
        "udpos",
    ):
        spec, plugin = registry.task(name)
        clusters = load_target(spec, plugin, "task").metadata.clusters
        declared[name] = None if clusters is None else clusters.name
    assert declared == {
        "xquad": "question id",
        "mlqa": "question id",
        "mkqa": "example id",
        "lareqa": "question group (xling_id)",
        "mlqa-r": "question group (xling_id)",
        "xnli": "line",
        "pawsx": "line",
        "xcopa": "line",
        "xtreme": "item (with its translations)",
        "tydiqa": None,
        "xor-engspan": None,
        "xor-full": None,
        "xor-retrieve": None,
        "tatoeba": None,
        "bucc2018": None,
        "mewslix": None,
        "panx": None,
        "udpos": None,
    }
    lareqa = load_target(*registry.task("lareqa"), "task").metadata.clusters
    assert lareqa.key("de", "56beb4343aeaaa14008c925b_de") == "56beb4343aeaaa14008c925b"
    xtreme = load_target(*registry.task("xtreme"), "task").metadata.clusters
    assert [xtreme.key(unit, "7") for unit in ("xnli/de", "xnli/en", "udpos/de", "udpos/en")] == [
        "xnli/7",
        "xnli/7",
        "udpos/de/7",
        "udpos/en/7",
    ]


# -- the record in results, and harness compare ------------------------------------------------------


def _score_demo(harness_cli: Cli, folder: Path, langs: str, wrong: int) -> Path:
    """Gold answers of the demo data's first 10 questions per language, the first ``wrong`` of
    them wrong in every language (the same questions: errors that go together)."""
    demo = Path(__file__).resolve().parents[3] / "harness" / "demo" / "parallel-qa"
    predictions = folder / f"{langs}-{wrong}"
    predictions.mkdir()
    for lang in langs.split(","):
        raw = json.loads((demo / f"{lang}.json").read_text(encoding="utf-8"))
        qas = [qa for article in raw["data"] for p in article["paragraphs"] for qa in p["qas"]][:10]
        answers = {qa["id"]: ("not this" if i < wrong else qa["answers"][0]["text"]) for i, qa in enumerate(qas)}
        (predictions / f"{lang}.json").write_text(json.dumps(answers), encoding="utf-8")
    code, out, err = harness_cli("score", "xquad", "--langs", langs, "--limit", "10", "--predictions", predictions)
    assert code == 0, err
    return Path(next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("result: ")))


def test_results_record_what_each_interval_resampled(harness_cli: Cli, tmp_path: Path) -> None:
    result_path = _score_demo(harness_cli, tmp_path, "en,de", 3)
    raw = json.loads(result_path.read_text(encoding="utf-8"))
    assert {row["subset"]: row["resampled"] for row in raw["rows"]} == {
        "mean": "question id",
        "en": INSTANCE,
        "de": INSTANCE,
    }
    assert raw["bootstrap"]["resample_clusters"] is True
    result, _ = read_result(result_path)
    assert [row.resampled for row in result.rows] == ["question id", INSTANCE, INSTANCE]


def test_results_written_before_read_as_resampled_within_units_and_rescore(harness_cli: Cli, tmp_path: Path) -> None:
    """A result from before (no ``resampled``, no ``resample_clusters``; its mean's interval
    resampled within each language) reads so, and is rescored with the bootstrap it used."""
    from harness.definitions.registry import Registry
    from harness.running.planning import load_task

    result_path = _score_demo(harness_cli, tmp_path, "en,de", 3)
    raw = json.loads(result_path.read_text(encoding="utf-8"))
    del raw["bootstrap"]["resample_clusters"]
    for row in raw["rows"]:
        del row["resampled"]
    task, _ = load_task(Registry.discover(), "xquad")
    from harness.results.instances import read_instances

    table = InstanceTable.from_instances(read_instances(result_path.parent / "instances.jsonl"))
    old = BootstrapSettings(
        raw["bootstrap"]["resamples"], raw["bootstrap"]["seed"], raw["bootstrap"]["confidence"], resample_clusters=False
    )
    before = row_intervals(table, task.statistics(table), old)["mean"]
    raw["rows"][0]["intervals"] = {metric: list(interval) for metric, interval in before.items()}
    raw["main_score"]["interval"] = list(before["f1"])
    assert (
        raw["rows"][0]["intervals"]["f1"]
        != json.loads(result_path.read_text(encoding="utf-8"))["rows"][0]["intervals"]["f1"]
    )
    result_path.write_text(json.dumps(raw), encoding="utf-8")
    result = RunResult.from_dict(raw)
    assert result.bootstrap is not None and result.bootstrap.resample_clusters is False
    assert [row.resampled for row in result.rows] == [None] * 3  # as the file has it: it writes back unchanged
    assert [row.resampling for row in result.rows] == [INSTANCE] * 3
    code, out, err = harness_cli("validate", "--rescore", result_path)
    assert code == 0, err


def test_compare_resamples_and_swaps_clusters(harness_cli: Cli, tmp_path: Path) -> None:
    """B wrong on 3 of 10 questions in both languages: on the mean, 3 of 10 clusters differ, so
    the exact sign-flip p is 2 x 2**7 / 2**10 = 0.25 (each language's instances apart, it would
    be 2 / 2**6: six independent differences)."""
    a = _score_demo(harness_cli, tmp_path, "en,de", 0)
    b = _score_demo(harness_cli, tmp_path, "en,de", 3)
    code, out, err = harness_cli("compare", a, b, "--json")
    assert code == 0, err
    rows = {(r["subset"], r["metric"]): r for r in json.loads(out)["rows"]}
    mean = rows[("mean", "exact_match")]
    assert (mean["difference"], mean["resampled"]) == (30.0, "question id")
    assert (mean["p_permutation"], mean["permutation"]) == (0.25, "exact (1024 swaps)")
    assert rows[("en", "exact_match")]["resampled"] == INSTANCE
    # McNemar counts discordant pairs as independent: given for a language, not for the mean
    assert rows[("en", "exact_match")]["mcnemar"] == {"a_only": 3, "b_only": 0, "p_value": 0.25}
    assert mean["mcnemar"] is None
    code, out, err = harness_cli("compare", a, b)
    assert code == 0 and "mean by question id (whole across units, in the swaps too)" in out
