"""BUCC 2018 mining on a synthetic parallel set in XTREME's download layout, built from the
Tatoeba files (true pairs among distractors on both sides, a repeated sentence): the margins,
the mined pairs, the dev threshold and the test predictions equal a straightforward
implementation of XTREME's procedure written here with loops; the run's predictions folder
scores the same through ``harness score xtreme``."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.model import Runtime
from harness.definitions.task import DataRequest, RunContext

Cli = Callable[..., tuple[int, str, str]]
LANG = "de"


def tatoeba_pairs(real_data: Path) -> list[tuple[str, str]]:
    folder = real_data / "tatoeba" / "v1"
    german = (folder / "tatoeba.deu-eng.deu").read_text(encoding="utf-8").splitlines()
    english = (folder / "tatoeba.deu-eng.eng").read_text(encoding="utf-8").splitlines()
    seen: set[str] = set()
    pairs = []
    for de, en in zip(german, english):  # sentences unique on each side, so the gold is unambiguous
        if de.strip() not in seen and en.strip() not in seen:
            seen.update((de.strip(), en.strip()))
            pairs.append((de.strip(), en.strip()))
    return pairs


def write_split(
    folder: Path,
    split: str,
    pairs: Sequence[tuple[str, str]],
    lone_de: Sequence[str],
    lone_en: Sequence[str],
    rng: random.Random,
    *,
    gold_file: bool,
) -> list[tuple[str, str]]:
    """BUCC files (id<TAB>sentence, shuffled) with the true pairs plus lone sentences; the gold ids."""
    de = [(f"de-{split}-{i:06d}", s) for i, s in enumerate([p[0] for p in pairs] + list(lone_de))]
    en = [(f"en-{split}-{i:06d}", s) for i, s in enumerate([p[1] for p in pairs] + list(lone_en))]
    gold = [(de[i][0], en[i][0]) for i in range(len(pairs))]
    for side, lang in ((de, LANG), (en, "en")):
        rows = list(side)
        rng.shuffle(rows)
        (folder / f"{LANG}-en.{split}.{lang}").write_text("".join(f"{i}\t{s}\n" for i, s in rows), encoding="utf-8")
    if gold_file:
        (folder / f"{LANG}-en.{split}.gold").write_text("".join(f"{a}\t{b}\n" for a, b in gold), encoding="utf-8")
    return gold


@pytest.fixture
def bucc(real_data: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, list[tuple[str, str]]], list[tuple[str, str]]]:
    """data/bucc2018 (dev with gold, test without), labels/bucc2018/test-de.tsv, the gold, all pairs."""
    pairs = tatoeba_pairs(real_data)[:160]
    rng = random.Random(7)
    folder = tmp_path / "data" / "bucc2018"
    folder.mkdir(parents=True)
    gold = {
        "dev": write_split(
            folder, "dev", pairs[:30], [p[0] for p in pairs[30:45]], [p[1] for p in pairs[45:60]], rng, gold_file=True
        ),
        # the test split repeats one English sentence: it has no id, so its pairs are dropped
        "test": write_split(
            folder,
            "test",
            pairs[60:110],
            [p[0] for p in pairs[110:135]],
            [p[1] for p in pairs[135:160]] + [pairs[61][1]],
            rng,
            gold_file=False,
        ),
    }
    labels = tmp_path / "labels" / "bucc2018"
    labels.mkdir(parents=True)
    (labels / f"test-{LANG}.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in gold["test"]), encoding="utf-8")
    return folder, tmp_path / "labels", gold, pairs


class PairedEncoder:
    """A deterministic encoder whose translations lie near each other: each pair's two sentences
    share a seeded random direction plus their own noise, so mining has something to find but
    also makes mistakes; lone sentences get their own directions."""

    def __init__(self, pairs: Sequence[tuple[str, str]], dim: int = 16, noise: float = 0.9) -> None:
        rng = np.random.default_rng(3)
        self.vectors: dict[str, np.ndarray] = {}
        for de, en in pairs:
            base = rng.standard_normal(dim)
            self.vectors[de] = base + noise * rng.standard_normal(dim)
            self.vectors[en] = base + noise * rng.standard_normal(dim)

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        return np.stack([self.vectors[text.strip()] for text in texts]).astype(np.float32)


# -- the reference: XTREME's procedure written out with loops ---------------------------------


def read_side(path: Path) -> list[tuple[str, str]]:
    return [tuple(line.split("\t")) for line in path.read_text(encoding="utf-8").splitlines()]


def reference_candidates(
    encoder: PairedEncoder, source: list[tuple[str, str]], target: list[tuple[str, str]], k: int = 4
) -> dict[tuple[str, str], float]:
    xs = list(dict.fromkeys(s for _, s in source))
    ys = list(dict.fromkeys(s for _, s in target))

    def unit(text: str) -> np.ndarray:
        v = encoder.encode([text], role="query")[0].astype(np.float64)
        return v / np.linalg.norm(v)

    X, Y = [unit(s) for s in xs], [unit(s) for s in ys]
    cos = [[float(x @ y) for y in Y] for x in X]
    neighbours_x = [sorted(range(len(Y)), key=lambda j: -cos[i][j])[:k] for i in range(len(X))]
    neighbours_y = [sorted(range(len(X)), key=lambda i: -cos[i][j])[:k] for j in range(len(Y))]
    mean_x = [sum(cos[i][j] for j in neighbours_x[i]) / len(neighbours_x[i]) for i in range(len(X))]
    mean_y = [sum(cos[i][j] for i in neighbours_y[j]) / len(neighbours_y[j]) for j in range(len(Y))]

    def margin(i: int, j: int) -> float:
        return cos[i][j] / ((mean_x[i] + mean_y[j]) / 2)

    proposals = []  # (margin, source, target): each sentence's best neighbour, forward then backward
    for i in range(len(X)):
        j = max(neighbours_x[i], key=lambda j: margin(i, j))
        proposals.append((margin(i, j), i, j))
    for j in range(len(Y)):
        i = max(neighbours_y[j], key=lambda i: margin(i, j))
        proposals.append((margin(i, j), i, j))
    used_x, used_y, mined = set(), set(), []
    for score, i, j in sorted(proposals, key=lambda p: -p[0]):
        if i not in used_x and j not in used_y:
            used_x.add(i)
            used_y.add(j)
            if score > 0:
                mined.append((i, j, score))

    def ids(side: list[tuple[str, str]]) -> dict[str, str]:
        texts = [s.strip() for _, s in side]
        return {s.strip(): i for i, s in side if texts.count(s.strip()) == 1}

    source_ids, target_ids = ids(source), ids(target)
    out: dict[tuple[str, str], float] = {}
    for i, j, score in mined:
        if xs[i].strip() in source_ids and ys[j].strip() in target_ids:
            pair = (source_ids[xs[i].strip()], target_ids[ys[j].strip()])
            out[pair] = max(score, out.get(pair, score))
    return out


def reference_threshold(candidates: dict[tuple[str, str], float], gold: list[tuple[str, str]]) -> float:
    ranked = sorted(candidates.items(), key=lambda item: -item[1])
    best, threshold = 0.0, 0.0
    for n in range(1, len(ranked) + 1):
        correct = sum(pair in gold for pair, _ in ranked[:n])
        if correct:
            f1 = 2 * correct / (n + len(gold))
            if f1 > best + 1e-12:
                best = f1
                threshold = (ranked[n - 1][1] + ranked[n][1]) / 2 if n < len(ranked) else ranked[n - 1][1]
    return threshold


def mined_as_the_reference(task, data, encoder, folder: Path, gold) -> tuple[dict, list[tuple[str, str]]]:
    """Checks that the harness's candidate pairs (with margins) and dev threshold equal the
    reference's on ``encoder``'s vectors, and that its prediction is the test pairs at that
    threshold; returns the reference's test candidates and the prediction."""
    from harness_xtreme.bucc import best_threshold, candidate_scores

    expected = {}
    for split, side in zip(("dev", "test"), data.splits[LANG]):
        source, target = read_side(folder / f"{LANG}-en.{split}.{LANG}"), read_side(folder / f"{LANG}-en.{split}.en")
        expected[split] = reference_candidates(encoder, source, target)
        vectors = [encoder.encode(texts, role="query") for texts in (side.source.unique(), side.target.unique())]
        found = candidate_scores(side, *[v / np.linalg.norm(v, axis=1, keepdims=True) for v in vectors])
        assert list(found) == list(expected[split])  # the same pairs, in the same (mining) order
        assert list(found.values()) == pytest.approx(list(expected[split].values()), rel=1e-5)
    threshold = reference_threshold(expected["dev"], gold["dev"])
    assert best_threshold(expected["dev"], gold["dev"]) == pytest.approx(threshold)
    predicted = task.predict(
        encoder, data, LANG, RunContext(runtime=Runtime(device_request="cpu"), show_progress=False)
    )
    assert predicted == [pair for pair, score in expected["test"].items() if score >= threshold]
    return expected["test"], predicted


