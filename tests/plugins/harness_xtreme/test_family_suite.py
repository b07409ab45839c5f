"""The ``xtreme`` and ``xtreme-r`` suites run with a model family: each task with its own tiny model
(classifiers, taggers, a multiple-choice head, one reader for the three QA tasks, one encoder for
the retrieval tasks), then the runs scored as one submission. Each task's ``avg_metric``, the groups
and ``all_task`` are checked against the figures the runs computed themselves, averaged here as
evaluate.py does; mistakes in the family or the options stop the run before any work."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import harness.demo
from harness_xtreme.benchmark import Version, task_defs
from harness_xtreme.tatoeba import LASER_CODES
from tests.plugins.harness_hf.tiny_heads import build_tiny_head
from tests.plugins.harness_xtreme.test_labelled import error_line, label_lines, tag_sentences, write_pairs, write_words
from tests.plugins.harness_xtreme.test_mewslix import write_labels, write_mewslix
from tests.plugins.harness_xtreme.test_runs_as_submission import RUN
from tests.plugins.harness_xtreme.test_xcopa import write_labels as write_xcopa_labels
from tests.plugins.harness_xtreme.test_xcopa import write_xcopa

Cli = Callable[..., tuple[int, str, str]]
#: Each classification, tagging or multiple-choice task's tiny head (those of the test that runs
#: XTREME's tasks as a submission, and XCOPA's).
HEADS = {**RUN, "xcopa": ("hf-multiple-choice", "AutoModelForMultipleChoice", ["0", "1"])}
QA = ("xquad", "mlqa", "tydiqa")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def bucc_split(folder: Path, lang: str, split: str, pairs: int, lone: int) -> list[tuple[str, str]]:
    """BUCC files of one language and split: ``pairs`` translations plus ``lone`` sentences a side."""
    source = [(f"{lang}-{split}-{i:04d}", f"{lang} satz {i} uber das thema {i % 3}") for i in range(pairs + lone)]
    target = [(f"en-{split}-{i:04d}", f"english sentence {i} about topic {i % 3}") for i in range(pairs + lone)]
    write(folder / f"{lang}-en.{split}.{lang}", "".join(f"{i}\t{s}\n" for i, s in source))
    write(folder / f"{lang}-en.{split}.en", "".join(f"{i}\t{s}\n" for i, s in target[::-1]))
    return [(source[i][0], target[i][0]) for i in range(pairs)]


def write_inputs(official_data: Path, root: Path, version: Version) -> tuple[Path, Path]:
    """``data`` (inputs in XTREME's download layout) and ``labels`` (evaluate.py's label folder)
    for the tasks of ``version`` that run here: the mock labels where the mock has the language
    (else a few labels written here), with inputs of the same sizes; the QA label files are
    SQuAD-format data themselves (XQuAD's Romanian, absent from the mock, is a copy of English);
    Tatoeba, BUCC, Mewsli-X and LAReQA (the built-in demo set) written here with their gold."""
    mock = official_data / "xtreme" / "mock_test_data" / "labels"
    data, labels = root / "data", root / "labels"
    definitions = task_defs(version)
    for task, (model, _, names) in HEADS.items():
        if task not in definitions:
            continue
        for lang in definitions[task].languages:
            file = labels / task / f"test-{lang}.tsv"
            official = mock / task / file.name
            if model == "hf-multiple-choice":  # the mock has no XCOPA
                write_xcopa_labels(labels, {lang: [0, 1, 1, 0, 1]})
                write_xcopa(data / task, "test", lang, [0] * 5)
            elif model == "hf-classifier":
                write(
                    file, official.read_text(encoding="utf-8") if official.is_file() else f"{names[0]}\n{names[-1]}\n"
                )
                write_pairs(data / task, "test", lang, len(label_lines(file)))
            else:
                write(
                    file, official.read_text(encoding="utf-8") if official.is_file() else f"{names[0]}\n\n{names[1]}\n"
                )
                write_words(data / task, "test", lang, [len(s) for s in tag_sentences(file)])
    for task in QA:
        for lang in definitions[task].languages:
            official = mock / task / f"test-{lang}.json"
            for folder in (data, labels):
                write(
                    folder / task / official.name,
                    (official if official.is_file() else mock / task / "test-en.json").read_text(encoding="utf-8"),
                )
    for lang in definitions["tatoeba"].languages:  # English already sorted and unique: sorted line j is file line j
        code = LASER_CODES[lang]
        write(
            data / "tatoeba" / "v1" / f"tatoeba.{code}-eng.eng", "".join(f"english {i} of {lang}\n" for i in range(3))
        )
        write(data / "tatoeba" / "v1" / f"tatoeba.{code}-eng.{code}", "".join(f"{lang} {i}\n" for i in range(3)))
        write(labels / "tatoeba" / f"test-{lang}.tsv", "0\n1\n2\n")
    for lang in definitions["bucc2018"].languages if "bucc2018" in definitions else ():
        gold = bucc_split(data / "bucc2018", lang, "dev", 6, 2)
        write(data / "bucc2018" / f"{lang}-en.dev.gold", "".join(f"{a}\t{b}\n" for a, b in gold))
        gold = bucc_split(data / "bucc2018", lang, "test", 5, 3)
        write(labels / "bucc2018" / f"test-{lang}.tsv", "".join(f"{a}\t{b}\n" for a, b in gold))
    if "lareqa" in definitions:
        shutil.copytree(Path(harness.demo.__file__).parent / "parallel-qa", data / "lareqa" / "xquad-r")
    if "mewslix" in definitions:
        write_labels(labels, write_mewslix(data / "mewslix", "test", definitions["mewslix"].languages, blank=True))
    return data, labels


@pytest.fixture
def xtreme_inputs(official_data: Path, tmp_path: Path) -> tuple[Path, Path]:
    return write_inputs(official_data, tmp_path, "xtreme")


def family_file(folder: Path, encoder: Path, reader: Path, version: Version = "xtreme") -> Path:
    """A family folder: the tiny heads beside the file (named relative to it), encoder and reader
    by absolute paths."""
    models = {}
    for task, (model, head, names) in HEADS.items():
        if task in task_defs(version):
            build_tiny_head(folder / task, head, names, seed=len(task))
            models[task] = f"{model}:path={task}"
    models[",".join(QA)] = f"hf-reader:path={reader},max_length=128,stride=32"
    models["bucc2018,tatoeba" if version == "xtreme" else "tatoeba,lareqa,mewslix"] = f"hf-encoder:path={encoder}"
    write(folder / "family.json", json.dumps({"name": f"tiny-{version}", "models": models}))
    return folder / "family.json"


def result_of(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def figure(result: dict, version: Version = "xtreme") -> float:
    """A run's XTREME figure from its per-language rows: the mean over the languages of accuracy
    (classification, Tatoeba), F1 (tagging, BUCC), map@20 (Mewsli-X), or (mean EM + mean F1) / 2 (QA)."""
    task = result["task"]["name"]
    languages = task_defs(version)[task].languages
    rows = {row["subset"]: row["metrics"] for row in result["rows"]}
    if task in QA:
        return (
            sum(rows[lang]["exact_match"] for lang in languages) / len(languages)
            + sum(rows[lang]["f1"] for lang in languages) / len(languages)
        ) / 2
    metric = {
        "xnli": "accuracy",
        "pawsx": "accuracy",
        "xcopa": "accuracy",
        "tatoeba": "accuracy",
        "mewslix": "map@20",
    }.get(task, "f1")
    return sum(rows[lang][metric] for lang in languages) / len(languages)


def test_a_family_runs_the_xtreme_suite(
    xtreme_inputs: tuple[Path, Path], tiny_encoder_dir: Path, tiny_reader_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    data, labels = xtreme_inputs
    family = family_file(tmp_path / "family", tiny_encoder_dir, tiny_reader_dir)
    code, out, err = harness_cli("run", "xtreme", f"@{family}", "--data-dir", data, "--labels", labels, "--dry-run")
    assert code == 0, err
    plans = [line for line in out.splitlines() if line.startswith("model: ")]
    assert len(plans) == 6  # four heads, one reader for QA, one encoder for retrieval
    assert not (tmp_path / "results").exists()

    code, out, err = harness_cli(
        "run",
        "xtreme",
        f"@{family}",
        "--data-dir",
        data,
        "--labels",
        labels,
        "--device",
        "cpu",
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
    )
    assert code == 0, err
    reported = json.loads(out)["results"]
    assert [r["result"]["task"]["name"] for r in reported] == [
        "pawsx",
        "xnli",
        "panx",
        "udpos",
        "bucc2018",
        "tatoeba",
        "xquad",
        "mlqa",
        "tydiqa",
        "xtreme",
    ]
    runs = {r["result"]["task"]["name"]: r["result"] for r in reported[:-1]}
    # the tasks ran with the family's models (heads named relative to the family file), the QA
    # tasks and the retrieval tasks each as one suite with their shared model
    assert runs["xnli"]["model"]["name"] == "hf-classifier"
    assert {result["data"]["split"] for result in runs.values()} == {"test"}  # the split XTREME scores
    assert runs["xquad"]["provenance"]["execution"]["suite"] == list(QA)
    assert runs["tatoeba"]["provenance"]["execution"]["suite"] == ["bucc2018", "tatoeba"]
    figures = {task: figure(result) for task, result in runs.items()}

    scored = reported[-1]["result"]
    rows = {row["subset"]: row["metrics"] for row in scored["rows"]}
    for task, value in figures.items():
        assert rows[task]["avg_metric"] == pytest.approx(value, abs=1e-9), task
    assert rows["classification"]["avg_metric"] == pytest.approx((figures["pawsx"] + figures["xnli"]) / 2)
    assert rows["tagging"]["avg_metric"] == pytest.approx((figures["udpos"] + figures["panx"]) / 2)
    assert rows["qa"]["avg_metric"] == pytest.approx(sum(figures[t] for t in QA) / 3)
    assert rows["retrieval"]["avg_metric"] == pytest.approx((figures["bucc2018"] + figures["tatoeba"]) / 2)
    assert scored["main_score"]["metric"] == "all_task"
    assert scored["main_score"]["value"] == pytest.approx(math.fsum(figures.values()) / 9)
    identity = scored["model"]
    assert (identity["name"], identity["label"]) == ("model-family", "tiny-xtreme")
    assert identity["options"]["members"]["xnli"]["weights"] == runs["xnli"]["model"]["weights"]

    # the submission folder the scoring wrote is evaluate.py's layout, and scores to the same
    submission = Path(scored["predictions"]["path"])
    assert sorted(p.name for p in submission.iterdir()) == sorted(figures)
    code, out, err = harness_cli(
        "score",
        "xtreme",
        "--predictions",
        submission,
        "--data-dir",
        labels,
        "--json",
        "--quiet",
        "--no-leaderboard",
        "--bootstrap",
        "0",
        "--output-dir",
        tmp_path / "again",
    )
    assert code == 0, err
    assert json.loads(out)["results"][0]["result"]["main_score"]["value"] == scored["main_score"]["value"]

    # run again: every run resumes, and the family keeps one leaderboard entry per task
    code, out, err = harness_cli(
        "run",
        "xtreme",
        f"@{family}",
        "--data-dir",
        data,
        "--labels",
        labels,
        "--device",
        "cpu",
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
        "--resume",
    )
    assert code == 0, err
    again = json.loads(out)["results"]
    assert again[-1]["result"]["main_score"]["value"] == scored["main_score"]["value"]
    board = result_of(tmp_path / "results" / "leaderboard.json")
    assert [e["model"]["label"] for e in board["entries"] if e["task"] == "xtreme"] == ["tiny-xtreme"]


def test_a_family_runs_the_xtreme_r_suite(
    official_data: Path, tiny_encoder_dir: Path, tiny_reader_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    data, labels = write_inputs(official_data, tmp_path, "xtreme-r")
    family = family_file(tmp_path / "family", tiny_encoder_dir, tiny_reader_dir, "xtreme-r")
    code, out, err = harness_cli(
        "run",
        "xtreme-r",
        f"@{family}",
        "--data-dir",
        data,
        "--labels",
        labels,
        "--device",
        "cpu",
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
    )
    assert code == 0, err
    reported = [r["result"] for r in json.loads(out)["results"]]
    assert [r["task"]["name"] for r in reported] == [
        # in the order of the models' first tasks: the encoder's three run together, when Tatoeba's turn comes
        "xnli",
        "panx",
        "udpos",
        "tatoeba",
        "lareqa",
        "mewslix",
        "xcopa",
        "xquad",
        "mlqa",
        "tydiqa",
        "xtreme",
    ]
    runs = {r["task"]["name"]: r for r in reported[:-1]}
    assert runs["panx"]["data"]["languages"] == list(task_defs("xtreme-r")["panx"].languages)
    figures = {task: figure(result, "xtreme-r") for task, result in runs.items() if task != "lareqa"}
    scored = reported[-1]
    assert scored["task"]["options"] == {"xtreme_version": "xtreme-r"}
    rows = {row["subset"]: row["metrics"] for row in scored["rows"]}
    for task, value in figures.items():
        assert rows[task]["avg_metric"] == pytest.approx(value, abs=1e-9), task
    # every group; evaluate.py gives LAReQA no metric, so no all_task: the mean over the tasks
    # scored, named for what it is
    assert {"all_task", "lareqa"}.isdisjoint(rows)
    assert rows["classification"]["avg_metric"] == pytest.approx((figures["xnli"] + figures["xcopa"]) / 2)
    assert rows["multi_choice"]["avg_metric"] == pytest.approx(figures["xcopa"])
    assert rows["retrieval"]["avg_metric"] == pytest.approx((figures["tatoeba"] + figures["mewslix"]) / 2)
    assert rows["tagging"]["avg_metric"] == pytest.approx((figures["udpos"] + figures["panx"]) / 2)
    assert rows["qa"]["avg_metric"] == pytest.approx(sum(figures[t] for t in QA) / 3)
    assert scored["main_score"]["metric"] == "incomplete_task_mean"
    assert scored["main_score"]["value"] == pytest.approx(sum(figures.values()) / len(figures))


def test_family_mistakes_stop_before_any_work(
    xtreme_inputs: tuple[Path, Path], harness_cli: Cli, tmp_path: Path
) -> None:
    data, labels = xtreme_inputs
    family = tmp_path / "family.json"

    def run(models: dict[str, str], *extra: object) -> str:
        write(family, json.dumps({"name": "f", "models": models}))
        code, _, err = harness_cli("run", "xtreme", f"@{family}", "--data-dir", data, *extra)
        assert code == 2, err
        return error_line(err)

    every = {
        "pawsx,xnli": "hf-classifier:path=c",
        "panx,udpos": "hf-tagger:path=t",
        "bucc2018,tatoeba": "hf-encoder:path=e",
        "xquad,mlqa,tydiqa": "hf-reader:path=r",
    }
    assert run(every).endswith("pass --labels DIR (see the task's documentation for its layout)")
    assert run(every, "--labels", labels, "--langs", "de").startswith("error: --langs/--limit: this suite is scored")
    partial = {key: value for key, value in every.items() if key != "panx,udpos"}
    assert (
        run(partial, "--labels", labels) == f"error: {family}: models: no model for panx, udpos (a family names "
        "the model of every task it runs)"
    )
    assert run({**every, "xnlii": "bm25"}, "--labels", labels) == (
        f"error: {family}: field 'models.xnlii': 'xnlii' is no task of the installed plugins"
    )
    assert run({**every, "panx,udpos": "hf-tagger:paht=t"}, "--labels", labels).startswith(
        f"error: {family}: field 'models.panx,udpos': model hf-tagger: unknown option 'paht'; did you mean 'path'?"
    )
    assert "cannot" in run({**every, "panx,udpos": "bm25"}, "--labels", labels)  # bm25 tags nothing
    code, _, err = harness_cli("run", "xtreme", "bm25", "--data-dir", labels)
    assert code == 2 and error_line(err).endswith(
        "(with one model, xtreme is the task; the suite xtreme runs a model "
        "family: harness run xtreme @family.json --labels DIR)"
    )
    code, _, err = harness_cli("run", "xnli", "bm25", "--labels", labels)
    assert code == 2 and "--labels go with a model family" in error_line(err)
    assert not (tmp_path / "results").exists()
