"""XNLI, PAWS-X, PAN-X and UD-POS run with tiny random checkpoints on files in XTREME's download
layout (written here, lined up with XTREME's mock labels): the predictions equal a plain
reference run of the checkpoint, the scores equal what the labels give by hand or seqeval 1.2.2,
and ``harness score xtreme`` reads the run's predictions folder back to the same numbers."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_xtreme.benchmark import UDPOS_TAGS, XNLI_CLASSES, task_defs
from tests.plugins.harness_hf.tiny_heads import build_tiny_head
from tests.tiny_models import demo_texts

Cli = Callable[..., tuple[int, str, str]]
WORDS = [word for text in demo_texts()[:200] for word in text.split()]


def mock_labels(official_data: Path) -> Path:
    return official_data / "xtreme" / "mock_test_data" / "labels"


def label_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]


def tag_sentences(path: Path) -> list[list[str]]:
    sentences, current = [], []
    for line in label_lines(path) + [""]:
        if line:
            current.append(line)
        elif current:
            sentences.append(current)
            current = []
    return sentences


@pytest.fixture(scope="module")
def classifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_head(
        tmp_path_factory.mktemp("xnli-classifier"), "AutoModelForSequenceClassification", XNLI_CLASSES
    )


@pytest.fixture(scope="module")
def tagger_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # outputs named in another order than the task's, one in capitals: mapped by name
    names = ["O", "b-per", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"]
    return build_tiny_head(tmp_path_factory.mktemp("panx-tagger"), "AutoModelForTokenClassification", names)


def write_pairs(
    folder: Path, split: str, lang: str, count: int, labels: list[str] | None = None
) -> list[tuple[str, str]]:
    """An XTREME-layout pair file as utils_preprocess writes it (csv.writer, tab-separated)."""
    pairs = [
        (" ".join(WORDS[i : i + 7]), " ".join(WORDS[i + 3 : i + 12]) + (' "quoted"' if i % 3 == 0 else ""))
        for i in range(count)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{split}-{lang}.tsv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        for number, pair in enumerate(pairs):
            writer.writerow([*pair, labels[number]] if labels else list(pair))
    return pairs


def write_words(folder: Path, split: str, lang: str, lengths: list[int]) -> list[list[str]]:
    """An XTREME-layout test file: one word per line, a blank line after each sentence."""
    sentences, position = [], 0
    for length in lengths:
        sentences.append(WORDS[position : position + length])
        position += length
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{split}-{lang}.tsv").write_text(
        "".join("".join(f"{w}\n" for w in s) + "\n" for s in sentences), encoding="utf-8"
    )
    return sentences


def as_xtreme_reads(path: Path) -> list[tuple[str, str]]:
    """The pairs as XTREME's DataProcessor._read_tsv reads them (csv on tabs, no quote character)."""
    with open(path, encoding="utf-8-sig") as handle:
        return [(row[0], row[1]) for row in csv.reader(handle, delimiter="\t", quotechar=None)]


def test_pair_files_are_read_as_xtreme_reads_them(tmp_path: Path) -> None:
    from harness_xtreme.labelled import read_pair_file

    # csv.writer quoted the field with a quote in it; XTREME's reader keeps the quotes, doubled ones too
    (tmp_path / "dev-de.tsv").write_bytes(b'"Er sagte ""ja"""\tHe said yes\tentailment\r\nA\tB\t neutral \r\n')
    pairs, labels = read_pair_file(tmp_path / "dev-de.tsv")
    assert pairs == [('"Er sagte ""ja"""', "He said yes"), ("A", "B")] and labels == ["entailment", "neutral"]
    assert pairs == as_xtreme_reads(tmp_path / "dev-de.tsv")


