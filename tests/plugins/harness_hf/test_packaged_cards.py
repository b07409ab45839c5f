"""The packaged language models' cards reach the leaderboard as the board's model cards: a run of
``gemma3-270m`` or ``smollm2-135m-instruct`` folds into a board (it failed, in a traceback, when
the plugin's own card stood under the board's key) and ``leaderboard show`` prints the card."""

from __future__ import annotations

import json
from pathlib import Path

from harness import leaderboard
from harness.leaderboard.rendering import render
from harness_hf.cards import GEMMA3, SMOLLM2
from harness_hf.packaged import board_card, package_details
from tests.harness.leaderboard.boards import variant


def test_packaged_models_cards_fold_into_a_board_and_show(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    for package in (GEMMA3, SMOLLM2):
        leaderboard.add_result(
            path,
            variant(package.card.title, 1.0, card=board_card(package.card).to_dict()),
            Path(f"{package.module}.json"),
        )
    cards = {entry.card.name: entry.card for entry in leaderboard.load(path).entries if entry.card}
    # parameters: the tensors of each dequantised checkpoint's model.safetensors, counted from its header
    assert {
        name: (card.parameters, card.license, card.zero_shot, card.training_languages) for name, card in cards.items()
    } == {
        "Gemma 3 270M": (268_098_176, "Gemma Terms of Use", True, None),
        "SmolLM2-135M-Instruct": (134_515_008, "Apache-2.0", True, ("en",)),
    }
    shown = render(leaderboard.load(path), max_width=200)
    assert (
        "  SmolLM2-135M-Instruct: zero-shot; 135M parameters; licence Apache-2.0; "
        "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct"
    ) in shown.splitlines()


def test_packaged_models_details_read_back_from_json_unchanged() -> None:
    """A run's result is read back from its file and must equal what was written: its model's
    details included (the card's training languages, a tuple in the card, failed it)."""
    for package in (GEMMA3, SMOLLM2):
        details = package_details(package.card)
        assert json.loads(json.dumps(details)) == details
        assert details["package"]["title"] == package.card.title
