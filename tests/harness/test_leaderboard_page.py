"""Where results go by default (``results/`` in the current folder, never the source tree), and
``harness leaderboard page``: a self-contained page of any leaderboard file, written or served."""

from __future__ import annotations

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
from harness.io import read_json
from tests.harness.fakes import fake_result

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
        assert err == "error: no leaderboard at results/leaderboard.json yet: run `harness run` first, or pass " \
                      "--leaderboard\n"


@pytest.fixture
def hostile_board(tmp_path: Path) -> Path:
    """A leaderboard whose model labels try to break out of the page's text and script."""
    path = tmp_path / "boards" / "hostile.json"
    for number, label in enumerate(HOSTILE):
        leaderboard.add_result(path, fake_result(task="t", label=label, split="test", languages=("en",), metric="acc",
                                                 score=float(number), rows=[], finished_at="2026-11-21T00:00:00+00:00"),
                               Path(f"r{number}.json"))
    return path


def _embedded(html: str) -> object:
    start = html.index(SCRIPT_DATA) + len(SCRIPT_DATA)
    return json.loads(html[start : html.index("</script>", start)])


def test_the_page_embeds_any_leaderboard_file_as_inert_text(harness_cli: Cli, hostile_board: Path) -> None:
    code, out, err = harness_cli("leaderboard", "page", "--leaderboard", hostile_board, "--output", "site/page.html")
    assert code == 0, err
    assert out == f"site/page.html: the page of {hostile_board} (3 entries)\n"
    html = Path("site/page.html").read_text(encoding="utf-8")
    template = leaderboard.PAGE_TEMPLATE.read_text(encoding="utf-8")
    assert html.count("</script>") == template.count("</script>") == 2  # no label closes a script element
    assert "<img" not in html and "<!--" not in html and "a & b" not in html
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in html
    embedded = _embedded(html)
    assert embedded["board"] == read_json(hostile_board)  # the labels come back exactly, as data
    assert sorted(entry["model"]["label"] for entry in embedded["board"]["entries"]) == sorted(HOSTILE)
    # ranked as `harness leaderboard show` ranks: one scope here, best first
    assert embedded["groups"] == leaderboard.ranked(leaderboard.load(hostile_board))
    assert [entry["model"] for entry in embedded["groups"][0]["entries"]] == HOSTILE[::-1]
    assert "innerHTML" not in template and "insertAdjacentHTML" not in template  # inserted as text only


def test_the_page_goes_beside_its_leaderboard_by_default(harness_cli: Cli, hostile_board: Path) -> None:
    code, out, err = harness_cli("leaderboard", "page", "--leaderboard", hostile_board)
    assert code == 0, err
    page = hostile_board.with_name("index.html")
    assert _embedded(page.read_text(encoding="utf-8"))["board"] == read_json(hostile_board)
    assert sorted(p.name for p in hostile_board.parent.iterdir() if not p.name.endswith(".lock")) == [
        "hostile.json", "index.html"]  # written atomically: no temporary left


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


def _with_interval(low: float, high: float) -> dict[str, object]:
    return {"main_interval": [low, high]}


def test_tie_marks_chain_overlapping_neighbours_only() -> None:
    # ranked best first: 2 overlaps 3, 3 overlaps 4 (so 2-4 are one tie, though 2 and 4 do not
    # overlap), 5 touches 4's interval only at a shared end point, 6 has no interval, 7 none above
    entries = [_with_interval(9, 10), _with_interval(6, 8), _with_interval(5, 6.5), _with_interval(4, 5.5),
               _with_interval(3, 4), {}, _with_interval(3, 4)]
    assert leaderboard.tie_marks(entries) == [None, 2, 2, 2, 2, None, None]
    assert leaderboard.tie_marks([]) == []
    assert leaderboard.tie_marks([_with_interval(1, 2)]) == [None]


def test_the_page_ranks_with_the_tie_marks(hostile_board: Path) -> None:
    board = leaderboard.load(hostile_board)
    intervals = {0.0: [-1.0, 0.5], 1.0: [0.5, 1.5], 2.0: [1.0, 2.5]}  # 2 overlaps 1, 1 overlaps 0: all tied
    for entry in board["entries"]:
        entry["main_interval"] = intervals[entry["main_score"]]
    (group,) = _embedded(leaderboard.page(board))["groups"]
    assert [(e["rank"], e["main_score"], e["tied_with"]) for e in group["entries"]] == [(1, 2.0, 1), (2, 1.0, 1),
                                                                                        (3, 0.0, 1)]
    assert [line.split()[0] for line in leaderboard.render(board).splitlines()[4:]] == ["=1", "=1", "=1"]  # show too