def reference_classify(model_dir: Path, pairs: list[tuple[str, str]]) -> list[str]:
    """One pair at a time, no batching: the pair template cut to 128 tokens, the highest logit."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    out = []
    for a, b in pairs:
        with torch.no_grad():
            logits = model(**tokenizer(a, b, truncation=True, max_length=128, return_tensors="pt")).logits[0]
        out.append(model.config.id2label[int(logits.argmax())])
    return out


def reference_tag(model_dir: Path, sentences: list[list[str]], max_length: int) -> tuple[list[list[str]], int]:
    """XTREME's preprocessing and run_tag, written out: each word's subwords (the unknown token
    when there are none or more than a piece holds), pieces of at most max_length - 2 subwords,
    [CLS] piece [SEP] run alone, the argmax at each word's first subword, pieces joined back; and how many cuts it made."""
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForTokenClassification.from_pretrained(str(model_dir)).eval()
    room = max_length - 2

    def subwords(word: str) -> list[str]:
        pieces = tokenizer.tokenize(word)
        return pieces if 0 < len(pieces) <= room else [tokenizer.unk_token]

    def run(words: list[str]) -> list[str]:
        tokens, firsts = [tokenizer.cls_token], []
        for word in words:
            firsts.append(len(tokens))
            tokens += subwords(word)
        ids = torch.tensor([tokenizer.convert_tokens_to_ids(tokens + [tokenizer.sep_token])])
        with torch.no_grad():
            best = model(input_ids=ids).logits[0].argmax(-1)
        return [model.config.id2label[int(best[i])].upper() for i in firsts]

    out, pieces_run = [], 0
    for words in sentences:
        tags, piece, used = [], [], 0
        for word in words:
            size = len(subwords(word))
            if piece and used + size > room:
                tags += run(piece)
                pieces_run += 1
                piece, used = [], 0
            piece.append(word)
            used += size
        out.append(tags + run(piece))
    return out, pieces_run


def error_line(err: str) -> str:
    """The harness's one error line (after any progress bar transformers draws while loading)."""
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err
    return lines[0]


def run_dir(output: Path, task: str) -> Path:
    """The one run of ``task`` under an output folder (``results`` by default)."""
    (path,) = list((output / task).glob("*/*/result.json"))
    return path.parent


def rows_of(folder: Path) -> dict[str, dict]:
    return {row["subset"]: row for row in json.loads((folder / "result.json").read_text())["rows"]}


