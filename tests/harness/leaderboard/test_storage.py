"""The leaderboard file: concurrent runs all land, nothing is left beside it, bad entries never
reach it, and a re-run replaces its entry."""

from __future__ import annotations

import dataclasses
import fcntl
import multiprocessing
from pathlib import Path

import pytest

from harness import leaderboard
from harness.definitions.validation import validate
from harness.errors import HarnessError, InputError
from harness.files.io import read_json
from harness.leaderboard import storage
from harness.leaderboard.storage import locked
from tests.harness.leaderboard.boards import result_for

WRITERS = 4
EACH = 12


def add_many(args: tuple[str, int, int]) -> None:
    path, worker, count = args
    for i in range(count):
        leaderboard.add_result(Path(path), result_for(f"w{worker}-{i}", float(i)), Path(f"r{worker}-{i}.json"))


def test_processes_updating_at_once_lose_nothing_and_leave_no_lock(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    with multiprocessing.get_context("spawn").Pool(WRITERS) as pool:
        pool.map(add_many, [(str(path), worker, EACH) for worker in range(WRITERS)])
    board = read_json(path)
    validate(board, "leaderboard", file=path)
    assert sorted(e["model"]["label"] for e in board["entries"]) == sorted(
        f"w{worker}-{i}" for worker in range(WRITERS) for i in range(EACH)
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.json"]  # no lock, no temporary


def test_a_lock_file_left_by_a_killed_writer_neither_blocks_nor_stays(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    path.with_name("board.json.lock").write_bytes(b"")  # its holder died: the kernel let go of its lock
    leaderboard.add_result(path, result_for("m", 1.0), Path("a.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.json"]


def test_a_writer_waits_for_the_holder_and_gives_up_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    with locked(path), pytest.raises(HarnessError) as error, locked(path, timeout_s=0.05):
        pass
    assert str(error.value) == (
        f"{path}: another process has been updating it for 0.05 s (it holds {path}.lock); try again when it is done"
    )
    assert not path.with_name("board.json.lock").exists()


def test_a_waiter_whose_lock_file_was_deleted_locks_the_one_at_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between a writer's open of the lock file and its flock, another writer may take the lock,
    update and delete the file: the first then holds a lock on a file nobody else will open, and
    must start again on the file at the path, or two writers would update the board at once."""
    path = tmp_path / "board.json"
    flock = fcntl.flock
    interleaved: list[int] = []

    def another_writer_first(fd: int, operation: int) -> None:
        if not interleaved:
            interleaved.append(fd)
            with locked(path):  # takes the lock, then deletes the file this writer has open
                pass
        flock(fd, operation)

    monkeypatch.setattr(storage.fcntl, "flock", another_writer_first)
    with locked(path):
        assert interleaved  # the other writer came and went between this one's open and flock
        with pytest.raises(HarnessError), locked(path, timeout_s=0.05):  # the file at the path is held
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_same_key_replaces(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, result_for("weak", 10.0), Path("a.json"))
    leaderboard.add_result(path, result_for("strong", 60.0), Path("b.json"))
    entry = leaderboard.add_result(path, result_for("weak", 20.0), Path("c.json"))  # a re-run replaces
    board = leaderboard.load(path)
    assert sorted((e.model.label, e.main_score, e.result_path) for e in board.entries) == [
        ("strong", 60.0, "b.json"),
        ("weak", 20.0, "c.json"),
    ]
    assert entry in board.entries


def test_an_invalid_entry_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    leaderboard.add_result(path, result_for("ok", 1.0), Path("a.json"))
    before = path.read_bytes()
    good = result_for("bad", 2.0)
    bad = dataclasses.replace(good, rows=(dataclasses.replace(good.rows[0], metrics={}), *good.rows[1:]))
    with pytest.raises(InputError, match="does not match schema leaderboard"):
        leaderboard.add_result(path, bad, Path("b.json"))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board.json"]


def test_a_missing_board_loads_empty(tmp_path: Path) -> None:
    assert leaderboard.load(tmp_path / "none.json").entries == ()
