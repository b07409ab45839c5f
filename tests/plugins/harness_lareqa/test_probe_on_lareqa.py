"""The language-ID probe of an encoder's LAReQA / MLQA-R run equals a straightforward scikit-learn
call on the same vectors; it needs vectors, so a retriever's run has none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from harness.definitions.model import Runtime
from harness.definitions.registry import Registry
from harness.definitions.task import DataRequest
from harness.errors import HarnessError
from harness.running import runner, settings
from harness_lareqa.mlqa_r import MLQAR
from harness_lareqa.task import LAReQA
from tests.plugins.harness_lareqa.test_mlqa_r import write_mlqa_fixture
from tests.plugins.harness_lareqa.test_task import HashEncoder, registry  # noqa: F401  (the fixture)


def straightforward_probe(texts: list[str], langs: list[str], role: str, pair: tuple[str, str]) -> float:
    keep = [i for i, lang in enumerate(langs) if lang in pair]
    x = HashEncoder(runtime=Runtime()).encode([texts[i] for i in keep], role=role)
    y = np.asarray([langs[i] == pair[1] for i in keep])
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=1 / 3, random_state=0, stratify=y)
    return float(LogisticRegression(max_iter=1000).fit(x_train, y_train).score(x_test, y_test))


def run(
    registry: Registry, tmp_path: Path, task: str, model: str, data_dir: Path | None = None, limit: int | None = None
) -> dict:
    outcome = runner.run(
        task,
        model,
        registry=registry,
        data=settings.DataOptions(data_dir=data_dir, limit=limit),
        output=settings.OutputOptions(output_dir=tmp_path / "results", leaderboard=None, show_progress=False),
    )
    return outcome.result.to_dict()  # validated against the run-result schema by the runner


def check(result: dict, task: LAReQA, data_dir: Path, split: str, limit: int | None, pair: tuple[str, str]) -> None:
    data = task.load(DataRequest(data_dir, split, limit=limit))
    corpus = task.corpus(data)
    probe = result["diagnostics"]["language_id_probe"]
    assert probe["languages"] == list(pair)
    expected = straightforward_probe([q.text for q in data.questions], [q.lang for q in data.questions], "query", pair)
    assert probe["questions"]["accuracy"] == expected
    assert probe["candidates"]["accuracy"] == straightforward_probe(
        list(corpus.texts), list(corpus.langs), "passage", pair
    )


def test_probe_on_real_xquad_r_equals_scikit_learn(registry: Registry, real_data: Path, tmp_path: Path) -> None:
    data_dir = real_data / "lareqa" / "xquad-r"
    result = run(registry, tmp_path, "lareqa", "hash-encoder", data_dir, limit=60)
    check(result, LAReQA(), data_dir, "test", 60, ("en", "zh"))
    assert result["diagnostics"]["language_id_probe"]["candidates"]["test"] == np.ceil((1180 + 1196) / 3)


def test_probe_on_mlqa_r_any_pair(registry: Registry, tmp_path: Path) -> None:
    data_dir = write_mlqa_fixture(tmp_path / "mlqa")
    result = run(registry, tmp_path, "mlqa-r:probe=de-en", "hash-encoder", data_dir)
    assert result["task"]["options"] == {"candidates": "concat", "probe": "de-en"}
    # the fixture has 2 German and 3 English questions: too few for a hold-out of both
    assert result["diagnostics"]["language_id_probe"]["questions"] is None
    check_candidates = result["diagnostics"]["language_id_probe"]["candidates"]
    assert check_candidates["train"] + check_candidates["test"] == 10
    data = MLQAR().load(DataRequest(data_dir, "dev"))
    corpus = MLQAR().corpus(data)
    assert check_candidates["accuracy"] == straightforward_probe(
        list(corpus.texts), list(corpus.langs), "passage", ("de", "en")
    )


def test_a_retriever_run_has_no_probe_and_a_bad_pair_is_refused(registry: Registry, tmp_path: Path) -> None:
    assert "language_id_probe" not in run(registry, tmp_path, "lareqa", "bm25")["diagnostics"]
    with pytest.raises(HarnessError, match="probe must name two different languages"):
        run(registry, tmp_path, "lareqa:probe=en-xx", "bm25")
