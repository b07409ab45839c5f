"""Per-item records of XTREME's span-F1 and pair-F1 tasks: the per-sentence counts add up to seqeval
1.2.2's numbers, a resample's F1 is seqeval's on the resampled sentences, and BUCC's per-source counts
add up to the pair-set F1 (checked by hand)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from seqeval.metrics import f1_score, precision_score, recall_score

from harness.stats.records import Instance, InstanceTable
from harness.stats.statistics import gathered
from harness_xtreme.benchmark import PANX_TAGS, UDPOS_TAGS
from harness_xtreme.metrics import counted_scores, pair_set_scores
from harness_xtreme.records import CountedScore, pair_items, sentence_items
from harness_xtreme.tagging import sentence_counts


def random_sentences(rng: random.Random, tags: tuple[str, ...], count: int) -> tuple[list[list[str]], list[list[str]]]:
    lengths = [rng.randint(0, 7) for _ in range(count)]
    gold = [[rng.choice(tags) for _ in range(n)] for n in lengths]
    predicted = [[tag if rng.random() < 0.6 else rng.choice(tags) for tag in sentence] for sentence in gold]
    return gold, predicted


def seqeval_scores(gold: list[list[str]], predicted: list[list[str]]) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval warns about every non-IOB tag and every 0/0
        return {
            "f1": f1_score(gold, predicted) * 100,
            "precision": precision_score(gold, predicted) * 100,
            "recall": recall_score(gold, predicted) * 100,
        }


def summed(gold: list[list[str]], predicted: list[list[str]]) -> dict[str, float]:
    counts = sentence_counts(gold, predicted)
    scores = counted_scores(
        np.asarray(sum(c.correct for c in counts)),
        np.asarray(sum(c.predicted for c in counts)),
        np.asarray(sum(c.gold for c in counts)),
    )
    return {metric: float(value) for metric, value in scores.items()}


@pytest.mark.parametrize("tags", [PANX_TAGS, UDPOS_TAGS], ids=["panx", "udpos"])
def test_sentence_counts_add_up_to_seqeval(tags: tuple[str, ...]) -> None:
    rng = random.Random(3)
    for _ in range(200):
        gold, predicted = random_sentences(rng, tags, rng.randint(1, 6))
        assert summed(gold, predicted) == seqeval_scores(gold, predicted)


def test_a_chunk_that_begins_in_an_earlier_sentence_is_counted_where_it_ends() -> None:
    # seqeval: after a sentence's O, an X (type "_", like O's) starts nothing, so the chunk it
    # belongs to begins where the last one began, in sentence 0, and ends in sentence 1
    gold = [["NOUN"], ["X", "NOUN"]]
    predicted = [["NOUN"], ["X", "VERB"]]
    counts = sentence_counts(gold, predicted)
    assert [(c.correct, c.predicted, c.gold) for c in counts] == [(1, 1, 1), (1, 2, 2)]
    assert summed(gold, predicted) == seqeval_scores(gold, predicted)


def test_a_resample_of_panx_sentences_scores_as_seqeval_on_them() -> None:
    rng = random.Random(5)
    gold, predicted = random_sentences(rng, PANX_TAGS, 30)
    instances = [
        Instance(item.id, "de", ("de",), item.gold, item.prediction, item.values)
        for item in sentence_items("panx", "de", gold, predicted)
    ]
    unit = InstanceTable.from_instances(instances).unit("de")
    indices = np.random.default_rng(0).integers(0, len(gold), (20, len(gold)))
    for metric in ("f1", "precision", "recall"):
        values = CountedScore("de", metric).on_unit(gathered(unit, indices))
        expected = [seqeval_scores([gold[i] for i in row], [predicted[i] for i in row])[metric] for row in indices]
        assert values.tolist() == expected


def test_pair_items_count_each_source_once_and_pairs_as_sets() -> None:
    gold = [("de-1", "en-1"), ("de-1", "en-2"), ("de-2", "en-3")]
    predicted = [("de-1", "en-1"), ("de-3", "en-9"), ("de-1", "en-1")]  # a repeated line counts once
    items = pair_items("bucc2018", "de", gold, predicted)
    assert [(item.id, item.gold, item.prediction, item.values) for item in items] == [
        ("de-1", ["en-1", "en-2"], ["en-1"], {"correct": 1.0, "predicted": 1.0, "gold": 2.0}),
        ("de-2", ["en-3"], [], {"correct": 0.0, "predicted": 0.0, "gold": 1.0}),
        ("de-3", [], ["en-9"], {"correct": 0.0, "predicted": 1.0, "gold": 0.0}),
    ]
    # one correct of two predicted and three gold: P 50, R 33.3..., F1 2PR/(P+R) = 40
    totals = [np.asarray(sum(item.values[name] for item in items)) for name in ("correct", "predicted", "gold")]
    scores = {metric: float(value) for metric, value in counted_scores(*totals).items()}
    assert scores == pair_set_scores(gold, predicted)
    assert scores["precision"] == 50.0 and scores["f1"] == pytest.approx(40.0)


def test_every_row_of_the_mock_submission_has_its_statistic() -> None:
    from harness.definitions.registry import Registry
    from harness.running.planning import load_data, load_task
    from harness.running.settings import DataOptions
    from tests.conftest import VENDORED

    mock = VENDORED / "xtreme" / "mock_test_data"
    task, _ = load_task(Registry.discover(), "xtreme")
    data = load_data(task, DataOptions(data_dir=mock / "labels"))
    evaluation = task.evaluate(data, task.read_predictions(mock / "predictions", data))
    table = InstanceTable.from_instances(evaluation.instances)
    statistics = task.statistics(table)
    for row in evaluation.rows:  # every row and metric, languages, tasks, groups and all_task
        assert {metric: statistics[row.subset][metric].point(table) for metric in row.metrics} == row.metrics
    # as the official evaluate.py printed it for XTREME's mock submission
    assert statistics["all_task"]["avg_metric"].point(table) == 62.1932649076773
    assert task.scorer_signature() == "xtreme|evaluate.py|avg:mean|all_task:fsum"
