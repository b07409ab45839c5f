"""Where results go by default (``results/`` in the current folder, never the source tree), and
``harness leaderboard page``: a self-contained page of any leaderboard file, written or served."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import harness
from harness import leaderboard
from harness.files.io import read_json
from harness.leaderboard.page import PAGE_TEMPLATE
from tests.harness.fakes import fake_result
from tests.harness.leaderboard.boards import CARD, variant

Cli = Callable[..., tuple[int, str, str]]

#: The source tree of the harness under test.
CHECKOUT = Path(harness.__file__).resolve().parent.parent
#: Folders of the source tree that tools other than the harness write in.
NOT_SOURCE = {".git", ".venv", ".venv-ci", "__pycache__", ".pytest_cache", ".hypothesis"}
SCRIPT_DATA = '<script type="application/json" id="leaderboard-data">'
HOSTILE = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>", "a & b <!-- c"]


def _source_files() -> dict[str, int]:
    """Every file of the source tree with its modification time, outside the tools' folders."""
    files = {}
    for folder, subfolders, names in os.walk(CHECKOUT):
        subfolders[:] = [name for name in subfolders if name not in NOT_SOURCE]
        for name in names:
            path = Path(folder) / name
            files[str(path.relative_to(CHECKOUT))] = path.stat().st_mtime_ns
    return files


def test_the_readme_first_command_writes_under_the_current_folder_only(harness_cli: Cli) -> None:
    before = _source_files()
    code, out, err = harness_cli("run", "lareqa", "bm25", "--quiet")
    assert code == 0, err
    assert "leaderboard: results/leaderboard.json" in out
    board = read_json(Path("results/leaderboard.json"))
    (result,) = list(Path("results").rglob("result.json"))
    assert [entry["result_path"] for entry in board["entries"]] == [str(result)]
    assert sorted(p.name for p in Path().iterdir()) == ["results"]  # nothing else in the current folder
    assert _source_files() == before  # the checkout (and its example leaderboard) untouched
    code, out, _ = harness_cli("leaderboard", "show")
    assert code == 0 and out.startswith("lareqa (test) - main score: map")


def test_show_and_page_without_a_leaderboard_name_the_default(harness_cli: Cli) -> None:
    for command in (["leaderboard", "show"], ["leaderboard", "page"]):
        code, _, err = harness_cli(*command)
        assert code == 2
        assert (
            err == "error: no leaderboard at results/leaderboard.json yet: run `harness run` first, or pass "
            "--leaderboard\n"
        )


@pytest.fixture
def hostile_board(tmp_path: Path) -> Path:
    """A leaderboard whose model labels try to break out of the page's text and script."""
    path = tmp_path / "boards" / "hostile.json"
    for number, label in enumerate(HOSTILE):
        leaderboard.add_result(
            path,
            fake_result(
                task="t",
                label=label,
                split="test",
                languages=("en",),
                metric="acc",
                score=float(number),
                rows=[],
                finished_at="2026-11-21T00:00:00+00:00",
            ),
            Path(f"r{number}.json"),
        )
    return path


def _embedded(html: str) -> object:
    start = html.index(SCRIPT_DATA) + len(SCRIPT_DATA)
    return json.loads(html[start : html.index("</script>", start)])


def test_the_page_embeds_any_leaderboard_file_as_inert_text(harness_cli: Cli, hostile_board: Path) -> None:
    code, out, err = harness_cli("leaderboard", "page", "--leaderboard", hostile_board, "--output", "site/page.html")
    assert code == 0, err
    assert out == f"site/page.html: the page of {hostile_board} (3 entries)\n"
    html = Path("site/page.html").read_text(encoding="utf-8")
    template = PAGE_TEMPLATE.read_text(encoding="utf-8")
    assert html.count("</script>") == template.count("</script>") == 2  # no label closes a script element
    assert "<img" not in html and "<!--" not in html and "a & b" not in html
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in html
    embedded = _embedded(html)
    assert embedded["board"] == read_json(hostile_board)  # the labels come back exactly, as data
    assert sorted(entry["model"]["label"] for entry in embedded["board"]["entries"]) == sorted(HOSTILE)
    # ranked as `harness leaderboard show` ranks: one scope here, best first
    assert embedded["groups"] == [group.to_dict() for group in leaderboard.ranked(leaderboard.load(hostile_board))]
    assert [entry["model"] for entry in embedded["groups"][0]["entries"]] == HOSTILE[::-1]
    assert "innerHTML" not in template and "insertAdjacentHTML" not in template  # inserted as text only