def test_mining_and_threshold_equal_a_plain_implementation(bucc, tmp_path: Path, harness_cli: Cli) -> None:
    from harness_xtreme.bucc import Bucc2018

    folder, labels, gold, pairs = bucc
    task = Bucc2018(labels=labels)
    data = task.load(DataRequest(folder, "test", (LANG,)))
    expected, predicted = mined_as_the_reference(task, data, PairedEncoder(pairs), folder, gold)
    # the repeated English sentence of the test split has no id: none of its pairs is kept
    repeated = {i for i, s in read_side(folder / f"{LANG}-en.test.en") if s == pairs[61][1]}
    assert len(repeated) == 2 and not any(target in repeated for _, target in expected)
    # mining works: most of the gold pairs, and not all of them (the noise makes mistakes)
    correct = len(set(predicted) & set(gold["test"]))
    assert 0.5 * len(gold["test"]) < correct < len(gold["test"])

    evaluation = task.evaluate(data, {LANG: predicted})
    precision, recall = correct / len(set(predicted)), correct / len(gold["test"])
    rows = {row.subset: row.metrics for row in evaluation.rows}
    assert rows[LANG]["f1"] == pytest.approx(200 * precision * recall / (precision + recall))
    assert evaluation.main_score == rows[LANG]["f1"]

    # the predictions, written as a run writes them, score the same through the submission scorer
    # (evaluate.py needs every language: the others are copies of de's, on both sides)
    task.write_predictions(data, {LANG: predicted}, tmp_path / "predictions")
    for other in ("fr", "ru", "zh"):
        for side in (labels, tmp_path / "predictions"):
            (side / "bucc2018" / f"test-{other}.tsv").write_bytes((side / "bucc2018" / f"test-{LANG}.tsv").read_bytes())
    code, out, err = harness_cli(
        "score",
        "xtreme",
        "--predictions",
        tmp_path / "predictions",
        "--data-dir",
        labels,
        "--output-dir",
        tmp_path / "scored",
        "--no-leaderboard",
        "--quiet",
    )
    assert code == 0, err
    (result,) = list((tmp_path / "scored").glob("xtreme/*/*/result.json"))
    scored = {row["subset"]: row["metrics"] for row in json.loads(result.read_text())["rows"]}
    assert scored[f"bucc2018/{LANG}"] == rows[LANG]


