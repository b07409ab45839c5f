"""Shared fixtures: the real benchmark folder (or a skip), tiny random models, a CLI runner."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tiny_models import build_tiny_causal_lm, build_tiny_encoder, build_tiny_reader, build_tiny_seq2seq


@pytest.fixture(scope="session")
def real_data() -> Path:
    """The folder of real benchmark files named by HARNESS_REAL_DATA; tests using it skip without it."""
    folder = os.environ.get("HARNESS_REAL_DATA")
    if not folder:
        pytest.skip("HARNESS_REAL_DATA is not set")
    path = Path(folder).resolve()
    if not path.is_dir():
        pytest.skip(f"HARNESS_REAL_DATA={folder} is not a folder")
    return path


#: Official fixtures that may be redistributed, vendored with their licence notes in the layout
#: of the real-data folder (``xtreme/mock_test_data``, ``mkqa/...``).
VENDORED = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(params=["vendored", "real-data"])
def official_data(request: pytest.FixtureRequest) -> Path:
    """A folder with the official fixtures: the copies vendored under tests/fixtures (always, so a
    fresh clone checks the official numbers), then the real-data folder (when HARNESS_REAL_DATA is set)."""
    if request.param == "vendored":
        return VENDORED
    return request.getfixturevalue("real_data")


def _single_threaded_torch() -> None:
    """Tiny models' matrices are too small for threads to help; on a shared 2-core machine torch's
    threads only fight each other (a tiny reader's G-XLT run took 10x longer with 2 threads)."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer BERT with a WordPiece vocabulary trained on the demo data, saved like a
    real checkpoint (config.json, safetensors, tokenizer files)."""
    _single_threaded_torch()
    return build_tiny_encoder(tmp_path_factory.mktemp("tiny-encoder"))


@pytest.fixture(scope="session")
def tiny_reader_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer BERT extractive QA model (start/end head) with the same tokenizer."""
    _single_threaded_torch()
    return build_tiny_reader(tmp_path_factory.mktemp("tiny-reader"))


@pytest.fixture(scope="session")
def tiny_causal_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer Llama with a byte-level BPE vocabulary trained on the demo data."""
    _single_threaded_torch()
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-causal-lm"))


@pytest.fixture(scope="session")
def tiny_seq2seq_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer T5 with the same kind of vocabulary."""
    _single_threaded_torch()
    return build_tiny_seq2seq(tmp_path_factory.mktemp("tiny-seq2seq"))


@pytest.fixture
def harness_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., tuple[int, str, str]]:
    """Run ``harness ARGS...`` in-process inside an empty working folder; return (code, out, err)."""
    from harness.cli import main

    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never read or write the user's embedding cache, nor find the user's data home, nor
    reach the internet (a model name missing from the cache is not fetched from the hub; the
    download tests serve their own files on 127.0.0.1 and lift this)."""
    os.environ["HARNESS_CACHE_DIR"] = str(tmp_path_factory.mktemp("embedding-cache"))
    os.environ["HARNESS_DATA"] = str(tmp_path_factory.mktemp("data-home"))
    os.environ["HARNESS_OFFLINE"] = "1"


@pytest.fixture(autouse=True)
def _results_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every result any test writes is read back from disk through the typed model and must come
    out unchanged, so :class:`harness.results.result.RunResult` round-trips every result the suite makes."""
    from harness.files.io import read_json
    from harness.results.layout import RunFolder
    from harness.results.result import RunResult
    from harness.running import recording

    write = recording.write_result

    def write_and_read_back(result: RunResult, folder: RunFolder, leaderboard: Path | None) -> Path:
        path = write(result, folder, leaderboard)
        raw = read_json(path)
        assert RunResult.from_dict(raw).to_dict() == raw, f"{path} does not read back unchanged"
        assert RunResult.from_dict(raw) == result
        return path

    monkeypatch.setattr(recording, "write_result", write_and_read_back)
