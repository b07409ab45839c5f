"""The library API: ``harness.evaluate`` on model objects, the same numbers as the CLI, and
nothing written unless asked."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import harness
from harness.demo import LANGUAGES, parallel_qa_dir
from harness.errors import HarnessError
from harness.running.recording import NOT_REPRODUCIBLE
from tests.harness import api_models
from tests.tiny_models import build_tiny_encoder


@pytest.fixture(scope="module")
def sentence_transformer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A real SentenceTransformer (tiny random BERT, mean pooling, normalised) with query and
    passage prompts, as a researcher would have one loaded in a notebook."""
    models = pytest.importorskip("sentence_transformers.models")
    from sentence_transformers import SentenceTransformer

    folder = build_tiny_encoder(tmp_path_factory.mktemp("tiny-encoder"))
    return SentenceTransformer(
        modules=[models.Transformer(str(folder)), models.Pooling(32, "mean"), models.Normalize()],
        prompts={"query": "query: ", "passage": "passage: "},
        device="cpu",
    )


def test_a_sentence_transformer_scores_as_the_cli_scores_the_same_vectors(
    sentence_transformer: Any, harness_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [outcome] = harness.evaluate("lareqa", sentence_transformer, label="tiny-st", progress=False)
    assert list(tmp_path.iterdir()) == []  # harness_cli runs in tmp_path: the API wrote nothing there
    monkeypatch.setattr(api_models, "OBJECT", sentence_transformer)
    code, out, err = harness_cli(
        "--plugin", "tests.harness.api_models", "run", "lareqa", "registered-object", "--quiet", "--no-cache", "--json"
    )
    assert code == 0, err
    cli = json.loads(out)["results"][0]["result"]
    api = outcome.result.to_dict()
    assert api["rows"] == cli["rows"] and api["main_score"] == cli["main_score"]
    assert api["diagnostics"] == cli["diagnostics"]  # the language-bias analyses read the same vectors
    identity = outcome.result.model.identity
    assert identity.label == "tiny-st" and identity.weights.startswith("sha256:")
    cls = type(sentence_transformer)
    assert identity.options == {"class": f"{cls.__module__}.{cls.__qualname__}"}
    assert outcome.result.predictions.path is None and outcome.result_path is None
    assert NOT_REPRODUCIBLE not in outcome.result.notes
    assert len(outcome.instances) == outcome.result.rows[0].count  # the per-instance records, in memory


def test_the_fingerprint_tells_weights_apart(sentence_transformer: Any) -> None:
    import torch

    from harness.models.objects import fingerprint

    before = fingerprint(sentence_transformer)
    assert fingerprint(sentence_transformer) == before
    parameter = next(sentence_transformer.parameters())
    with torch.no_grad():
        parameter[0, 0] += 1.0
    try:
        assert fingerprint(sentence_transformer) != before
    finally:
        with torch.no_grad():
            parameter[0, 0] -= 1.0


class HashingEncoder:
    """A plain object with ``encode(texts)``: nothing to fingerprint. Unit vectors from each
    text's SHA-256, so the test can compute every score itself."""

    def __init__(self, salt: str = "") -> None:
        self.salt = salt
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256((self.salt + text).encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).normal(size=16)
            rows.append(vector / np.linalg.norm(vector))
        return np.asarray(rows)


def test_an_object_without_weights_is_marked_and_shares_no_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = harness.evaluate("lareqa", HashingEncoder(), cache_dir=cache, progress=False, bootstrap=0)[0]
    second = harness.evaluate("lareqa", HashingEncoder("other"), cache_dir=cache, progress=False, bootstrap=0)[0]
    assert NOT_REPRODUCIBLE in first.result.notes and first.result.model.identity.weights is None
    assert first.result.run_id != second.result.run_id  # two in-memory objects are never one configuration
    assert first.result.main_score.value != second.result.main_score.value
    assert not cache.exists() or not any(cache.rglob("*.npy"))  # no vectors kept for an unfingerprinted model


def test_written_only_when_asked(tmp_path: Path) -> None:
    outcome = harness.evaluate(
        "lareqa", "bm25", output_dir=tmp_path / "out", leaderboard=tmp_path / "board.json", progress=False, bootstrap=0
    )[0]
    assert outcome.result_path is not None and outcome.result_path.is_file()
    assert Path(outcome.result.predictions.path).exists() and (tmp_path / "board.json").is_file()
    assert outcome.result_path.parent.parent.name == "bm25"  # the run folder is named after the model as typed
    with pytest.raises(HarnessError, match="output folder"):
        harness.evaluate("lareqa", "bm25", leaderboard=tmp_path / "other.json")
    with pytest.raises(HarnessError, match="output folder"):
        harness.evaluate("lareqa", "bm25", resume=True)


def _demo_questions(lang: str) -> list[tuple[str, str, str, str]]:
    """(id, question, context, first gold answer) of the demo data's ``lang`` file, read here."""
    document = json.loads((parallel_qa_dir() / f"{lang}.json").read_text(encoding="utf-8"))
    return [
        (qa["id"], qa["question"], paragraph["context"], qa["answers"][0]["text"])
        for article in document["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ]


def test_a_reader_callable_on_xquad_is_scored_like_its_predictions_file(tmp_path: Path) -> None:
    gold = {(question, context): answer for lang in LANGUAGES for _, question, context, answer in _demo_questions(lang)}

    def reader(question: str, context: str) -> str:
        """The gold answer for every other question, the context's first word otherwise."""
        return gold[question, context] if len(question) % 2 else context.split()[0]

    [outcome] = harness.evaluate("xquad", reader, progress=False, bootstrap=0)
    folder = tmp_path / "predictions"
    folder.mkdir()
    for lang in LANGUAGES:
        answers = {qid: reader(question, context) for qid, question, context, _ in _demo_questions(lang)}
        (folder / f"{lang}.json").write_text(json.dumps(answers), encoding="utf-8")
    scored = harness.score("xquad", folder, bootstrap=0)
    assert outcome.result.rows == scored.result.rows and 0 < outcome.result.main_score.value < 100
    assert outcome.result.model.identity.label == "reader"

    perfect = harness.evaluate("xquad", lambda question, context: gold[question, context], progress=False, bootstrap=0)[
        0
    ]
    assert all(row.metrics["f1"] == 100.0 and row.metrics["exact_match"] == 100.0 for row in perfect.result.rows)


def test_a_pipeline_style_answer_and_a_wrong_answer(tmp_path: Path) -> None:
    def pipeline(question: str, context: str) -> dict[str, Any]:
        return {"answer": context.split()[0], "start": 0, "score": 0.5}

    answers = harness.evaluate("xquad", pipeline, langs="en", progress=False, bootstrap=0)[0].predictions
    context = _demo_questions("en")[0][2]
    assert next(iter(answers["en"].values())) == context.split()[0]
    with pytest.raises(HarnessError, match=r"reader .* returned int"):
        harness.evaluate("xquad", lambda question, context: 3, langs="en", progress=False)
    with pytest.raises(HarnessError, match="provides no capability"):
        harness.evaluate("xquad", object(), langs="en")
    with pytest.raises(HarnessError, match="cannot run task lareqa"):
        harness.evaluate("lareqa", pipeline)


def test_tasks_lists_what_a_model_can_run() -> None:
    encoder_tasks = {task.name for task in harness.tasks(needs="Encoder")}
    assert {"lareqa", "mlqa-r"} <= encoder_tasks and "xquad" not in encoder_tasks
    readers = harness.tasks(needs="Reader", languages="de,zh")
    assert {"xquad", "mlqa"} <= {task.name for task in readers}
    assert all({"de", "zh"} <= set(task.languages) for task in readers)
    assert "tydiqa" not in {task.name for task in readers}  # TyDi QA has no German


def test_composite_models_take_objects_and_the_registry_they_were_given(tmp_path: Path) -> None:
    """``dense`` over an encoder object ranks exactly as the plain encoder-to-retriever route, and
    an inner model registered only in the registry handed to the API is found there."""
    import types

    from harness.definitions.hookspecs import hookimpl
    from harness.definitions.registry import Registry
    from harness.definitions.specs import ModelSpec, PluginInfo

    encoder = HashingEncoder("shared")
    direct = harness.evaluate("lareqa", encoder, progress=False, bootstrap=0)[0]
    dense = harness.evaluate(
        "lareqa", "dense", model_args={"encoder": encoder, "dtype": "float32"}, progress=False, bootstrap=0
    )[0]  # float32 shards: the very vectors of the direct route
    assert dense.result.rows == direct.result.rows
    assert dense.result.model.identity.options["encoder"]["label"] == "HashingEncoder"
    # the corpus it encoded itself is in the execution record, as the shared queue's would be
    execution = dense.result.provenance.execution
    assert execution["encoding"]["encoded"] > 0 and execution["batch_size"] == execution["encoding"]["batch_size"] == 32

    registry = Registry.discover()
    registry.add_plugin(
        types.SimpleNamespace(
            harness_models=hookimpl(
                lambda: [ModelSpec("registered-object", "tests.harness.api_models:RegisteredObject")]
            )
        ),
        PluginInfo("test-only"),
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            api_models, "OBJECT", types.SimpleNamespace(encode_query=encoder.encode, encode_document=encoder.encode)
        )
        inner = harness.evaluate(
            "lareqa", "dense:encoder=registered-object,dtype=float32", registry=registry, progress=False, bootstrap=0
        )[0]
    assert inner.result.rows == direct.result.rows


def test_the_cli_and_the_api_give_the_same_result_field_by_field(harness_cli: Any) -> None:
    """``harness run`` is a thin layer over ``harness.evaluate``: the same task and model give the
    same result, every field but where and when it was written."""
    code, out, err = harness_cli("run", "mlqa:mode=gxlt", "oracle", "--quiet", "--json", "--bootstrap", "50")
    assert code == 0, err
    cli = json.loads(out)["results"][0]["result"]
    api = harness.evaluate("mlqa:mode=gxlt", "oracle", progress=False, bootstrap=50)[0].result.to_dict()
    local = {"path"}  # the CLI wrote its files, the API kept them in memory
    assert {k: v for k, v in api["predictions"].items() if k not in local} == {
        k: v for k, v in cli["predictions"].items() if k not in local
    }
    moment = {"started_at", "finished_at", "wall_time_s", "phases_s", "command"}
    assert {k: v for k, v in api["provenance"].items() if k not in moment} == {
        k: v for k, v in cli["provenance"].items() if k not in moment
    }
    assert (
        "instances" not in api and cli["instances"]["count"] > 0
    )  # a file the CLI wrote; the API keeps them in memory
    for field in set(api) | set(cli):
        if field not in {"predictions", "provenance", "instances"}:
            assert api.get(field) == cli.get(field), field
