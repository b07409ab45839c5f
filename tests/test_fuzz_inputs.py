"""Generated bad input for every data reader, predictions reader and command-line option (issue 11).

Each case starts from a valid file (the oracle's predictions, the demo or test data) and breaks it
in a way that can never be valid: cut short, nested too deep, not UTF-8, a value of the wrong
type, a key or id given twice, an id of no question, a line that is no label... Every case must
end as the harness promises: exit code 2, one line on stderr that names the broken file, no
traceback (in-process, any other exception fails the test), and no file written.

The default run keeps to :data:`EXAMPLES` cases per reader; :data:`SLOW_EXAMPLES` per reader run
only when asked for with ``-m slow`` (they take minutes, and the default run includes slow tests).
``HARNESS_FUZZ_REPORT=FILE`` appends one line per reader (cases run, failures) to FILE.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import main
from tests.conftest import VENDORED
from tests.plugins.harness_xtreme.test_mewslix import write_mewslix

EXAMPLES = 100
SLOW_EXAMPLES = 1000

#: Cases run per reader in this session, for the report (``HARNESS_FUZZ_REPORT``).
CASES: Counter[str] = Counter()


def _report() -> None:
    target = os.environ.get("HARNESS_FUZZ_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            for reader, count in sorted(CASES.items()):
                handle.write(f"{reader}\t{count}\n")
        CASES.clear()


def run_cli(*args: Any) -> tuple[int, str]:
    """``harness ARGS`` in-process: (exit code, stderr). A traceback would be an exception here."""
    err = StringIO()
    with redirect_stdout(StringIO()), redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
    return code, err.getvalue()


def assert_refused(code: int, err: str, names: str | None, out: Path) -> None:
    """Exit 2, one error line (naming ``names`` when given), nothing written under ``out``."""
    lines = [line for line in err.splitlines() if not line.startswith(("Using the built-in demo data", "usage:", " "))]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith(("error: ", "harness ")), err
    if names is not None:
        assert names in lines[0], err
    assert not out.exists() or not any(out.rglob("*")), sorted(out.rglob("*"))


@contextmanager
def case_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- ways to break a file ----------------------------------------------------------------------

NON_STRINGS = st.one_of(
    st.integers(),
    st.floats(),
    st.booleans(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def truncated(text: str, data: st.DataObject) -> str:
    """A proper prefix of a JSON object or array: never valid JSON."""
    text = text.rstrip()
    return text[: data.draw(st.integers(1, len(text) - 1), label="cut")]


def not_utf8(data: st.DataObject) -> bytes:
    return data.draw(st.binary(max_size=20), label="prefix") + b"\xff\xfe\xc3(" + data.draw(st.binary(max_size=20))


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def break_answer_map(valid: dict[str, Any], data: st.DataObject) -> bytes:
    """A broken ``{question_id: answer}`` file (SQuAD-format predictions, XOR EngSpan/Full)."""
    ids = list(valid)
    way = data.draw(st.sampled_from(["truncate", "deep", "bytes", "type", "duplicate", "unknown", "top", "big"]))
    if way == "truncate":
        return truncated(json_text(valid), data).encode()
    if way == "deep":
        return (
            json_text(valid)[:-1].encode() + f', "{ids[0]}x": {deep(data.draw(st.integers(2000, 100_000)))}}}'.encode()
        )
    if way == "bytes":
        return not_utf8(data)
    if way == "type":
        qid = data.draw(st.sampled_from(ids))
        return json_text({**valid, qid: data.draw(NON_STRINGS)}).encode()
    if way == "duplicate":
        qid = data.draw(st.sampled_from(ids))
        return (json_text(valid)[:-1] + f", {json_text(qid)}: {json_text(data.draw(st.text(max_size=5)))}}}").encode()
    if way == "unknown":
        extra = data.draw(
            st.text(min_size=1, max_size=12).filter(lambda t: t not in valid and t.split("_")[-1] not in valid)
        )
        return json_text({**valid, extra: "x"}).encode()
    if way == "top":
        return json_text(
            data.draw(st.one_of(st.lists(st.text(max_size=3), max_size=3), st.integers(), st.text(), st.none()))
        ).encode()
    return json_text(valid)[:-1].encode() + f', "{ids[0]}": {"9" * data.draw(st.integers(4400, 6000))}}}'.encode()


def break_json_lines(
    lines: list[dict[str, Any]],
    data: st.DataObject,
    *,
    id_field: str,
    text_field: str,
    ids_are_known: bool = True,
    repeats_are_valid: bool = False,
) -> bytes:
    """A broken JSON-lines file of records with an id and a string field. ``ids_are_known``: the
    ids must be those of other data (predictions), so a new id is garbage; a data file may have any.
    ``repeats_are_valid``: a repeated line is no mistake in this format (XCOPA), so it is not drawn."""
    number = data.draw(st.integers(0, len(lines) - 1), label="line")
    out = [json_text(line) for line in lines]
    ways = ["truncate", "deep", "bytes", "type", "missing", "top"]
    ways += [] if repeats_are_valid else ["duplicate"]
    way = data.draw(st.sampled_from(ways + (["unknown"] if ids_are_known else [])))
    if way == "truncate":
        out[number] = truncated(out[number], data)
    elif way == "deep":
        out[number] = deep(data.draw(st.integers(2000, 100_000)))
    elif way == "bytes":
        return "\n".join(out[:number]).encode() + b"\n" + not_utf8(data)
    elif way == "type":
        out[number] = json_text({**lines[number], text_field: data.draw(NON_STRINGS)})
    elif way == "duplicate":
        out.append(out[number])
    elif way == "unknown":
        known = {str(line[id_field]) for line in lines}
        value = data.draw(st.integers(0, 10**6).filter(lambda v: str(v) not in known))
        out[number] = json_text({**lines[number], id_field: value})
    elif way == "missing":
        out[number] = json_text({k: v for k, v in lines[number].items() if k != text_field})
    else:
        out[number] = json_text(data.draw(st.one_of(st.lists(st.integers(), max_size=2), st.integers(), st.text())))
    return ("\n".join(out) + "\n").encode()


def break_lines(lines: list[str], data: st.DataObject, bad_line: st.SearchStrategy[str]) -> bytes:
    """A broken one-item-per-line file (Tatoeba line numbers, PAWS-X labels)."""
    number = data.draw(st.integers(0, len(lines) - 1), label="line")
    way = data.draw(st.sampled_from(["item", "fewer", "more", "blank", "bytes", "big"]))
    out = list(lines)
    if way == "item":
        out[number] = data.draw(bad_line)
    elif way == "fewer":
        del out[number]
    elif way == "more":
        out.insert(number, lines[number])
    elif way == "blank":
        out = [""] * len(lines)
    elif way == "bytes":
        return ("\n".join(out[:number]) + "\n").encode() + not_utf8(data)
    else:
        out[number] = "1" * data.draw(st.integers(20, 6000))
    return ("\n".join(out) + "\n").encode()


# -- the readers -------------------------------------------------------------------------------


@dataclass
class Reader:
    """One reader under test: a valid file, how to break it, and the command that reads it."""

    name: str
    valid: Callable[[Path], Any]  # work folder -> the valid content (made once per session)
    breaker: Callable[[Any, st.DataObject], bytes]
    command: Callable[[Path, Path, Path], list[Any]]  # (work, broken file, output) -> harness arguments
    file_name: str


_VALID: dict[str, Any] = {}


def _oracle_predictions(task: str, relative: str, work: Path) -> Path:
    out = work / f"oracle-{task}"
    code, err = run_cli("run", task, "oracle", "--no-leaderboard", "--quiet", "--output-dir", out)
    assert code == 0, err
    (path,) = list(out.glob(f"*/*/*/{relative}"))
    return path


def _span_reader(task: str, lang: str, file: str) -> Reader:
    return Reader(
        f"{task} predictions",
        lambda work: json.loads(_oracle_predictions(task, f"predictions/{file}", work).read_text(encoding="utf-8")),
        break_answer_map,
        lambda work, broken, out: [
            "score",
            task,
            "--langs",
            lang,
            "--predictions",
            broken,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ],
        "predictions.json",
    )


XOR_QUESTIONS = [
    {"id": "1", "question": "Missä on Eiffel-torni?", "answers": ["Paris"], "lang": "fi"},
    {"id": "-2", "question": "Milloin Titanic upposi?", "answers": ["1912"], "lang": "fi"},
    {"id": "3", "question": "グーグルの本社は?", "answers": ["Mountain View"], "lang": "ja"},
]


def _xor_dir(work: Path) -> Path:
    folder = work / "xor"
    if not folder.exists():
        folder.mkdir(parents=True)
        lines = "".join(json_text({**q, "split": "dev"}) + "\n" for q in XOR_QUESTIONS)
        (folder / "xor_dev_retrieve_eng_span_v1_1.jsonl").write_text(lines, encoding="utf-8")
        (folder / "xor_dev_full_v1_1.jsonl").write_text(lines, encoding="utf-8")
    return folder


def _xtreme_command(work: Path, broken: Path, out: Path) -> list[Any]:
    predictions = broken.parent / "submission"
    (predictions / "pawsx").mkdir(parents=True)
    for file in (VENDORED / "xtreme" / "mock_test_data" / "predictions" / "pawsx").iterdir():
        shutil.copy(file, predictions / "pawsx" / file.name)
    shutil.copy(broken, predictions / "pawsx" / "test-de.tsv")
    labels = work / "xtreme-labels"
    if not labels.exists():
        shutil.copytree(VENDORED / "xtreme" / "mock_test_data" / "labels" / "pawsx", labels / "pawsx")
    return [
        "score",
        "xtreme",
        "--data-dir",
        labels,
        "--predictions",
        predictions,
        "--output-dir",
        out,
        "--no-leaderboard",
        "--quiet",
    ]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _mkqa_data(work: Path) -> list[dict[str, Any]]:
    from harness.definitions.registry import Registry
    from harness.running.planning import load_task

    task, _ = load_task(Registry.discover(), "mkqa")
    return [json.loads(line) for line in _lines(task.demo_data_dir() / "mkqa.jsonl") if line.strip()]


def _squad_data(work: Path) -> dict[str, Any]:
    return json.loads(
        (Path(__file__).resolve().parents[1] / "harness" / "demo" / "parallel-qa" / "en.json").read_text(
            encoding="utf-8"
        )
    )


def _break_squad_data(valid: dict[str, Any], data: st.DataObject) -> bytes:
    way = data.draw(st.sampled_from(["truncate", "deep", "bytes", "top", "no-data", "question"]))
    if way == "truncate":
        return truncated(json_text(valid), data).encode()
    if way == "deep":
        return deep(data.draw(st.integers(2000, 100_000))).encode()
    if way == "bytes":
        return not_utf8(data)
    if way == "top":
        return json_text(data.draw(st.one_of(st.lists(st.integers(), max_size=2), st.integers(), st.text()))).encode()
    if way == "no-data":
        return json_text({k: v for k, v in valid.items() if k != "data"}).encode()
    broken = json.loads(json_text(valid))
    broken["data"][0]["paragraphs"][0]["qas"][0]["question"] = data.draw(NON_STRINGS)
    return json_text(broken).encode()


def _squad_data_command(work: Path, broken: Path, out: Path) -> list[Any]:
    folder = broken.parent / "data"
    shutil.copytree(Path(__file__).resolve().parents[1] / "harness" / "demo" / "parallel-qa", folder)
    shutil.copy(broken, folder / "en.json")
    return [
        "run",
        "xquad",
        "oracle",
        "--data-dir",
        folder,
        "--langs",
        "en",
        "--output-dir",
        out,
        "--no-leaderboard",
        "--quiet",
    ]


MOCK_LABELS = VENDORED / "xtreme" / "mock_test_data" / "labels"


def _xtreme_task_data(work: Path, task: str) -> Path:
    """A data folder in XTREME's download layout for the German test file of ``task`` (XNLI: one
    tab-separated pair per label line; PAN-X: one word per tag line, a blank line after each
    sentence), so the mock labels score it."""
    folder = work / "xtreme-data" / task
    if not folder.exists():
        folder.mkdir(parents=True)
        labels = _lines(MOCK_LABELS / task / "test-de.tsv")
        if task == "xnli":
            text = "".join(f"premise {n}\thypothesis {n}\n" for n in range(len(labels)))
        else:
            text = "".join(f"word{n}\n" if tag.strip() else "\n" for n, tag in enumerate(labels))
        (folder / "test-de.tsv").write_text(text, encoding="utf-8")
    return folder.parent


def _labelled_command(task: str) -> Callable[[Path, Path, Path], list[Any]]:
    """``harness score TASK`` with the broken file as the German predictions."""

    def command(work: Path, broken: Path, out: Path) -> list[Any]:
        predictions = broken.parent / "predictions" / task
        predictions.mkdir(parents=True)
        shutil.copy(broken, predictions / "test-de.tsv")
        return [
            "score",
            f"{task}:labels={MOCK_LABELS}",
            "--langs",
            "de",
            "--data-dir",
            _xtreme_task_data(work, task),
            "--predictions",
            predictions.parent,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ]

    return command


def _xnli_data_command(work: Path, broken: Path, out: Path) -> list[Any]:
    folder = broken.parent / "data" / "xnli"
    folder.mkdir(parents=True)
    shutil.copy(broken, folder / "test-de.tsv")
    predictions = broken.parent / "predictions" / "xnli"
    predictions.mkdir(parents=True)
    shutil.copy(MOCK_LABELS / "xnli" / "test-de.tsv", predictions / "test-de.tsv")
    return [
        "score",
        f"xnli:labels={MOCK_LABELS}",
        "--langs",
        "de",
        "--data-dir",
        folder.parent,
        "--predictions",
        predictions.parent,
        "--output-dir",
        out,
        "--no-leaderboard",
        "--quiet",
    ]


def _mewslix_valid(work: Path, name: str) -> list[dict[str, Any]]:
    """The records of one file of a small valid Mewsli-X dev set (German mentions)."""
    folder = work / "mewslix-valid" / "mewslix"
    if not folder.exists():
        write_mewslix(folder, "dev", ("de",), blank=False)
    return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines()]


def _mewslix_command(name: str) -> Callable[[Path, Path, Path], list[Any]]:
    """``harness run mewslix oracle`` on the valid set with the broken file in place of ``name``."""

    def command(work: Path, broken: Path, out: Path) -> list[Any]:
        folder = broken.parent / "data" / "mewslix"
        shutil.copytree(work / "mewslix-valid" / "mewslix", folder)
        shutil.copy(broken, folder / name)
        return [
            "run",
            "mewslix",
            "oracle",
            "--split",
            "dev",
            "--langs",
            "de",
            "--data-dir",
            folder.parent,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ]

    return command


def _xcopa_data_command(work: Path, broken: Path, out: Path) -> list[Any]:
    folder = broken.parent / "data" / "xcopa"
    folder.mkdir(parents=True)
    shutil.copy(broken, folder / "val-et.jsonl")
    return [
        "run",
        "xcopa",
        "oracle",
        "--split",
        "dev",
        "--langs",
        "et",
        "--data-dir",
        folder.parent,
        "--output-dir",
        out,
        "--no-leaderboard",
        "--quiet",
    ]


XCOPA_EXAMPLES = [
    {
        "premise": f"premise {n}",
        "choice1": f"one {n}",
        "choice2": f"two {n}",
        "question": ["cause", "effect"][n % 2],
        "label": n % 2,
        "idx": n,
    }
    for n in range(4)
]
MEWSLIX_ENTITIES, MEWSLIX_MENTIONS = "candidate_set_entities.jsonl", "wikinews_mentions/dev-de.jsonl"
XNLI_LABELS = ("contradiction", "entailment", "neutral")
PANX_TAGS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC")

READERS = [
    _span_reader("xquad", "en", "en.json"),
    _span_reader("mlqa", "en", "dev-context-en-question-en.json"),
    _span_reader("tydiqa", "en", "en.json"),
    Reader(
        "xor-engspan predictions",
        lambda work: {q["id"]: q["answers"][0] for q in XOR_QUESTIONS},
        break_answer_map,
        lambda work, broken, out: [
            "score",
            "xor-engspan",
            "--data-dir",
            _xor_dir(work),
            "--predictions",
            broken,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ],
        "predictions.json",
    ),
    Reader(
        "xor-full predictions",
        lambda work: {q["id"]: q["answers"][0] for q in XOR_QUESTIONS},
        break_answer_map,
        lambda work, broken, out: [
            "score",
            "xor-full",
            "--data-dir",
            _xor_dir(work),
            "--predictions",
            broken,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ],
        "predictions.json",
    ),
    Reader(
        "xor-retrieve predictions",
        lambda work: [{"id": q["id"], "lang": q["lang"], "ctxs": ["Paris"]} for q in XOR_QUESTIONS],
        lambda valid, data: (
            break_json_lines(valid, data, id_field="id", text_field="lang")
            .replace(b"\n", b",")
            .rstrip(b",")
            .join([b"[", b"]"])
            if data.draw(st.booleans(), label="array")
            else break_answer_map({item["id"]: item for item in valid}, data)
        ),
        lambda work, broken, out: [
            "score",
            "xor-retrieve",
            "--data-dir",
            _xor_dir(work),
            "--predictions",
            broken,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ],
        "predictions.json",
    ),
    Reader(
        "mkqa predictions",
        lambda work: [json.loads(line) for line in _lines(_oracle_predictions("mkqa", "predictions/en.jsonl", work))],
        lambda valid, data: break_json_lines(valid, data, id_field="example_id", text_field="prediction"),
        lambda work, broken, out: [
            "score",
            "mkqa",
            "--langs",
            "en",
            "--predictions",
            broken,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ],
        "en.jsonl",
    ),
    Reader(
        "tatoeba predictions",
        lambda work: _lines(_oracle_predictions("tatoeba", "predictions/test-de.tsv", work)),
        lambda valid, data: break_lines(
            valid, data, st.text(max_size=8).filter(lambda t: not re.fullmatch("0|[1-9][0-9]*", t.strip()))
        ),
        lambda work, broken, out: [
            "score",
            "tatoeba",
            "--langs",
            "de",
            "--predictions",
            broken,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ],
        "test-de.tsv",
    ),
    Reader(
        "xtreme pawsx predictions",
        lambda work: _lines(VENDORED / "xtreme" / "mock_test_data" / "predictions" / "pawsx" / "test-de.tsv"),
        lambda valid, data: break_lines(valid, data, st.text(max_size=6).filter(lambda t: t.strip() not in ("0", "1"))),
        _xtreme_command,
        "test-de.tsv",
    ),
    Reader(
        "mkqa data",
        _mkqa_data,
        lambda valid, data: break_json_lines(
            valid, data, id_field="example_id", text_field="queries", ids_are_known=False
        ),
        lambda work, broken, out: [
            "run",
            "mkqa",
            "oracle",
            "--data-dir",
            broken,
            "--output-dir",
            out,
            "--no-leaderboard",
            "--quiet",
        ],
        "mkqa.jsonl",
    ),
    Reader(
        "xor data",
        lambda work: [{**q, "split": "dev"} for q in XOR_QUESTIONS],
        lambda valid, data: (
            break_json_lines(valid, data, id_field="id", text_field="question", ids_are_known=False)
            if data.draw(st.booleans(), label="lines")
            else not_utf8(data)
        ),
        lambda work, broken, out: _xor_data_command(work, broken, out),
        "xor_dev_retrieve_eng_span_v1_1.jsonl",
    ),
    Reader("squad-format data (xquad)", _squad_data, _break_squad_data, _squad_data_command, "en.json"),
    Reader(
        "xnli predictions",
        lambda work: _lines(MOCK_LABELS / "xnli" / "test-de.tsv"),
        lambda valid, data: break_lines(
            valid, data, st.text(max_size=14).filter(lambda t: t.strip() not in XNLI_LABELS)
        ),
        _labelled_command("xnli"),
        "test-de.tsv",
    ),
    Reader(
        "panx predictions",
        lambda work: _lines(MOCK_LABELS / "panx" / "test-de.tsv"),
        lambda valid, data: break_lines(
            valid, data, st.text(min_size=1, max_size=8).filter(lambda t: t.strip() and t.strip() not in PANX_TAGS)
        ),
        _labelled_command("panx"),
        "test-de.tsv",
    ),
    Reader(
        "xnli data",
        lambda work: [f"premise {n}\thypothesis {n}" for n in range(len(_lines(MOCK_LABELS / "xnli" / "test-de.tsv")))],
        lambda valid, data: break_lines(valid, data, st.text(max_size=12).filter(lambda t: t.count("\t") != 1)),
        _xnli_data_command,
        "test-de.tsv",
    ),
    Reader(
        "xcopa data",
        lambda work: XCOPA_EXAMPLES,
        lambda valid, data: break_json_lines(
            valid, data, id_field="idx", text_field="premise", ids_are_known=False, repeats_are_valid=True
        ),
        _xcopa_data_command,
        "val-et.jsonl",
    ),
    Reader(
        "mewslix entities",
        lambda work: _mewslix_valid(work, MEWSLIX_ENTITIES),
        lambda valid, data: break_json_lines(
            valid, data, id_field="entity_id", text_field="description", ids_are_known=False
        ),
        _mewslix_command(MEWSLIX_ENTITIES),
        MEWSLIX_ENTITIES,
    ),
    Reader(
        "mewslix mentions",
        lambda work: _mewslix_valid(work, MEWSLIX_MENTIONS),
        lambda valid, data: break_json_lines(
            valid, data, id_field="document_id", text_field="context", ids_are_known=False
        ),
        _mewslix_command(MEWSLIX_MENTIONS),
        "dev-de.jsonl",
    ),
]


def _xor_data_command(work: Path, broken: Path, out: Path) -> list[Any]:
    folder = broken.parent / "data"
    folder.mkdir()
    shutil.copy(broken, folder / "xor_dev_retrieve_eng_span_v1_1.jsonl")
    return ["run", "xor-engspan", "oracle", "--data-dir", folder, "--output-dir", out, "--no-leaderboard", "--quiet"]


def _fuzz_reader(reader: Reader, work: Path, examples: int) -> int:
    """Run up to ``examples`` generated broken files through the CLI (each case asserts its own
    refusal); return how many cases ran."""
    before = CASES[reader.name]
    if reader.name not in _VALID:
        _VALID[reader.name] = reader.valid(work)
    valid = _VALID[reader.name]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def case(data: st.DataObject) -> None:
        CASES[reader.name] += 1
        with case_folder() as folder:
            broken = folder / reader.file_name
            broken.write_bytes(reader.breaker(valid, data))
            out = folder / "out"
            code, err = run_cli(*reader.command(work, broken, out))
            assert_refused(code, err, None, out)
            assert str(folder) in err, err  # names the broken file (or the folder holding it)

    case()
    ran = CASES[reader.name] - before
    _report()  # (clears the counts it writes)
    return ran


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-work")


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_broken_files_are_refused_in_one_line(reader: Reader, work: Path) -> None:
    assert _fuzz_reader(reader, work, EXAMPLES) > 0


def _many(config: pytest.Config) -> None:
    """Skip unless ``-m`` selects slow tests by name (``-m slow``)."""
    expression = config.getoption("markexpr") or ""
    if "slow" not in expression.replace("not slow", ""):
        pytest.skip(f"{SLOW_EXAMPLES} cases per reader: run with -m slow")


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_broken_files_are_refused_in_one_line_many(reader: Reader, work: Path, request: pytest.FixtureRequest) -> None:
    _many(request.config)
    assert _fuzz_reader(reader, work, SLOW_EXAMPLES) > 0


# -- command-line options ----------------------------------------------------------------------

NON_POSITIVE = st.integers(max_value=0).map(str)
BAD_NUMBER = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "1e999", ""]),
    st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False).map(repr),
    st.text(alphabet="abcxyz!?", min_size=1, max_size=5),
)
BAD_MODEL_ARGS = st.one_of(
    st.sampled_from(
        [
            '{"k1": NaN}',
            '{"k1": Infinity}',
            '{"k1": -Infinity}',
            '{"k1": 1, "k1": 2}',
            "[]",
            "1",
            '"x"',
            "null",
            "{",
            "{'k1': 1}",
        ]
    ),
    st.integers(1100, 100_000).map(lambda n: '{"a":' * n),
    st.integers(1100, 100_000).map(deep),
    st.lists(st.integers(), max_size=3).map(json.dumps),
    st.text(min_size=1, max_size=10).filter(lambda t: not t.strip().startswith("{") or not t.strip().endswith("}")),
)


def _option_case(data: st.DataObject, file: Path) -> tuple[list[Any], str | None]:
    """A ``harness run`` command line with one bad option; the text the error must contain."""
    base = ["run", "lareqa", "bm25", "--no-leaderboard", "--quiet"]
    way = data.draw(
        st.sampled_from(
            [
                "batch",
                "threads",
                "limit",
                "langs",
                "k1",
                "b",
                "model-args",
                "twice",
                "device",
                "output-file",
                "cache-file",
                "unknown-option",
            ]
        )
    )
    if way == "batch":
        return [*base, "--batch-size", data.draw(NON_POSITIVE)], "--batch-size"
    if way == "threads":
        return [*base, "--threads", data.draw(NON_POSITIVE)], "--threads"
    if way == "limit":
        return [*base, "--limit", data.draw(NON_POSITIVE)], "--limit"
    if way == "langs":
        return [*base, "--langs", data.draw(st.text(alphabet=", ", min_size=1, max_size=5))], "--langs"
    if way in ("k1", "b"):
        value = data.draw(BAD_NUMBER if way == "k1" else st.one_of(BAD_NUMBER, st.sampled_from(["1.5", "2", "-0.1"])))
        return ["run", "lareqa", f"bm25:{way}={value}", "--no-leaderboard", "--quiet"], way
    if way == "model-args":
        return [*base, "--model-args", data.draw(BAD_MODEL_ARGS)], "--model-args"
    if way == "twice":
        return ["run", "lareqa", "bm25:k1=1,k1=2", "--no-leaderboard", "--quiet"], "given twice"
    if way == "device":
        return [
            *base,
            "--device",
            data.draw(st.text(max_size=8).filter(lambda t: t not in ("auto", "cpu") and not t.startswith("cuda"))),
        ], "device"
    if way == "output-file":
        return [*base, "--output-dir", file / data.draw(st.sampled_from(["", "x", "x/y"]))], "--output-dir"
    if way == "cache-file":
        return [*base, "--cache-dir", file], "--cache-dir"
    key = data.draw(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8).filter(
            lambda k: k not in ("k1", "b", "epsilon", "index_dir")
        )
    )
    return ["run", "lareqa", f"bm25:{key}=1", "--no-leaderboard", "--quiet"], "unknown option"


@pytest.mark.parametrize(
    "examples",
    [pytest.param(EXAMPLES * 2, id="default"), pytest.param(SLOW_EXAMPLES, id="many", marks=pytest.mark.slow)],
)
def test_bad_options_are_refused_before_any_work(
    examples: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if examples == SLOW_EXAMPLES:
        _many(request.config)
    monkeypatch.chdir(tmp_path)
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.data())
    def case(data: st.DataObject) -> None:
        CASES["command-line options"] += 1
        args, names = _option_case(data, file)
        code, err = run_cli(*args)
        assert_refused(code, err, names, tmp_path / "results")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]

    case()
    _report()