def test_run_with_an_encoder_and_bad_input(bucc, tmp_path: Path, tiny_encoder_dir: Path, harness_cli: Cli) -> None:
    folder, labels, gold, _ = bucc
    code, out, err = harness_cli(
        "run",
        f"bucc2018:labels={labels}",
        f"hf-encoder:path={tiny_encoder_dir}",
        "--langs",
        LANG,
        "--data-dir",
        folder.parent,
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    (result,) = list((tmp_path / "results").glob("bucc2018/*/*/result.json"))
    lines = (result.parent / "predictions" / "bucc2018" / f"test-{LANG}.tsv").read_text(encoding="utf-8").splitlines()
    predicted = {tuple(line.split("\t")) for line in lines}
    correct = len(predicted & set(gold["test"]))
    f1 = 200 * correct / (len(predicted) + len(gold["test"]))
    rows = {row["subset"]: row["metrics"] for row in json.loads(result.read_text())["rows"]}
    assert rows[LANG]["f1"] == pytest.approx(f1)

    (folder / f"{LANG}-en.dev.en").write_text("en-1\tA sentence.\nno tab here\n", encoding="utf-8")
    code, out, err = harness_cli(
        "run",
        f"bucc2018:labels={labels}",
        f"hf-encoder:path={tiny_encoder_dir}",
        "--langs",
        LANG,
        "--data-dir",
        folder.parent,
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "bad",
    )
    assert code == 2 and "line 2" in err.strip().splitlines()[-1] and not (tmp_path / "bad").exists()
    code, out, err = harness_cli(
        "run",
        "bucc2018",
        f"hf-encoder:path={tiny_encoder_dir}",
        "--langs",
        "ja",
        "--data-dir",
        folder.parent,
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 2 and "unknown language 'ja'" in err


class Memo:
    """An encoder's vectors of a fixed set of texts, encoded once in one call, so the harness and
    the reference above see the very same vectors."""

    def __init__(self, encoder, texts: Sequence[str]) -> None:
        unique = list(dict.fromkeys(texts))
        self.vectors = dict(zip(unique, encoder.encode(unique, role="query")))

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        return np.stack([self.vectors[text] for text in texts])


@pytest.mark.slow
def test_e5_small_mines_the_pairs(bucc, tmp_path: Path) -> None:
    from harness_hf.e5 import E5Small
    from harness_xtreme.bucc import Bucc2018

    folder, labels, gold, _ = bucc
    task = Bucc2018(labels=labels)
    data = task.load(DataRequest(folder, "test", (LANG,)))
    texts = [t for split in data.splits[LANG] for side in (split.source, split.target) for t in side.sentences]
    encoder = Memo(E5Small(runtime=Runtime(device_request="cpu", cache_dir=tmp_path)), texts)
    _, predicted = mined_as_the_reference(task, data, encoder, folder, gold)
    # e5-small finds most true pairs among the distractors, and few wrong ones
    correct = len(set(predicted) & set(gold["test"]))
    assert correct >= 0.8 * len(gold["test"]) and correct >= 0.8 * len(predicted)