def test_the_page_goes_beside_its_leaderboard_by_default(harness_cli: Cli, hostile_board: Path) -> None:
    code, out, err = harness_cli("leaderboard", "page", "--leaderboard", hostile_board)
    assert code == 0, err
    page = hostile_board.with_name("index.html")
    assert _embedded(page.read_text(encoding="utf-8"))["board"] == read_json(hostile_board)
    assert sorted(p.name for p in hostile_board.parent.iterdir()) == [
        "hostile.json",
        "index.html",
    ]  # written atomically: no temporary left, nor a lock


def test_a_folder_as_the_page_file_is_refused(harness_cli: Cli, hostile_board: Path) -> None:
    Path("site").mkdir()
    code, _, err = harness_cli("leaderboard", "page", "--leaderboard", hostile_board, "--output", "site")
    assert code == 2 and err == "error: --output site is a folder: name the HTML file to write\n"
    assert not any(Path("site").iterdir())


@pytest.fixture
def served(hostile_board: Path) -> Iterator[str]:
    server = leaderboard.page_server(hostile_board, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_served_page_is_the_written_one_read_afresh(served: str, hostile_board: Path) -> None:
    with urllib.request.urlopen(served + "/") as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert response.read().decode("utf-8") == leaderboard.page(leaderboard.load(hostile_board))
    board = read_json(hostile_board)
    board["entries"] = board["entries"][:1]
    hostile_board.write_text(json.dumps(board), encoding="utf-8")
    with urllib.request.urlopen(served + "/index.html") as response:
        assert len(_embedded(response.read().decode("utf-8"))["board"]["entries"]) == 1
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(served + "/leaderboard.json")
    assert error.value.code == 404  # the page only: no file of the folder is served


def test_a_port_that_cannot_be_bound_is_one_line(harness_cli: Cli, hostile_board: Path) -> None:
    code, _, err = harness_cli("leaderboard", "page", "--leaderboard", hostile_board, "--serve", "--port", "70000")
    assert code == 2 and err.startswith("error: cannot serve on 127.0.0.1:70000: ") and err.count("\n") == 1


def test_the_page_ranks_with_the_tie_marks(hostile_board: Path) -> None:
    board = leaderboard.load(hostile_board)
    intervals = {0.0: (-1.0, 0.5), 1.0: (0.5, 1.5), 2.0: (1.0, 2.5)}  # 2 overlaps 1, 1 overlaps 0: all tied
    board = dataclasses.replace(
        board, entries=tuple(dataclasses.replace(e, main_interval=intervals[e.main_score]) for e in board.entries)
    )
    (group,) = _embedded(leaderboard.page(board))["groups"]
    assert [(e["rank"], e["main_score"], e["tied_with"]) for e in group["entries"]] == [
        (1, 2.0, 1),
        (2, 1.0, 1),
        (3, 0.0, 1),
    ]


def test_the_page_ranks_the_zero_shot_entries_among_themselves(tmp_path: Path) -> None:
    """The page's zero-shot filter shows a ranking of the zero-shot entries alone (ranks 1, 2 and
    their own ties), not the full ranking with gaps; the cards come in the words of `show`."""
    path = tmp_path / "board.json"
    translated = {**CARD, "name": "tt", "zero_shot": False, "translated_training_data": True}
    for label, score, interval, card in (
        ("tt", 3.0, (2.9, 3.1), translated),
        ("zs-a", 2.0, (1.5, 2.5), CARD),
        ("run", 1.8, (1.7, 1.9), None),
        ("zs-b", 1.0, (0.0, 1.6), CARD),
    ):
        leaderboard.add_result(path, variant(label, score, interval=interval, card=card), Path(f"{label}.json"))
    data = _embedded(leaderboard.page(leaderboard.load(path)))
    (everything,) = data["groups"]
    assert [(e["rank"], e["model"], e["tied_with"]) for e in everything["entries"]] == [
        (1, "tt", None),
        (2, "zs-a", 2),
        (3, "run", 2),
        (4, "zs-b", None),
    ]  # zs-b clear of the run above it
    (zero_shot,) = data["zero_shot_groups"]
    assert [(e["rank"], e["model"], e["tied_with"]) for e in zero_shot["entries"]] == [
        (1, "zs-a", 1),
        (2, "zs-b", 1),
    ]  # not of zs-a: their intervals overlap
    labels = {e["key"]: e["model"]["label"] for e in data["board"]["entries"]}
    assert {labels[key]: text for key, text in data["cards"].items()} == {
        "tt": "translate-train; 118M parameters; licence apache-2.0",
        "zs-a": "zero-shot; 118M parameters; licence apache-2.0",
        "zs-b": "zero-shot; 118M parameters; licence apache-2.0",
    }
    assert data["pair_axes"] == ["context", "question"]
    template = PAGE_TEMPLATE.read_text(encoding="utf-8")
    assert 'id="zero-shot-only"' in template and "data.zero_shot_groups" in template
