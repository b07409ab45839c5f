"""hf-multiple-choice: the choices equal a one-question-at-a-time forward of the checkpoint through
transformers (no batch, padded to the question's own longest pair), questions with different numbers of candidates in one call,
and a batch that runs out of memory halved without changing a choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import MultipleChoice
from harness.errors import HarnessError
from tests.plugins.harness_hf.test_heads import _fail_big_batches
from tests.plugins.harness_hf.tiny_heads import build_tiny_head

QUESTIONS = [
    ("The man broke his toe. What was the cause?", ["He dropped a hammer on his foot.", "He got a hole in his sock."]),
    ("Ich öffnete die Tür. What was the effect?", ["Ein Luftzug kam herein.", "Das Licht ging aus."]),
    ("短い文 What was the cause?", ["はい", "いいえ、まったく違う理由で長い説明がここに続きます"]),
    ("x What was the effect?", ["y", "z", "a third candidate that is rather long"]),
    ("Il pleuvait. What was the effect?", ["Nous sommes restés à la maison.", "Il faisait beau."]),
]


def reference_choices(folder: Path, questions: list[tuple[str, list[str]]], max_length: int) -> list[int]:
    """Each question alone: its (text, candidate) pairs tokenised as a pair cut longest-first, one
    forward of shape (1, candidates, tokens) padded to its own longest pair, the highest score's index."""
    import torch
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForMultipleChoice.from_pretrained(str(folder)).eval()
    out = []
    for text, candidates in questions:
        pairs = [tokenizer(text, candidate, truncation=True, max_length=max_length) for candidate in candidates]
        width = max(len(p["input_ids"]) for p in pairs)
        pairs = [tokenizer.pad(p, padding="max_length", max_length=width) for p in pairs]  # the shorter ones only
        batch = {key: torch.tensor([[p[key] for p in pairs]]) for key in pairs[0]}
        with torch.inference_mode():
            out.append(int(model(**batch).logits[0].argmax()))
    return out


def test_choices_equal_a_one_at_a_time_forward(tmp_path: Path) -> None:
    from harness_hf.multiple_choice import HFMultipleChoice

    folder = build_tiny_head(tmp_path / "m", "AutoModelForMultipleChoice", ["0", "1"], seed=3)
    model = HFMultipleChoice(runtime=Runtime(device_request="cpu", batch_size=2), path=folder, max_length=12)
    assert isinstance(model, MultipleChoice)
    chosen = model.choose(QUESTIONS)
    assert chosen == reference_choices(folder, QUESTIONS, 12)
    assert len(set(chosen)) > 1  # random weights, but not one answer for all
    with pytest.raises(HarnessError, match="without candidates"):
        model.choose([("text", [])])
    with pytest.raises(HarnessError, match="max_length must be at least 4"):
        HFMultipleChoice(runtime=Runtime(device_request="cpu"), path=folder, max_length=3)


def test_a_batch_out_of_memory_is_halved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_hf.multiple_choice import HFMultipleChoice

    folder = build_tiny_head(tmp_path / "m", "AutoModelForMultipleChoice", ["0", "1"], seed=4)
    model = HFMultipleChoice(runtime=Runtime(device_request="cpu"), path=folder)
    two = [q for q in QUESTIONS if len(q[1]) == 2]
    expected = model.choose(two)
    sizes = _fail_big_batches(model, monkeypatch)
    assert model.choose(two) == expected
    assert sizes[0] == len(two) and sum(size for size in sizes if size <= 2) == len(two)
    assert model.batcher.halvings > 0
