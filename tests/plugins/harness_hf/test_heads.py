"""hf-classifier and hf-tagger: outputs tied to the task's labels by the config's id2label (or
XTREME's numbering for default names), refused when they do not match; a batch that runs out of
memory is halved without changing an answer; RoBERTa-type taggers get XTREME's second [SEP]."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import PairClassifier, TokenTagger
from harness.errors import HarnessError
from tests.plugins.harness_hf.tiny_heads import build_tiny_head

XNLI = ("contradiction", "entailment", "neutral")
PANX = ("B-LOC", "B-ORG", "B-PER", "I-LOC", "I-ORG", "I-PER", "O")
PAIRS = [
    ("Der Hund schläft.", "The dog sleeps."),
    ("A cat", "Un chat noir dort sur le canapé depuis ce matin."),
    ("短い文", "Ein etwas längerer Satz mit mehreren Wörtern darin."),
    ("x", "y"),
    ("Hola", "Hello there, friend"),
]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["neutral", "CONTRADICTION", "Entailment"], ["neutral", "contradiction", "entailment"]),
        (["LABEL_0", "LABEL_1", "LABEL_2"], list(XNLI)),
    ],
)
def test_outputs_take_the_task_labels_their_config_names(names: list[str], expected: list[str]) -> None:
    from harness_hf.heads import output_labels

    assert output_labels(dict(enumerate(names)), XNLI, "model m") == expected


@pytest.mark.parametrize("names", [["LABEL_0", "LABEL_1"], ["yes", "no", "maybe"], ["LABEL_1", "LABEL_0", "LABEL_2"]])
def test_outputs_that_are_not_the_task_labels_are_refused(names: list[str]) -> None:
    from harness_hf.heads import output_labels

    with pytest.raises(HarnessError, match=r"not the task's .*id2label"):
        output_labels(dict(enumerate(names)), XNLI, "model m")


def _fail_big_batches(model, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the network refuse batches of more than two inputs as a GPU out of memory would."""
    sizes: list[int] = []
    forward = model.model.forward

    def limited(*args, **kwargs):
        size = len(kwargs["input_ids"])
        sizes.append(size)
        if size > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return forward(*args, **kwargs)

    monkeypatch.setattr(model.model, "forward", limited)
    return sizes


def test_classifier_halves_a_batch_out_of_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_hf.classifier import HFClassifier

    folder = build_tiny_head(
        tmp_path / "m", "AutoModelForSequenceClassification", ["neutral", "entailment", "contradiction"]
    )
    model = HFClassifier(runtime=Runtime(device_request="cpu"), path=folder)
    assert isinstance(model, PairClassifier)
    expected = model.classify_pairs(PAIRS, labels=XNLI)
    sizes = _fail_big_batches(model, monkeypatch)
    assert model.classify_pairs(PAIRS, labels=XNLI) == expected
    # every input answered once, by a batch the network took
    assert sizes[0] == len(PAIRS) and sum(size for size in sizes if size <= 2) == len(PAIRS)
    assert model.batcher.halvings > 0


def test_tagger_halves_a_batch_out_of_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_hf.tagger import HFTagger

    folder = build_tiny_head(tmp_path / "m", "AutoModelForTokenClassification", list(PANX))
    model = HFTagger(runtime=Runtime(device_request="cpu"), path=folder, max_length=6)
    assert isinstance(model, TokenTagger)
    sentences = [a.split() + b.split() for a, b in PAIRS]
    expected = model.tag(sentences, labels=PANX)
    assert [len(tags) for tags in expected] == [len(words) for words in sentences]
    sizes = _fail_big_batches(model, monkeypatch)
    assert model.tag(sentences, labels=PANX) == expected
    pieces = len(model._pieces(sentences))
    assert sizes[0] == pieces > len(sentences) and sum(size for size in sizes if size <= 2) == pieces


def test_roberta_type_taggers_get_a_second_separator(tmp_path: Path) -> None:
    # run_tag.py's sep_token_extra: <s> subwords </s> </s>, so one subword less per piece
    import torch
    from transformers import (
        AutoModelForTokenClassification,
        AutoTokenizer,
        RobertaConfig,
        RobertaForTokenClassification,
    )

    from harness_hf.tagger import HFTagger

    folder = build_tiny_head(tmp_path / "bert", "AutoModelForTokenClassification", list(PANX))
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=len(PANX),
        id2label=dict(enumerate(PANX)),
        type_vocab_size=1,
    )
    torch.manual_seed(0)
    RobertaForTokenClassification(config).save_pretrained(str(folder))
    model = HFTagger(runtime=Runtime(device_request="cpu"), path=folder, max_length=7)
    words = ["the", "dog", "sleeps", "on", "the", "warm", "sofa", "all", "day"]
    network = AutoModelForTokenClassification.from_pretrained(str(folder)).eval()
    expected, piece, used = [], [], 0

    def subwords(word: str) -> list[str]:  # "sleeps" has 5: the unknown token, as XTREME
        pieces = tokenizer.tokenize(word)
        return pieces if 0 < len(pieces) <= 4 else [tokenizer.unk_token]

    def run(piece: list[str]) -> list[str]:
        tokens, firsts = [tokenizer.cls_token], []
        for word in piece:
            firsts.append(len(tokens))
            tokens += subwords(word)
        ids = torch.tensor([tokenizer.convert_tokens_to_ids(tokens + [tokenizer.sep_token] * 2)])
        with torch.no_grad():
            best = network(input_ids=ids).logits[0].argmax(-1)
        return [PANX[int(best[i])] for i in firsts]

    for word in words:  # 7 - 3 = 4 subwords per piece
        size = len(subwords(word))
        if piece and used + size > 4:
            expected += run(piece)
            piece, used = [], 0
        piece.append(word)
        used += size
    expected += run(piece)
    assert model.extra_separator and model.room == 4 and len(tokenizer.tokenize("sleeps")) > 4
    assert model.tag([words], labels=PANX) == [expected]
