"""Dense retrieval across gloo processes (torchrun): each rank encodes and keeps its own shards,
the ranks merge per-query top-k lists, and the ranking equals the one-process ranking exactly;
a killed rank resumes from its own shards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

WORKER = Path(__file__).with_name("distributed_worker.py")
PASSAGES = 1030
SHARD_SIZE = 50  # 21 shards, the last of 30 passages
N_SHARDS = -(-PASSAGES // SHARD_SIZE)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TSV corpus in psgs_w100's layout whose texts start with their passage number."""
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("corpus") / "psgs.tsv"
    rows = [
        f'{i + 1}\t"p{i} {" ".join(f"w{w}" for w in rng.integers(0, 40, size=12))}"\tTitle {i // 3}'
        for i in range(PASSAGES)
    ]
    path.write_text("id\ttext\ttitle\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def run(corpus: Path, folder: Path, processes: int | None, **env: str) -> subprocess.CompletedProcess[str]:
    """The worker on one plain process (``processes=None``) or as ``processes`` torchrun ranks."""
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    launcher = (
        [] if processes is None else ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(processes)]
    )
    command = [
        sys.executable,
        *launcher,
        str(WORKER),
        str(corpus),
        str(folder / "index"),
        str(folder / "out.npz"),
        str(folder / "logs"),
        str(SHARD_SIZE),
        "10",
    ]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1", **env}
    )


def encoded_by(folder: Path, rank: int) -> list[int]:
    """The shards rank ``rank`` encoded (from the first passage of each), in order."""
    log = folder / "logs" / f"rank{rank}.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [int(line.split()[1][1:]) // SHARD_SIZE for line in lines if line.startswith("encoded")]


def held_by(folder: Path, rank: int) -> list[int]:
    log = (folder / "logs" / f"rank{rank}.log").read_text(encoding="utf-8")
    return [int(line.split()[1]) for line in log.splitlines() if line.startswith("holds")]


@pytest.fixture(scope="module")
def one_process(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    folder = tmp_path_factory.mktemp("single")
    done = run(corpus, folder, None)
    assert done.returncode == 0, done.stderr
    assert encoded_by(folder, 0) == list(range(N_SHARDS))
    return dict(np.load(folder / "out.npz"))


@pytest.mark.parametrize("processes", [1, 2, 4])
def test_ranks_merge_to_the_one_process_ranking(
    corpus: Path, one_process: dict[str, np.ndarray], tmp_path: Path, processes: int
) -> None:
    done = run(corpus, tmp_path, processes)
    assert done.returncode == 0, done.stderr[-3000:]
    merged = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(merged["indices"], one_process["indices"])
    np.testing.assert_array_equal(merged["scores"], one_process["scores"])  # bit for bit
    for rank in range(processes):  # rank r encoded and holds shards r, r + N, ... and no other
        assert encoded_by(tmp_path, rank) == list(range(rank, N_SHARDS, processes))
        assert held_by(tmp_path, rank) == [len(range(rank, N_SHARDS, processes))]
    assert len(list((tmp_path / "index").glob("vectors-*.npy"))) == N_SHARDS


def test_a_killed_rank_resumes_from_its_own_shards(
    corpus: Path, one_process: dict[str, np.ndarray], tmp_path: Path
) -> None:
    killed = run(corpus, tmp_path, 2, KILL_RANK="1", KILL_AFTER="3")
    assert killed.returncode != 0
    assert encoded_by(tmp_path, 1) == [1, 3, 5]  # three shards written, then killed
    first_rank0 = encoded_by(tmp_path, 0)
    # Rank 0 is stopped when rank 1 dies, perhaps in the middle of a shard it had begun (logged).
    written = {int(path.stem.split("-")[1]) for path in (tmp_path / "index").glob("vectors-*.npy")}
    (tmp_path / "out.npz").unlink(missing_ok=True)
    resumed = run(corpus, tmp_path, 2)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert encoded_by(tmp_path, 1) == [1, 3, 5, *range(7, N_SHARDS, 2)]  # only what it had not written
    assert encoded_by(tmp_path, 0)[len(first_rank0) :] == [s for s in range(0, N_SHARDS, 2) if s not in written]
    merged = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(merged["indices"], one_process["indices"])
    np.testing.assert_array_equal(merged["scores"], one_process["scores"])


def test_each_rank_searches_its_own_faiss_index(
    corpus: Path, one_process: dict[str, np.ndarray], tmp_path: Path
) -> None:
    """faiss flat (exact) over each rank's shards, its positions mapped back to the corpus's:
    the same top 10 as one process's exact search (faiss sums in its own order: scores agree
    to float32 rounding, and so may the order of near ties)."""
    done = run(corpus, tmp_path, 2, INDEX_KIND="flat")
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "index").glob("faiss-*")) == [
        "faiss-flat-rank0of2.index",
        "faiss-flat-rank0of2.json",
        "faiss-flat-rank1of2.index",
        "faiss-flat-rank1of2.json",
    ]
    merged = np.load(tmp_path / "out.npz")
    assert [set(row) for row in merged["indices"]] == [set(row) for row in one_process["indices"]]
    np.testing.assert_allclose(merged["scores"], one_process["scores"], rtol=1e-5)
