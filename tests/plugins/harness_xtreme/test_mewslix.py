"""Mewsli-X with an encoder: the official mention and entity strings (worked out by hand here), the
retrieval and map@20 against a plain loop-by-loop reference, predictions that `harness score xtreme`
reads back to the same figures, and bad input in one line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from harness.definitions.model import Runtime
from harness.definitions.registry import Registry
from harness.definitions.task import RunContext
from harness.running.planning import load_data, load_task
from harness.running.settings import DataOptions
from harness_xtreme.benchmark import MEWSLIX
from harness_xtreme.mewslix import entity_text, mention_text
from tests.plugins.harness_xtreme.test_labelled import error_line

Cli = Callable[..., tuple[int, str, str]]
ENTITIES = 30


def test_mention_and_entity_strings_are_the_official_ones() -> None:
    context = "Intro here. The {x} verdict came for Smith today.\nMore."
    sentences = [(0, 11), (12, 49), (50, 55)]
    start = context.index("Smith")
    # left "The {x} verdict came for " (braces made parentheses), right " today.", then
    # f"{m}: {left} {{ {m} }} {right}" with double spaces made single
    assert mention_text(context, sentences, start, start + 5) == "Smith: The (x) verdict came for { Smith } today."
    assert mention_text(context, sentences, 0, 5) == "Intro: { Intro } here."
    assert mention_text(context, sentences, 6, 14) is None  # "here. Th" crosses a sentence boundary
    # sentences joined by a space, lines joined, and one pass of "  " -> " " (three spaces leave two)
    assert (
        entity_text("Large place.  Inhabited\nby everyone.", [(0, 12), (14, 36)])
        == "Large place. Inhabited by everyone."
    )
    assert entity_text("a   b. c", [(0, 6)]) == "a  b."


def write_mewslix(
    folder: Path, split: str, languages: Sequence[str], *, blank: bool
) -> dict[str, dict[str, list[str]]]:
    """XTREME-R's mewslix/ folder: the candidate set, per language an article with four mentions
    (``blank``: gold ids blanked, as the download script leaves test); returns the gold."""
    entities = []
    for i in range(ENTITIES):
        text = f"Thing {i} is a thing. It is number {i}."
        first = text.index(" It")
        entities.append(
            {
                "entity_id": f"Q{i}",
                "title": f"T{i}",
                "description": text,
                "description_language": ["en", "de", "fr"][i % 3],
                "description_url": "",
                "sentence_spans": [{"start": 0, "end": first}, {"start": first + 1, "end": len(text)}],
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "candidate_set_entities.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entities), "utf-8")
    gold = {}
    for number, lang in enumerate(languages):
        words = [f"w{lang}{k}" for k in range(4)]
        text = " ".join(f"News {k} about {w}." for k, w in enumerate(words))
        spans, mentions, position = [], [], 0
        for k, word in enumerate(words):
            sentence = f"News {k} about {word}."
            spans.append({"start": position, "end": position + len(sentence)})
            start = position + sentence.index(word)
            entity = f"Q{(number * 4 + k) % ENTITIES}"
            mentions.append(
                {
                    "example_id": f"{lang}-{k}",
                    "entity_id": "" if blank else entity,
                    "mention_span": {"start": start, "end": start + len(word), "text": word},
                }
            )
            gold.setdefault(lang, {})[f"{lang}-{k}"] = [entity]
            position += len(sentence) + 1
        article = {
            "context": {
                "document_title": "t",
                "document_id": f"{lang}-1",
                "language": lang,
                "text": text,
                "sentence_spans": spans,
            },
            "mentions": mentions,
        }
        (folder / "wikinews_mentions").mkdir(exist_ok=True)
        (folder / "wikinews_mentions" / f"{split}-{lang}.jsonl").write_text(json.dumps(article) + "\n", "utf-8")
        (folder / "wikinews_labels").mkdir(exist_ok=True)
        (folder / "wikinews_labels" / f"{split}-{lang}.json").write_text(
            json.dumps({m["example_id"]: [m["entity_id"]] for m in mentions}), "utf-8"
        )
    return gold


def write_labels(labels: Path, gold: dict[str, dict[str, list[str]]]) -> Path:
    for lang, mapping in gold.items():
        path = labels / "mewslix" / f"test-{lang}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(mapping), "utf-8")
    return labels


class HashEncoder:
    """Deterministic vectors from each text's hash, so some entities rank high by chance."""

    def encode(self, texts: Sequence[str], *, role: str, langs: Sequence[str] | None = None) -> np.ndarray:
        return np.stack(
            [
                np.random.default_rng(int(hashlib.sha256(f"{role}|{t}".encode()).hexdigest()[:8], 16)).standard_normal(
                    8
                )
                for t in texts
            ]
        ).astype(np.float32)


def reference_mrr(
    encoder: HashEncoder, mentions: list[str], gold: list[str], entity_ids: list[str], entity_texts: list[str]
) -> float:
    """Cosines one by one, the 20 best by score then position, 1/rank of the gold, the mean x 100."""

    def unit(v: np.ndarray) -> np.ndarray:
        return v / np.linalg.norm(v)

    entities = [unit(v.astype(np.float64)) for v in encoder.encode(entity_texts, role="passage")]
    total = 0.0
    for query, answer in zip(encoder.encode(mentions, role="query"), gold):
        q = unit(query.astype(np.float64))
        order = sorted(range(len(entities)), key=lambda i: (-float(q @ entities[i]), i))[:20]
        ranked = [entity_ids[i] for i in order]
        total += 1 / (ranked.index(answer) + 1) if answer in ranked else 0.0
    return 100 * total / len(mentions)