def test_xnli_test_split_with_mock_labels(
    official_data: Path, classifier_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    labels_dir = mock_labels(official_data)
    data = tmp_path / "data"
    languages = task_defs("xtreme")["xnli"].languages
    for lang in languages:
        write_pairs(data / "xnli", "test", lang, len(label_lines(labels_dir / "xnli" / f"test-{lang}.tsv")))
    code, out, err = harness_cli(
        "run",
        f"xnli:labels={labels_dir}",
        f"hf-classifier:path={classifier_dir}",
        "--data-dir",
        data,
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    folder = run_dir(tmp_path / "results", "xnli")
    rows = rows_of(folder)
    accuracies = []
    for lang in languages:
        predicted = label_lines(folder / "predictions" / "xnli" / f"test-{lang}.tsv")
        assert predicted == reference_classify(classifier_dir, as_xtreme_reads(data / "xnli" / f"test-{lang}.tsv"))
        gold = label_lines(labels_dir / "xnli" / f"test-{lang}.tsv")
        accuracies.append(sum(p == g for p, g in zip(predicted, gold)) / len(gold) * 100)
        assert rows[lang]["metrics"]["accuracy"] == pytest.approx(accuracies[-1])
    assert rows["mean"]["metrics"]["accuracy"] == pytest.approx(sum(accuracies) / len(accuracies))

    # the run's predictions folder is a submission: the submission scorer gives the same numbers
    only_xnli = tmp_path / "labels-xnli"
    shutil.copytree(labels_dir / "xnli", only_xnli / "xnli")
    code, out, err = harness_cli(
        "score",
        "xtreme",
        "--predictions",
        folder / "predictions",
        "--data-dir",
        only_xnli,
        "--output-dir",
        tmp_path / "scored",
        "--no-leaderboard",
        "--quiet",
    )
    assert code == 0, err
    scored = rows_of(run_dir(tmp_path / "scored", "xtreme"))
    assert scored["xnli"]["metrics"]["avg_metric"] == rows["mean"]["metrics"]["accuracy"]
    for lang in languages:
        assert scored[f"xnli/{lang}"]["metrics"] == rows[lang]["metrics"]


def test_pawsx_dev_split_reads_labels_from_its_files(classifier_dir: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # a 0/1 task and a checkpoint named for XNLI: one clear error, nothing written
    data = tmp_path / "data"
    write_pairs(data / "pawsx", "dev", "de", 6, ["0", "1", "1", "0", "1", "1"])
    code, out, err = harness_cli(
        "run",
        "pawsx",
        f"hf-classifier:path={classifier_dir}",
        "--data-dir",
        data,
        "--split",
        "dev",
        "--langs",
        "de",
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    line = error_line(err)
    assert code == 2 and "contradiction, entailment, neutral" in err and "0, 1" in line and "id2label" in line
    assert not (tmp_path / "results").exists()


def test_default_label_names_take_xtreme_numbering(tmp_path: Path, harness_cli: Cli) -> None:
    # a checkpoint fine-tuned by XTREME's scripts keeps LABEL_0, LABEL_1: output i is the task's label i
    model_dir = build_tiny_head(tmp_path / "pawsx-model", "AutoModelForSequenceClassification", ["LABEL_0", "LABEL_1"])
    data = tmp_path / "data"
    gold = ["0", "1", "1", "0", "1", "1", "0"]
    write_pairs(data / "pawsx", "dev", "fr", len(gold), gold)
    code, out, err = harness_cli(
        "run",
        "pawsx",
        f"hf-classifier:path={model_dir}",
        "--data-dir",
        data,
        "--split",
        "dev",
        "--langs",
        "fr",
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    folder = run_dir(tmp_path / "results", "pawsx")
    pairs = as_xtreme_reads(data / "pawsx" / "dev-fr.tsv")
    expected = [name.removeprefix("LABEL_") for name in reference_classify(model_dir, pairs)]
    assert label_lines(folder / "predictions" / "pawsx" / "test-fr.tsv") == expected
    accuracy = sum(p == g for p, g in zip(expected, gold)) / len(gold) * 100
    assert rows_of(folder)["fr"]["metrics"]["accuracy"] == pytest.approx(accuracy)


def test_panx_pieces_joined_back_and_scored_as_seqeval(
    official_data: Path, tagger_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    from seqeval.metrics import f1_score

    labels_dir = mock_labels(official_data)
    data = tmp_path / "data"
    languages = ("de", "en", "zh")
    sentences = {
        lang: write_words(
            data / "panx", "test", lang, [len(s) for s in tag_sentences(labels_dir / "panx" / f"test-{lang}.tsv")]
        )
        for lang in languages
    }
    # max_length 8: six subwords per piece, so sentences are cut into pieces and joined back
    code, out, err = harness_cli(
        "run",
        f"panx:labels={labels_dir}",
        f"hf-tagger:path={tagger_dir},max_length=8",
        "--langs",
        ",".join(languages),
        "--data-dir",
        data,
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    folder = run_dir(tmp_path / "results", "panx")
    rows = rows_of(folder)
    for lang in languages:
        predicted = tag_sentences(folder / "predictions" / "panx" / f"test-{lang}.tsv")
        expected, cuts = reference_tag(tagger_dir, sentences[lang], max_length=8)
        assert predicted == expected and cuts > 0  # some sentence was cut into pieces and joined back
        gold = tag_sentences(labels_dir / "panx" / f"test-{lang}.tsv")
        assert rows[lang]["metrics"]["f1"] == pytest.approx(f1_score(gold, predicted) * 100)
    code, out, err = harness_cli(
        "score",
        f"panx:labels={labels_dir}",
        "--langs",
        ",".join(languages),
        "--predictions",
        folder / "predictions",
        "--data-dir",
        data,
        "--output-dir",
        tmp_path / "scored",
        "--no-leaderboard",
        "--quiet",
    )
    assert code == 0, err
    assert rows_of(run_dir(tmp_path / "scored", "panx")) == rows


def test_udpos_dev_split(tagger_dir: Path, harness_cli: Cli, tmp_path: Path) -> None:
    # a NER checkpoint on UD-POS: its tags are not the task's
    data = tmp_path / "data" / "udpos"
    data.mkdir(parents=True)
    (data / "dev-en.tsv").write_text("The\tDET\ndog\tNOUN\n\nRuns\tVERB\n", encoding="utf-8")
    code, out, err = harness_cli(
        "run",
        "udpos",
        f"hf-tagger:path={tagger_dir}",
        "--data-dir",
        tmp_path / "data",
        "--split",
        "dev",
        "--langs",
        "en",
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    line = error_line(err)
    assert code == 2 and "id2label" in line and "ADJ" in line and "B-LOC" in line


def test_udpos_tagger_with_the_task_tags(tmp_path: Path, harness_cli: Cli) -> None:
    model_dir = build_tiny_head(tmp_path / "pos-model", "AutoModelForTokenClassification", list(UDPOS_TAGS))
    data = tmp_path / "data" / "udpos"
    data.mkdir(parents=True)
    gold = [["DET", "NOUN", "VERB", "PUNCT"], ["PROPN", "VERB"]]
    words = [["The", "dog", "runs", "."], ["Anna", "sings"]]
    (data / "dev-en.tsv").write_text(
        "\n\n".join("\n".join(f"{w}\t{t}" for w, t in zip(ws, ts)) for ws, ts in zip(words, gold)), encoding="utf-8"
    )
    code, out, err = harness_cli(
        "run",
        "udpos",
        f"hf-tagger:path={model_dir}",
        "--data-dir",
        tmp_path / "data",
        "--split",
        "dev",
        "--langs",
        "en",
        "--device",
        "cpu",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    from seqeval.metrics import f1_score

    folder = run_dir(tmp_path / "results", "udpos")
    predicted = tag_sentences(folder / "predictions" / "udpos" / "test-en.tsv")
    assert predicted == reference_tag(model_dir, words, max_length=128)[0]
    assert rows_of(folder)["en"]["metrics"]["f1"] == pytest.approx(f1_score(gold, predicted) * 100)


@pytest.mark.parametrize(
    "case",
    [
        "label outside the set",
        "tags shorter than the sentence",
        "unknown language",
        "no labels for the test split",
        "row that is not a pair",
    ],
)
def test_bad_input_is_one_line_exit_2(
    case: str, classifier_dir: Path, tagger_dir: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    if case == "label outside the set":
        write_pairs(data / "xnli", "dev", "de", 3, ["entailment", "maybe", "neutral"])
        args, expected = ["xnli", f"hf-classifier:path={classifier_dir}", "--split", "dev", "--langs", "de"], "line 2"
    elif case == "tags shorter than the sentence":
        labels = tmp_path / "labels" / "panx"
        labels.mkdir(parents=True)
        (labels / "test-de.tsv").write_text("B-PER\nI-PER\n\nO\n", encoding="utf-8")
        write_words(data / "panx", "test", "de", [2, 2])
        args = [f"panx:labels={tmp_path / 'labels'}", f"hf-tagger:path={tagger_dir}", "--langs", "de"]
        expected = "sentence 2"
    elif case == "unknown language":
        args, expected = ["xnli", f"hf-classifier:path={classifier_dir}", "--langs", "xx"], "unknown language 'xx'"
    elif case == "no labels for the test split":
        write_pairs(data / "xnli", "test", "de", 3)
        args, expected = ["xnli", f"hf-classifier:path={classifier_dir}", "--langs", "de"], "labels=DIR"
    else:
        (data / "xnli").mkdir(parents=True)
        (data / "xnli" / "dev-de.tsv").write_text("a\tb\tneutral\nonly one sentence\n", encoding="utf-8")
        args, expected = ["xnli", f"hf-classifier:path={classifier_dir}", "--split", "dev", "--langs", "de"], "line 2"
    data.mkdir(exist_ok=True)
    code, out, err = harness_cli("run", *args, "--data-dir", data, "--device", "cpu", "--quiet", "--no-leaderboard")
    assert code == 2 and expected in error_line(err)
    assert not (tmp_path / "results").exists()


def test_score_refuses_a_prediction_outside_the_label_set(
    official_data: Path, harness_cli: Cli, tmp_path: Path
) -> None:
    labels_dir = mock_labels(official_data)
    data = tmp_path / "data"
    count = len(label_lines(labels_dir / "xnli" / "test-de.tsv"))
    write_pairs(data / "xnli", "test", "de", count)
    predictions = tmp_path / "predictions" / "xnli"
    predictions.mkdir(parents=True)
    (predictions / "test-de.tsv").write_text("neutral\n" * (count - 1) + "contradictory\n", encoding="utf-8")
    code, out, err = harness_cli(
        "score",
        f"xnli:labels={labels_dir}",
        "--langs",
        "de",
        "--data-dir",
        data,
        "--predictions",
        tmp_path / "predictions",
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 2 and f"line {count}" in error_line(err)


def test_languages_follow_the_version() -> None:
    from harness.errors import HarnessError
    from harness_xtreme.labelled import PANX, PAWSX

    with pytest.raises(HarnessError, match="unknown language 'qu' for task panx in xtreme"):
        PANX().check_languages(["qu"])
    assert PANX(xtreme_version="xtreme-r").check_languages(["qu"]) == ("qu",)
    assert PANX().check_languages(None) == task_defs("xtreme")["panx"].languages
    with pytest.raises(HarnessError, match="pawsx is not part of xtreme-r"):
        PAWSX(xtreme_version="xtreme-r")
