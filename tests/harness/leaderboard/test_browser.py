"""The leaderboard page in a real browser: the distribution's headless Chromium, driven through its
chromedriver by selenium, on a leaderboard made from real runs (LAReQA BM25, MLQA G-XLT oracle and
two replayed prediction folders, one of them under a hostile model label, and the vendored XTREME
mock submission). It checks what only a browser shows: heatmap colours, tie marks, escaping, a
layout that does not run off the page; and saves a screenshot in ``$HARNESS_ARTIFACTS`` (else the
test's temporary folder)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.files.io import read_json
from tests.conftest import VENDORED
from tests.harness.leaderboard.boards import paired_marks

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Chromium and chromedriver (Debian packages chromium and chromium-driver; .ci/run installs them)",
)
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the test extra)")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402 (after the skip)
from selenium.webdriver.common.by import By  # noqa: E402

Cli = Callable[..., tuple[int, str, str]]
HOSTILE = "<img src=x onerror=alert(1)>"
ZERO_SHOT = {
    "name": "zs",
    "zero_shot": True,
    "translated_training_data": False,
    "parameters": 550_000_000,
    "link": "javascript:alert(3)",
    "description": "a card's description",
}
TRANSLATE_TRAIN = {
    "name": "tt",
    "zero_shot": False,
    "translated_training_data": True,
    "license": "MIT",
    "link": "https://example.org/tt",
}
#: The flags of a quiet, reproducible headless run: no network services, no first-run UI.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _spoiled(oracle: Path, out: Path, blank: Callable[[int, int], int]) -> Path:
    """The oracle's G-XLT prediction files with the first ``blank(i, j)`` answers of pair (i, j) emptied."""
    out.mkdir()
    for n, file in enumerate(sorted(oracle.iterdir())):
        answers = read_json(file)
        spoiled = {qid: "" if k < blank(n // 7, n % 7) else text for k, (qid, text) in enumerate(answers.items())}
        (out / file.name).write_text(json.dumps(spoiled, ensure_ascii=False), encoding="utf-8")
    return out


@pytest.fixture
def board(harness_cli: Cli, tmp_path: Path) -> Path:
    """A leaderboard made by the harness's own commands."""
    for args in (["run", "lareqa", "bm25"], ["run", "mlqa:mode=gxlt", "oracle", "--output-dir", "oracle"]):
        code, _, err = harness_cli(*args, "--quiet")
        assert code == 0, err
    (oracle,) = Path("oracle").rglob("predictions")
    first = _spoiled(oracle, tmp_path / "first", lambda i, j: (i + 2 * j) % 13)
    second = _spoiled(oracle, tmp_path / "second", lambda i, j: (i + 2 * j) % 13 + (i == j))
    for folder, label in ((first, "spoiled"), (second, HOSTILE)):
        code, _, err = harness_cli(
            "run",
            "mlqa:mode=gxlt",
            "predictions",
            "--model-args",
            json.dumps({"file": str(folder), "label": label}),
            "--quiet",
        )
        assert code == 0, err
    mock = VENDORED / "xtreme" / "mock_test_data"
    code, _, err = harness_cli(
        "score", "xtreme", "--data-dir", mock / "labels", "--predictions", mock / "predictions", "--quiet"
    )
    assert code == 0, err
    # two submissions of BM25's LAReQA rankings with model cards, one zero-shot (whose link is a script)
    (rankings,) = Path("results/lareqa").rglob("predictions.jsonl")
    for name, card in (("zero-shot", ZERO_SHOT), ("translate-train", TRANSLATE_TRAIN)):
        folder = tmp_path / "inbox" / name
        folder.mkdir(parents=True)
        shutil.copy(rankings, folder / "rankings.jsonl")
        (folder / "submission.json").write_text(
            json.dumps({"model": card, "entries": [{"task": "lareqa", "predictions": "rankings.jsonl"}]}),
            encoding="utf-8",
        )
    code, _, err = harness_cli("submit", tmp_path / "inbox", "--quiet")
    assert code == 0, err
    return Path("results/leaderboard.json")


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1100,900"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(part) for part in css[css.index("(") + 1 : css.index(")")].split(",")[:3])


def _luminance(css: str) -> float:
    """Relative luminance (WCAG) of a CSS ``rgb(...)`` colour: lower is darker."""

    def linear(c: int) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in _rgb(css))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _shown(value: float) -> str:
    """A percent as the page writes it: always two decimals (one format per metric, issue 31)."""
    return f"{value:.2f}"


#: The lightest colour of the heatmaps' scale (ColorBrewer Blues' first stop).
LIGHTEST = "rgba(247, 251, 255, 1)"


def test_the_page_in_chromium(harness_cli: Cli, board: Path, browser: object, tmp_path: Path) -> None:
    code, _, err = harness_cli("leaderboard", "page", "--leaderboard", board, "--output", "page.html")
    assert code == 0, err
    browser.get(Path("page.html").resolve().as_uri())
    entries = {e["model"]["label"]: e for e in read_json(board)["entries"] if e["task"] == "mlqa"}

    # escaping: the hostile label is text, no element was made of it, no script of it ran
    assert browser.find_elements(By.TAG_NAME, "img") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (the access is the check)
    mlqa = browser.find_element(By.CSS_SELECTOR, 'section[data-task="mlqa"]')
    rows = mlqa.find_elements(By.CSS_SELECTOR, "table.ranked tr.entry")
    labels = [row.find_element(By.CSS_SELECTOR, "td.model").text for row in rows]
    # by main score: 100, then the two spoiled runs, whose scores are equal (their order is the
    # order they finished in, the same second here: any order)
    assert labels[0] == "oracle" and sorted(labels[1:]) == sorted(["spoiled", HOSTILE])
    assert entries["spoiled"]["main_score"] == entries[HOSTILE]["main_score"]

    # tie marks, against the rule applied here to the intervals the runs recorded
    intervals = [entries[label]["main_interval"] for label in labels]
    assert intervals[0] == [100.0, 100.0] and intervals[1][1] < 100.0  # the oracle is ahead of both
    assert intervals[2][0] <= intervals[1][1] and intervals[1][0] <= intervals[2][1]  # these two overlap
    assert [row.find_element(By.CSS_SELECTOR, "td.rank").text for row in rows] == ["1", "=2", "=2"]
    # what the intervals resampled: MLQA's parallel questions, whole across languages
    assert all(
        "clusters of parallel questions (question id)"
        in row.find_element(By.CSS_SELECTOR, ".interval").get_attribute("title")
        for row in rows
    )
    assert "overlaps the interval of the entry above is tied with it" in browser.find_element(By.ID, "rules").text

    # heatmaps: one per G-XLT entry, visible at once; cells where the result puts them (rows =
    # context, columns = question), darker for higher numbers on the table's one scale
    maps = mlqa.find_elements(By.CSS_SELECTOR, ".heatmap table")
    assert [m.find_element(By.TAG_NAME, "caption").text for m in maps] == [f"{label}: f1" for label in labels]
    assert all(m.is_displayed() for m in maps)
    cells = []
    for table, label in zip(maps, labels):
        rows_by_pair = {
            tuple(r["languages"]): r["metrics"]["f1"]
            for r in entries[label]["rows"]
            if len(r.get("languages", [])) == 2
        }
        questions = [th.text for th in table.find_elements(By.CSS_SELECTOR, "tr:first-of-type th")[1:]]
        for tr in table.find_elements(By.CSS_SELECTOR, "tr")[1:]:
            context = tr.find_element(By.TAG_NAME, "th").text
            for question, td in zip(questions, tr.find_elements(By.TAG_NAME, "td")):
                assert float(td.get_attribute("data-value")) == rows_by_pair[(context, question)]
                assert td.text == _shown(rows_by_pair[(context, question)])  # F1's one format
                cells.append(
                    (rows_by_pair[(context, question)], _luminance(td.value_of_css_property("background-color")))
                )
        assert len(rows_by_pair) == 49 and len(questions) == 7
    cells.sort()
    assert len({value for value, _ in cells}) > 10  # the spoiled runs give a spread of numbers
    for (low, low_lum), (high, high_lum) in itertools.pairwise(cells):
        assert high_lum <= low_lum if high > low else high_lum == low_lum
    assert cells[-1][1] < cells[0][1] / 4  # the extremes clearly apart
    assert "context" in maps[0].text and "question" in maps[0].text
    assert mlqa.find_element(By.CSS_SELECTOR, ".legend").is_displayed()

    # XTREME: every task and group score of the submission, under its own column
    xtreme = browser.find_element(By.CSS_SELECTOR, 'section[data-task="xtreme"]')
    heads = [th.text for th in xtreme.find_elements(By.CSS_SELECTOR, "table.ranked tr:first-of-type th")]
    (entry,) = [e for e in read_json(board)["entries"] if e["task"] == "xtreme"]
    (row,) = xtreme.find_elements(By.CSS_SELECTOR, "table.ranked tr.entry")
    cells_by_head = dict(zip(heads, [td.text for td in row.find_elements(By.TAG_NAME, "td")]))
    expected = {
        "classification": 41.04761904761905,
        "tagging": 63.95299730746348,
        "qa": 80.37568011593986,
        "retrieval": 54.30555555555556,
        "pawsx": 51.42857142857143,
        "xnli": 30.666666666666668,
        "panx": 57.50793650793652,
        "udpos": 70.39805810699043,
        "bucc2018": 55.0,
        "tatoeba": 53.611111111111114,
        "xquad": 78.61570247933884,
        "mlqa": 69.45578231292518,
        "tydiqa": 93.05555555555556,
    }  # the official evaluate.py's numbers (tests/fixtures/xtreme/README.md)
    assert {head: cells_by_head[head] for head in expected} == {head: _shown(v) for head, v in expected.items()}
    low, high = entry["main_interval"]  # the all_task row's bootstrap interval
    assert (
        cells_by_head["all_task (percent) [95% interval]"]
        == f"{_shown(62.1932649076773)} [{_shown(low)}, {_shown(high)}]"
    )

    # LAReQA: the language matrices its result carries (Figure 4's one_target_mrr), cell by cell
    (lareqa_entry,) = [e for e in read_json(board)["entries"] if e["task"] == "lareqa" and e["kind"] == "run"]
    mrr = lareqa_entry["matrices"]["one_target_mrr"]
    lareqa = browser.find_element(By.CSS_SELECTOR, 'section[data-task="lareqa"]')
    (figure,) = [
        t
        for t in lareqa.find_elements(By.CSS_SELECTOR, ".heatmap table")
        if t.find_element(By.TAG_NAME, "caption").text == "BM25: one_target_mrr"
    ]
    shown = {}
    for tr in figure.find_elements(By.CSS_SELECTOR, "tr")[1:]:
        question = tr.find_element(By.TAG_NAME, "th").text
        for answer, td in zip(mrr[question], tr.find_elements(By.TAG_NAME, "td")):
            shown[(question, answer)] = (
                float(td.get_attribute("data-value")),
                _luminance(td.value_of_css_property("background-color")),
            )
    assert {k: v for k, (v, _) in shown.items()} == {(q, a): v for q, row in mrr.items() for a, v in row.items()}
    by_value = sorted(shown.values())  # a higher number is never a lighter cell
    assert all(l1 >= l2 - 1e-9 for (_, l1), (_, l2) in itertools.pairwise(by_value))

    # model cards: in the words of `leaderboard show`, a web link as a link, any other as text
    ranked_rows = lareqa.find_elements(By.CSS_SELECTOR, "table.ranked tr.entry")
    heads = [th.text for th in lareqa.find_elements(By.CSS_SELECTOR, "table.ranked tr:first-of-type th")]
    label_of = {e["key"]: e["model"]["label"] for e in read_json(board)["entries"]}
    card_cells = {
        label_of[row.get_attribute("data-key")]: row.find_element(By.CSS_SELECTOR, "td.card") for row in ranked_rows
    }
    assert "model card" in heads and sorted(card_cells) == ["BM25", "tt", "zs"]
    assert card_cells["zs"].text == "zero-shot; 550M parameters; javascript:alert(3)"
    assert card_cells["zs"].find_elements(By.TAG_NAME, "a") == []
    assert card_cells["zs"].get_attribute("title") == "a card's description"
    assert card_cells["tt"].text == "translate-train; licence MIT; https://example.org/tt"
    (link,) = card_cells["tt"].find_elements(By.TAG_NAME, "a")
    assert link.get_attribute("href") == "https://example.org/tt"
    assert card_cells["BM25"].text == "\u2013"

    # the zero-shot filter: only entries whose card says so, ranked among themselves
    browser.find_element(By.ID, "zero-shot-only").click()
    sections = browser.find_elements(By.CSS_SELECTOR, "section.group")
    assert [section.get_attribute("data-task") for section in sections] == ["lareqa"]
    (row,) = sections[0].find_elements(By.CSS_SELECTOR, "table.ranked tr.entry")
    assert row.find_element(By.CSS_SELECTOR, "td.rank").text == "1"
    assert label_of[row.get_attribute("data-key")] == "zs"
    browser.find_element(By.ID, "zero-shot-only").click()
    assert [
        section.get_attribute("data-task") for section in browser.find_elements(By.CSS_SELECTOR, "section.group")
    ] == ["lareqa", "mlqa", "xtreme"]  # all back
    xtreme = browser.find_element(By.CSS_SELECTOR, 'section[data-task="xtreme"]')
    row = xtreme.find_element(By.CSS_SELECTOR, "table.ranked tr.entry")

    # the model column stays put and wide tables scroll inside their box, not the page
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    scroller = xtreme.find_element(By.CSS_SELECTOR, ".scroll")
    assert browser.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", scroller)
    model_cell = row.find_element(By.CSS_SELECTOR, "td.model")
    assert model_cell.value_of_css_property("position") == "sticky"
    x = model_cell.location["x"]
    browser.execute_script("arguments[0].scrollLeft = 400", scroller)
    assert model_cell.location["x"] == x

    artifacts = Path(os.environ.get("HARNESS_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    browser.execute_script("arguments[0].scrollLeft = 0", scroller)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1100, height + 150)
    assert browser.save_screenshot(str(artifacts / "leaderboard-page.png"))


def test_an_all_zero_heatmap_is_lightest_and_one_entry_is_one(harness_cli: Cli, browser: object) -> None:
    """Issue 31: a G-XLT matrix of zeros was drawn darkest with the legend "0 - 0", and the page said
    "1 entries"."""
    code, _, err = harness_cli("run", "mlqa:mode=gxlt", "empty", "--quiet")
    assert code == 0, err
    code, out, err = harness_cli(
        "leaderboard", "page", "--leaderboard", "results/leaderboard.json", "--output", "page.html"
    )
    assert code == 0, err
    assert out == "page.html: the page of results/leaderboard.json (1 entry)\n"
    browser.get(Path("page.html").resolve().as_uri())
    assert browser.find_element(By.ID, "meta").text.startswith("1 entry, updated ")
    cells = browser.find_elements(By.CSS_SELECTOR, ".heatmap td")
    assert len(cells) == 49 and {td.text for td in cells} == {"0.00"}
    assert {td.value_of_css_property("background-color") for td in cells} == {LIGHTEST}
    legend = browser.find_element(By.CSS_SELECTOR, ".legend").text.split("\n")
    assert legend[:3] == ["f1 (percent):", "0.00", "100.00"]  # the metric's full scale, not "0 - 0"
    # one format per metric: every F1 on the page with two decimals, the count an integer
    (row,) = browser.find_elements(By.CSS_SELECTOR, "table.ranked tr.entry")
    assert row.find_element(By.CSS_SELECTOR, "td.main").text == "0.00 [0.00, 0.00]"


SHIPPED = Path(__file__).resolve().parents[3] / "leaderboard"


def test_the_shipped_page_in_chromium(harness_cli: Cli, browser: object) -> None:
    """The page of the shipped board (written by `harness leaderboard page`, as
    benchmarks/reference_runs.py does): intervals, the papers' results apart and unranked, behind
    their box, and one model's table across tasks."""
    code, _, err = harness_cli(
        "leaderboard", "page", "--leaderboard", SHIPPED / "leaderboard.json", "--output", "page.html"
    )
    assert code == 0, err
    browser.get(Path("page.html").resolve().as_uri())
    board = read_json(SHIPPED / "leaderboard.json")
    mains = browser.find_elements(By.CSS_SELECTOR, "table.ranked td.main")
    assert len(mains) == len(board["entries"])
    assert all(td.find_elements(By.CSS_SELECTOR, ".interval") for td in mains)  # every entry has its interval
    # reported: its own section after the boards, in no ranked table, no rank column
    reported = browser.find_element(By.ID, "reported")
    assert reported.is_displayed()
    assert browser.execute_script(
        "return document.getElementById('boards').compareDocumentPosition("
        "document.getElementById('reported')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    rows = reported.find_elements(By.CSS_SELECTOR, "tr.reported-row")
    papers = sum(len(read_json(path)["results"]) for path in (SHIPPED / "reported").glob("*.json"))
    assert len(rows) == papers
    assert browser.find_elements(By.CSS_SELECTOR, "table.ranked tr.reported-row") == []
    assert reported.value_of_css_property("border-top-style") == "dashed"
    first = reported.find_element(By.CSS_SELECTOR, "section.reported-group")
    heads = [th.text for th in first.find_elements(By.CSS_SELECTOR, "tr:first-of-type th")]
    assert heads[:2] == ["system", "map (fraction)"] and "#" not in heads and heads[-2:] == ["source", "model card"]
    cells = [td.text for td in first.find_element(By.CSS_SELECTOR, "tr.reported-row").find_elements(By.TAG_NAME, "td")]
    assert cells[:2] == ["En-En", "0.29"] and cells[-2] == "Roy et al. 2020, Table 2"  # as printed
    mono = next(s for s in reported.find_elements(By.CSS_SELECTOR, "section.reported-group") if "pool=mono" in s.text)
    cells = [td.text for td in mono.find_element(By.CSS_SELECTOR, "tr.reported-row").find_elements(By.TAG_NAME, "td")]
    assert cells[1:3] == ["0.80", "0.76"]  # to its table's two places, as the paper prints it (the JSON holds 0.8)
    link = first.find_element(By.CSS_SELECTOR, "tr.reported-row a")
    assert link.get_attribute("href") == "https://arxiv.org/abs/2004.05484"
    browser.find_element(By.ID, "show-reported").click()  # the filter
    assert not reported.is_displayed()
    browser.find_element(By.ID, "show-reported").click()
    assert reported.is_displayed()
    # one model across tasks
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "model-select")).select_by_value("BM25")
    shown = browser.find_elements(By.CSS_SELECTOR, "#model-table tr.model-row")
    bm25 = [e for e in board["entries"] if e["model"]["label"] == "BM25"]
    assert sorted(tr.get_attribute("data-key") for tr in shown) == sorted(e["key"] for e in bm25)
    assert len({tr.find_element(By.TAG_NAME, "td").text for tr in shown}) > 1  # across tasks


def test_paired_comparisons_decide_the_ties_on_the_page(
    harness_cli: Cli, board: Path, browser: object, tmp_path: Path
) -> None:
    """After ``leaderboard pair`` the page marks MLQA's neighbours by their paired comparisons (the
    rule restated here on the numbers the board holds), and each rank names its comparison."""
    code, out, err = harness_cli("leaderboard", "pair", "--file", board)
    assert code == 0, err
    assert "4 of 4 pairs of neighbours compared question by question" in out
    raw = read_json(board)
    runs = {e["run_id"]: e for e in raw["entries"] if e["task"] == "mlqa"}
    mlqa_pairs = [p for p in raw["paired"] if p["run_a"] in runs]
    assert len(mlqa_pairs) == 2  # oracle with the better spoiled run, the two spoiled runs
    code, _, err = harness_cli("leaderboard", "page", "--leaderboard", board, "--output", "page.html")
    assert code == 0, err
    browser.get(Path("page.html").resolve().as_uri())
    mlqa = browser.find_element(By.CSS_SELECTOR, 'section[data-task="mlqa"]')
    rows = mlqa.find_elements(By.CSS_SELECTOR, "table.ranked tr.entry")
    order = [row.get_attribute("data-key") for row in rows]
    by_key = {e["key"]: e for e in runs.values()}
    ranked_runs = [by_key[key]["run_id"] for key in order]
    expected = paired_marks(ranked_runs, mlqa_pairs)
    assert [row.find_element(By.CSS_SELECTOR, "td.rank").text for row in rows] == expected
    for i in range(1, len(order)):
        (p,) = [p for p in mlqa_pairs if {p["run_a"], p["run_b"]} == {ranked_runs[i - 1], ranked_runs[i]}]
        assert p["run_a"] == ranked_runs[i - 1]  # stored above first: the difference is above minus here
        assert p["difference"] == pytest.approx(by_key[order[i - 1]]["main_score"] - by_key[order[i]]["main_score"])
        title = rows[i].find_element(By.CSS_SELECTOR, "td.rank span").get_attribute("title")
        assert title.startswith("the entry above minus this one, question by question: ")
    # the top of a tie (its mark its own rank) names the comparison with the entry below, not overlap
    tops = [i for i, mark in enumerate(expected) if mark == f"={i + 1}"]
    assert tops  # the two spoiled runs, apart on 7 questions of 210: tied
    for i in tops:
        title = rows[i].find_element(By.CSS_SELECTOR, "td.rank span").get_attribute("title")
        assert "this entry minus the one below, question by question: " in title