def test_retrieval_and_map20_equal_a_plain_reference(tmp_path: Path) -> None:
    gold = write_mewslix(tmp_path / "mewslix", "dev", MEWSLIX, blank=False)
    task, _ = load_task(Registry.discover(), "mewslix")
    data = load_data(task, DataOptions(data_dir=tmp_path, split="dev"))
    encoder = HashEncoder()
    context = RunContext(runtime=Runtime(device_request="cpu"), show_progress=False)
    predictions = {lang: task.predict(encoder, data, lang, context) for lang in task.units(data)}
    assert all(len(ranked) == 20 for by_mention in predictions.values() for ranked in by_mention.values())
    evaluation = task.evaluate(data, predictions)
    rows = {row.subset: row.metrics for row in evaluation.rows}
    expected = {}
    for lang in MEWSLIX:
        expected[lang] = reference_mrr(
            encoder,
            [text for _, text in data.inputs[lang]],
            [gold[lang][example][0] for example, _ in data.inputs[lang]],
            data.entity_ids,
            data.entity_texts,
        )
        assert rows[lang]["map@20"] == pytest.approx(expected[lang], abs=1e-9), lang
    assert evaluation.main_score == pytest.approx(sum(expected.values()) / len(MEWSLIX))
    assert 0 < evaluation.main_score < 100


def test_test_split_run_scores_as_a_submission(tmp_path: Path, tiny_encoder_dir: Path, harness_cli: Cli) -> None:
    labels = write_labels(
        tmp_path / "labels", write_mewslix(tmp_path / "data" / "mewslix", "test", MEWSLIX, blank=True)
    )
    code, out, err = harness_cli(
        "run",
        f"mewslix:labels={labels}",
        f"hf-encoder:path={tiny_encoder_dir}",
        "--data-dir",
        tmp_path / "data",
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
    )
    assert code == 0, err
    run = json.loads(out)["results"][0]["result"]
    mean = next(row for row in run["rows"] if row["subset"] == "mean")["metrics"]["map@20"]
    code, out, err = harness_cli(
        "score",
        "xtreme:xtreme_version=xtreme-r",
        "--predictions",
        Path(run["predictions"]["path"]),
        "--data-dir",
        labels,
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
        "--no-leaderboard",
    )
    assert code == 0, err
    scored = {row["subset"]: row["metrics"] for row in json.loads(out)["results"][0]["result"]["rows"]}
    assert scored["mewslix"]["avg_metric"] == mean

    code, out, err = harness_cli("run", "mewslix", "bm25", "--data-dir", tmp_path / "data", "--quiet")
    assert code == 2 and "no labels in this file" not in err  # bm25 is no encoder: refused before reading
    code, out, err = harness_cli(
        "run", "mewslix", f"hf-encoder:path={tiny_encoder_dir}", "--data-dir", tmp_path / "data", "--quiet"
    )
    assert code == 2 and "give the task a label folder, mewslix:labels=DIR" in error_line(err)


def test_bad_input_is_one_line(tmp_path: Path, tiny_encoder_dir: Path, harness_cli: Cli) -> None:
    folder = tmp_path / "mewslix"
    write_mewslix(folder, "dev", MEWSLIX, blank=False)

    def refused() -> str:
        code, _, err = harness_cli(
            "run",
            "mewslix",
            f"hf-encoder:path={tiny_encoder_dir}",
            "--data-dir",
            tmp_path,
            "--split",
            "dev",
            "--quiet",
            "--no-leaderboard",
        )
        assert code == 2, err
        return error_line(err)

    article = folder / "wikinews_mentions" / "dev-de.jsonl"
    good = article.read_text("utf-8")
    article.write_text(good.replace('"language": "de"', '"language": "fr"'), "utf-8")
    assert refused() == f"error: {article}: record line 1: field 'context.language': an article in 'fr' in the de file"
    article.write_text(good.replace('"text": "wde0"', '"text": "wde9"'), "utf-8")
    assert refused() == (
        f"error: {article}: record line 1, mention de-0: field 'mention_span': the mention span is not "
        "the text at its offsets in the context"
    )
    article.write_text(good, "utf-8")
    entities = folder / "candidate_set_entities.jsonl"
    lines = entities.read_text("utf-8").splitlines()
    entities.write_text("\n".join(lines + lines[:1]) + "\n", "utf-8")
    assert refused() == f"error: {entities}: record line {ENTITIES + 1}: field 'entity_id': entity Q0 is listed twice"
    entities.write_text("\n".join(lines) + "\n", "utf-8")
    (folder / "wikinews_labels" / "dev-es.json").write_text('{"es-0": ["Q1"]}', "utf-8")
    assert refused().endswith(
        "dev-es.json: the gold is for other mentions than "
        f"{folder / 'wikinews_mentions' / 'dev-es.jsonl'}'s: the two files do not line up"
    )
    assert not (tmp_path / "results").exists()
