"""Bootstrap intervals against scipy.stats.bootstrap (same generator, same draws) and against
straightforward loops over the same index matrices."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from harness.stats.bootstrap import BootstrapSettings, percentile_interval, resample, row_intervals, unit_draws
from harness.stats.records import Instance, InstanceTable
from harness.stats.statistics import Macro, Mean, Pooled, plain_mean


def _table(columns: dict[str, np.ndarray], metric: str = "v") -> InstanceTable:
    return InstanceTable.from_instances(
        Instance(f"{unit}-{i}", unit, (unit,), None, None, {metric: float(v)})
        for unit, values in columns.items()
        for i, v in enumerate(values)
    )


def _scipy_interval(samples: tuple[np.ndarray, ...], statistic, seed: int, resamples: int) -> tuple[float, float]:
    result = scipy_stats.bootstrap(
        samples,
        statistic,
        n_resamples=resamples,
        method="percentile",
        vectorized=True,
        paired=False,
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def test_one_unit_mean_equals_scipy() -> None:
    rng = np.random.default_rng(11)
    values = rng.random(237)
    table = _table({"xx": values})
    ours = row_intervals(table, {"xx": {"m": Mean("xx", "v")}}, BootstrapSettings(1000, seed=5))["xx"]["m"]
    theirs = _scipy_interval((values,), lambda x, axis: 100.0 * x.mean(axis=axis), 5, 1000)
    assert ours == pytest.approx(theirs, abs=1e-9, rel=0)
    assert ours[0] < 100 * values.mean() < ours[1]


def test_macro_over_units_equals_scipy_multi_sample() -> None:
    """Resampling within each unit is scipy's independent-samples bootstrap, samples in unit order."""
    rng = np.random.default_rng(12)
    columns = {"a": rng.random(50), "b": (rng.random(80) < 0.3).astype(float), "c": rng.random(31) ** 2}
    table = _table(columns)
    parts = tuple(Mean(u, "v") for u in columns)
    rows = {"mean": {"m": Macro(parts, plain_mean)}, "all": {"m": Pooled(parts)}}
    ours = row_intervals(table, rows, BootstrapSettings(1000, seed=9))
    macro = _scipy_interval(
        tuple(columns.values()),
        lambda a, b, c, axis: 100.0 * (a.mean(axis=axis) + b.mean(axis=axis) + c.mean(axis=axis)) / 3,
        9,
        1000,
    )
    pooled = _scipy_interval(
        tuple(columns.values()),
        lambda a, b, c, axis: 100.0 * np.concatenate([a, b, c], axis=axis).mean(axis=axis),
        9,
        1000,
    )
    assert ours["mean"]["m"] == pytest.approx(macro, abs=1e-9, rel=0)
    assert ours["all"]["m"] == pytest.approx(pooled, abs=1e-9, rel=0)


def test_divisor_and_loop_over_the_same_index_matrices() -> None:
    """XOR-Full's sum over 7 with 2 units present, against a plain loop over the same draws."""
    rng = np.random.default_rng(13)
    columns = {"ja": rng.random(20), "te": rng.random(35)}
    table = _table(columns)
    statistic = Macro((Mean("ja", "v"), Mean("te", "v")), lambda v: sum(v) / 7, divisor=7)
    settings = BootstrapSettings(300, seed=2)
    (vectorised,) = resample([table], [statistic], settings)[0]
    draws = dict(unit_draws(table, settings))
    loop = [
        sum(100.0 * sum(columns[u][i] for i in draws[u][b]) / len(columns[u]) for u in columns) / 7
        for b in range(settings.resamples)
    ]
    assert np.allclose(vectorised, loop, rtol=0, atol=1e-9)
    assert percentile_interval(vectorised, 0.95) == pytest.approx(
        tuple(np.percentile(loop, [2.5, 97.5])), abs=1e-9, rel=0
    )


def test_settings_refuse_negative_resamples() -> None:
    from harness.errors import HarnessError

    with pytest.raises(HarnessError, match="--bootstrap"):
        BootstrapSettings(-1)
    assert row_intervals(_table({"a": np.ones(3)}), {"a": {"m": Mean("a", "v")}}, BootstrapSettings(0)) == {}


