"""Issue 31, item 12: no transformers progress bar leaks out of a GGUF conversion (first seen in
``harness run xquad gemma3-270m --dry-run``: "Converting and de-quantizing GGUF tensors...",
then "Writing model shards")."""

from __future__ import annotations

import pytest


def test_conversions_bars_are_off_and_restored(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")
    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as transformers_logging

    from harness_hf.gguf import _no_progress_bars

    original = gguf_utils.tqdm
    with _no_progress_bars():
        list(gguf_utils.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."))
        list(transformers_logging.tqdm(range(3), desc="Writing model shards"))
    assert capsys.readouterr().err == ""
    assert gguf_utils.tqdm is original and transformers_logging.is_progress_bar_enabled()
    list(gguf_utils.tqdm(range(3), desc="shown again"))
    assert "shown again" in capsys.readouterr().err
