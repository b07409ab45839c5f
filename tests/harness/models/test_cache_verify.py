"""Issue 24: ``harness cache info --verify`` encodes each shard's sample again with the model that
wrote it (rebuilt from ``model.json`` as a run loads it) and names the shards whose vectors
disagree, even when their checksum was recomputed and every row looks like one of the model's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from harness.models.cache import EmbeddingCache, text_key
from tests.harness.models.test_cache_hardening import rewrite_shard

Cli = Callable[..., tuple[int, str, str]]


def _shards(cache_dir: Path) -> dict[str, Path]:
    """The vectors file of each shard by the role of its texts (the fake task writes one per role)."""
    return {
        json.loads(path.read_text())["rows"][0]["role"]: path.with_name(
            path.name.replace(".sample.json", ".vectors.npy")
        )
        for path in cache_dir.rglob("*.sample.json")
    }


def _verdicts(out: str, cache_dir: Path) -> dict[Path, str]:
    """Shard file -> verdict, from the ``--verify`` table."""
    verdicts = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[1].startswith("embeddings/"):
            verdicts[cache_dir / parts[1]] = "not verified" if parts[2] == "not" else parts[2]
    return verdicts


def _run(harness_cli: Cli, model: str, cache_dir: Path, tmp_path: Path) -> None:
    code, _, err = harness_cli(
        "--plugin",
        "tests.harness.fakes",
        "run",
        "fake-lookup",
        model,
        "--cache-dir",
        cache_dir,
        "--output-dir",
        tmp_path / "out",
        "--leaderboard",
        tmp_path / "board.jsonl",
    )
    assert code == 0, err


def test_verify_names_exactly_the_shard_whose_vectors_were_replaced(
    tiny_encoder_dir: Path, tmp_path: Path, harness_cli: Cli
) -> None:
    cache_dir = tmp_path / "cache"
    _run(harness_cli, f"hf-encoder:path={tiny_encoder_dir}", cache_dir, tmp_path)
    shards = _shards(cache_dir)
    assert sorted(shards) == ["passage", "query"]
    code, out, err = harness_cli("cache", "info", "--verify", "--cache-dir", cache_dir)
    assert code == 0, err
    assert _verdicts(out, cache_dir) == {shards["passage"]: "agrees", shards["query"]: "agrees"}
    assert "(tolerance 0.001, float32)" in out and out.splitlines()[-1] == (
        "verify: 2 shards; agrees: 2, disagrees: 0, not verified: 0"
    )

    # the passages' vectors moved one row down, the checksum recomputed: every row is a unit
    # vector the model wrote, so nothing a load checks can tell
    tampered = shards["passage"]
    rewrite_shard(tampered, np.roll(np.load(tampered), 1, axis=0))
    identity = json.loads((tampered.parent / "model.json").read_text())
    assert len(EmbeddingCache(cache_dir, identity, unit_norm=True)) == 9  # 3 passages, 6 questions

    code, out, err = harness_cli("cache", "info", "--verify", "--cache-dir", cache_dir)
    assert code == 2
    assert _verdicts(out, cache_dir) == {tampered: "disagrees", shards["query"]: "agrees"}
    assert err == (
        "error: 1 of 2 cached shards disagree with the model that wrote them and were removed (listed "
        "above); the next run encodes their texts again\n"
    )
    assert not tampered.exists() and shards["query"].exists()


def test_a_folder_whose_model_is_now_another_is_not_verified(
    tiny_encoder_dir: Path, tmp_path: Path, harness_cli: Cli
) -> None:
    cache_dir = tmp_path / "cache"
    _run(harness_cli, f"hf-encoder:path={tiny_encoder_dir}", cache_dir, tmp_path)
    meta = next(cache_dir.rglob("model.json"))
    identity = json.loads(meta.read_text())
    identity["options"]["pooling"] = "cls"  # as if another model had written the folder
    meta.write_text(json.dumps(identity))
    code, out, err = harness_cli("cache", "info", "--verify", "--cache-dir", cache_dir)
    assert code == 0, err
    assert set(_verdicts(out, cache_dir).values()) == {"not verified"}
    assert "(other weights or options)" in out


@pytest.mark.usefixtures("only_fakes")
def test_what_cannot_be_verified_is_said_and_damage_is_removed(tmp_path: Path, harness_cli: Cli) -> None:
    cache_dir = tmp_path / "cache"
    _run(harness_cli, "letter-counts", cache_dir, tmp_path)
    shards = _shards(cache_dir)
    # a shard from before samples were kept
    shards["query"].with_name(shards["query"].name.replace(".vectors.npy", ".sample.json")).unlink()
    # a zeroed row under a recomputed checksum: damage a load would refuse
    zeroed = np.load(shards["passage"])
    zeroed[0] = 0
    rewrite_shard(shards["passage"], zeroed)
    code, out, err = harness_cli("cache", "info", "--verify", "--cache-dir", cache_dir)
    assert code == 2
    assert _verdicts(out, cache_dir) == {shards["passage"]: "disagrees", shards["query"]: "not verified"}
    assert "1 of 3 rows all zeros; removed" in out and "no sample of its texts" in out
    assert not shards["passage"].exists()


@pytest.mark.usefixtures("only_fakes")
def test_a_sample_that_is_not_the_shards_texts_or_a_model_that_cannot_load_is_not_verified(
    tmp_path: Path, harness_cli: Cli
) -> None:
    cache_dir = tmp_path / "cache"
    _run(harness_cli, "letter-counts", cache_dir, tmp_path)
    sample = next(cache_dir.rglob("*.sample.json"))
    rows = json.loads(sample.read_text())
    assert [text_key(row["role"], row["text"]) for row in rows["rows"]] == [
        key.tobytes()
        for key in np.load(sample.with_name(sample.name.replace(".sample.json", ".keys.npy")))[
            [row["row"] for row in rows["rows"]]
        ]
    ]  # the sample is the texts of its rows
    rows["rows"][0]["text"] += " changed"
    sample.write_text(json.dumps(rows))
    code, out, _ = harness_cli("cache", "info", "--verify", "--cache-dir", cache_dir)
    assert code == 0 and f"its sample's row {rows['rows'][0]['row']} is not the text of that row" in out
    meta = next(cache_dir.rglob("model.json"))
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "name": "no-such-model"}))
    code, out, _ = harness_cli("cache", "info", "--verify", "--cache-dir", cache_dir)
    assert code == 0 and set(_verdicts(out, cache_dir).values()) == {"not verified"}
    assert "its model cannot be loaded (RegistryError: " in out