@pytest.fixture
def mlqa_gxlt_instances(real_data: Path):
    """The 49 real MLQA dev G-XLT files, scored with the gold answers, a third of them spoilt."""
    import random

    from harness.definitions.registry import Registry
    from harness.running.planning import load_data, load_task
    from harness.running.settings import DataOptions

    task, _ = load_task(Registry.discover(), "mlqa:mode=gxlt")
    data = load_data(task, DataOptions(data_dir=real_data, split="dev"))
    rng = random.Random(3)
    gold = task.reference_predictions(data, "gold")
    predictions = {
        u: {q: (a if rng.random() < 0.66 else "nothing") for q, a in answers.items()} for u, answers in gold.items()
    }
    evaluation = task.evaluate(data, predictions)
    return task, InstanceTable.from_instances(evaluation.instances), evaluation


def test_real_mlqa_gxlt_interval_equals_scipy(mlqa_gxlt_instances) -> None:
    """The G-XLT figure (mean of 42 off-diagonal cells, each resampled within itself, as results
    before clusters were resampled) and one cell, on real data, against scipy with the 49 files
    as its samples."""
    task, table, evaluation = mlqa_gxlt_instances
    rows = task.statistics(table)
    # scipy holds every resample of the 49 files at once
    settings = BootstrapSettings(200, seed=4, resample_clusters=False)
    ours = row_intervals(table, {"gxlt": rows["gxlt"], "es-de": rows["es-de"]}, settings)
    names = list(table.units)
    cross = [i for i, n in enumerate(names) if table.unit(n).languages[0] != table.unit(n).languages[1]]
    samples = tuple(table.unit(n).values["f1"] for n in names)

    def gxlt(*resampled, axis):
        return sum(100.0 * resampled[i].mean(axis=axis) for i in cross) / len(cross)

    def es_de(*resampled, axis):
        return 100.0 * resampled[names.index("es-de")].mean(axis=axis)

    assert ours["gxlt"]["f1"] == pytest.approx(_scipy_interval(samples, gxlt, 4, 200), abs=1e-9, rel=0)
    assert ours["es-de"]["f1"] == pytest.approx(_scipy_interval(samples, es_de, 4, 200), abs=1e-9, rel=0)
    point = next(r for r in evaluation.rows if r.subset == "gxlt").metrics["f1"]
    assert ours["gxlt"]["f1"][0] < point < ours["gxlt"]["f1"][1]


def test_mkqa_sweep_resampled_equals_official_per_resample() -> None:
    """The vectorised sweep against the official threshold search run resample by resample."""
    from harness_mkqa.scoring import ExampleScores, SweepMetric, official_threshold

    rng = np.random.default_rng(21)
    n = 60
    answerable = rng.random(n) < 0.6
    em = np.where(answerable, (rng.random(n) < 0.5).astype(float), 0.0)
    values = {
        "exact_match": em,
        "f1": np.maximum(em, np.where(answerable, rng.random(n) * 0.8, 0.0)),
        "answerable": answerable.astype(float),
        "answered": (rng.random(n) < 0.7).astype(float),
        "no_answer_prob": rng.choice([0.0, 0.2, 0.5, 0.9], n),
        "line": rng.permutation(n).astype(float),
    }
    table = InstanceTable.from_instances(
        Instance(str(i), "de", ("de",), None, None, {k: float(v[i]) for k, v in values.items()}) for i in range(n)
    )
    settings = BootstrapSettings(150, seed=8)
    best_f1, best_em = resample([table], [SweepMetric("de", "best_f1"), SweepMetric("de", "best_em")], settings)[0]
    ((_, draws),) = list(unit_draws(table, settings))
    for b, row in enumerate(draws):
        scores = ExampleScores(
            exact_match=values["exact_match"][row],
            f1=values["f1"][row],
            answerable=answerable[row],
            answered=values["answered"][row] == 1,
            no_answer_prob=values["no_answer_prob"][row],
            line=values["line"][row].astype(int),
            type_masks={},
        )
        best, threshold = official_threshold(scores)
        abstains = scores.no_answer_prob > threshold
        assert best_f1[b] == pytest.approx(100.0 * best / n, abs=1e-9)
        assert best_em[b] == pytest.approx(
            100.0 * np.where(abstains, ~scores.answerable, scores.exact_match).mean(), abs=1e-9
        )
