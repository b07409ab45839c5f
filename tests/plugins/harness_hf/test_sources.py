"""Models users already have: names found in a Hugging Face cache laid out by hand in a temporary
folder, and sentence-transformers folders read as data, all without the network."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from harness.definitions.model import Runtime
from harness.errors import HarnessError
from harness_hf.checkpoint import check_folder
from harness_hf.encoder import HFEncoder
from harness_hf.reader import HFReader
from harness_hf.sources import EncoderSettings, encoder_defaults, hub_cache, resolve_source

MAIN = "a" * 40
OLDER = "b" * 40
OWNER = "model hf-encoder"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test: nothing may be downloaded."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hugging Face cache named by HF_HUB_CACHE."""
    folder = tmp_path / "hub"
    folder.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    monkeypatch.delenv("HF_HOME", raising=False)
    return folder


def put_in_cache(
    hub: Path, repo_id: str, source: Path, commit: str, refs: tuple[str, ...] = ("main",), symlinks: bool = True
) -> Path:
    """Lay ``source``'s files out as the hub library does: content in blobs/, the snapshot's files
    as relative links to them (or plain copies), and refs/<branch> holding the commit."""
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    for file in sorted(p for p in source.rglob("*") if p.is_file()):
        target = snapshot / file.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if symlinks:
            blob = repo / "blobs" / hashlib.sha256(file.read_bytes()).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, blob)
            target.symlink_to(Path(*[".."] * (len(target.relative_to(repo).parts) - 1), "blobs", blob.name))
        else:
            shutil.copyfile(file, target)
    for ref in refs:
        (repo / "refs" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snapshot


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


def sentence_transformers_folder(
    folder: Path,
    checkpoint: Path,
    transformer_path: str,
    pooling: str,
    normalize: bool,
    prompts: dict[str, Any] | None,
    max_seq_length: int,
) -> Path:
    """A sentence-transformers layout around a copy of ``checkpoint``, as its ``save`` writes it."""
    shutil.copytree(checkpoint, folder / transformer_path, dirs_exist_ok=True)
    modules = [
        {"idx": 0, "name": "0", "path": transformer_path, "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    write_json(folder / "modules.json", modules)
    flags = ["cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken"]
    write_json(
        folder / "1_Pooling" / "config.json",
        {"word_embedding_dimension": 32, **{f"pooling_mode_{f}": f == pooling for f in flags}},
    )
    write_json(
        folder / transformer_path / "sentence_bert_config.json",
        {"max_seq_length": max_seq_length, "do_lower_case": False},
    )
    if prompts is not None:
        write_json(folder / "config_sentence_transformers.json", prompts)
    return folder


# --- names in the Hugging Face cache -----------------------------------------------------------


@pytest.mark.parametrize("symlinks", [True, False])
def test_a_cached_name_resolves_to_its_main_snapshot(hub: Path, tiny_encoder_dir: Path, symlinks: bool) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, MAIN, symlinks=symlinks)
    folder = resolve_source("org/tiny", OWNER)
    assert folder == hub / "models--org--tiny" / "snapshots" / MAIN
    assert (folder / "config.json").read_bytes() == (tiny_encoder_dir / "config.json").read_bytes()
    assert (folder / "config.json").is_symlink() is symlinks


def test_a_branch_revision_is_read_from_refs(hub: Path, tiny_encoder_dir: Path) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, MAIN)
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, OLDER, refs=("v1",))
    older = hub / "models--org--tiny" / "snapshots" / OLDER
    assert resolve_source("org/tiny@v1", OWNER) == older
    assert resolve_source("org/tiny", OWNER, revision="v1") == older
    assert resolve_source("org/tiny@main", OWNER) == hub / "models--org--tiny" / "snapshots" / MAIN


def test_a_commit_hash_names_its_snapshot_without_refs(hub: Path, tiny_encoder_dir: Path) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, OLDER, refs=())
    assert resolve_source(f"org/tiny@{OLDER}", OWNER) == hub / "models--org--tiny" / "snapshots" / OLDER


def test_the_cache_folder_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HOME", raising=False)
    assert hub_cache() == tmp_path / "home" / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert hub_cache() == tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert hub_cache() == tmp_path / "elsewhere"


def test_a_name_under_hf_home_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_encoder_dir: Path) -> None:
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    put_in_cache(tmp_path / "hf" / "hub", "org/tiny", tiny_encoder_dir, MAIN)
    assert resolve_source("org/tiny", OWNER) == tmp_path / "hf" / "hub" / "models--org--tiny" / "snapshots" / MAIN


def one_line_error(source: str, revision: str | None = None) -> str:
    with pytest.raises(HarnessError) as error:
        resolve_source(source, OWNER, revision)
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_missing_name_says_where_it_looked(hub: Path) -> None:
    message = one_line_error("intfloat/multilingual-e5-small")
    assert message.startswith(f"{OWNER}: path=intfloat/multilingual-e5-small is not a local checkpoint folder")
    assert str(hub / "models--intfloat--multilingual-e5-small") in message
    assert message.endswith("nothing is downloaded")


def test_an_unknown_revision_is_named(hub: Path, tiny_encoder_dir: Path) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, MAIN)
    message = one_line_error("org/tiny@v2")
    assert "org/tiny has no revision v2" in message and str(hub / "models--org--tiny") in message
    assert "no revision " + "c" * 40 in one_line_error("org/tiny", revision="c" * 40)


def test_two_different_revisions_are_refused(hub: Path, tiny_encoder_dir: Path) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, MAIN)
    assert (
        one_line_error("org/tiny@main", revision="v1") == f"{OWNER}: org/tiny@main names revision main but revision=v1"
    )


def test_a_path_that_is_no_folder_nor_name_is_refused(hub: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "folder"
    assert one_line_error(str(missing)) == (
        f"{OWNER}: path={missing} is not a local checkpoint folder nor a Hugging "
        "Face model name (nothing is downloaded)"
    )


def test_a_local_folder_is_used_as_given(hub: Path, tiny_encoder_dir: Path) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, MAIN)
    assert resolve_source(tiny_encoder_dir, OWNER) == tiny_encoder_dir
    assert "is a local folder" in one_line_error(str(tiny_encoder_dir), revision="main")


# --- sentence-transformers folders --------------------------------------------------------------


def test_a_sentence_transformers_folder_gives_the_encoder_defaults(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    folder = sentence_transformers_folder(
        tmp_path / "st",
        tiny_encoder_dir,
        "",
        "cls_token",
        normalize=True,
        max_seq_length=128,
        prompts={"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": None},
    )
    assert encoder_defaults(folder) == EncoderSettings(
        folder=folder, pooling="cls", normalize=True, max_length=128, query_prefix="query: ", passage_prefix="passage: "
    )


def test_a_transformer_subfolder_mean_pooling_and_the_default_prompt(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    folder = sentence_transformers_folder(
        tmp_path / "st",
        tiny_encoder_dir,
        "0_Transformer",
        "mean_tokens",
        normalize=False,
        max_seq_length=256,
        prompts={"prompts": {"retrieval": "Represent this: ", "document": "doc: "}, "default_prompt_name": "retrieval"},
    )
    # the query side has no "query" prompt, so it takes the default; "document" is the passage side
    assert encoder_defaults(folder) == EncoderSettings(
        folder=folder / "0_Transformer",
        pooling="mean",
        normalize=False,
        max_length=256,
        query_prefix="Represent this: ",
        passage_prefix="doc: ",
    )


def test_without_prompts_there_are_no_prefixes(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    folder = sentence_transformers_folder(
        tmp_path / "st", tiny_encoder_dir, "", "cls_token", normalize=False, prompts=None, max_seq_length=64
    )
    settings = encoder_defaults(folder)
    assert settings is not None and (settings.query_prefix, settings.passage_prefix) == ("", "")


def test_a_plain_checkpoint_has_no_sentence_transformers_defaults(tiny_encoder_dir: Path) -> None:
    assert encoder_defaults(tiny_encoder_dir) is None


def test_an_unsupported_pooling_is_named(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    folder = sentence_transformers_folder(
        tmp_path / "st", tiny_encoder_dir, "", "max_tokens", normalize=True, prompts=None, max_seq_length=64
    )
    with pytest.raises(HarnessError) as error:
        encoder_defaults(folder, OWNER)
    assert str(error.value) == (
        f"{OWNER}: {folder / '1_Pooling' / 'config.json'} uses pooling "
        "pooling_mode_max_tokens; hf-encoder supports pooling_mode_cls_token or "
        "pooling_mode_mean_tokens alone"
    )


def test_a_dense_module_is_refused_rather_than_skipped(tmp_path: Path, tiny_encoder_dir: Path) -> None:
    folder = sentence_transformers_folder(
        tmp_path / "st", tiny_encoder_dir, "", "cls_token", normalize=True, prompts=None, max_seq_length=64
    )
    modules = json.loads((folder / "modules.json").read_text())
    modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    write_json(folder / "modules.json", modules)
    with pytest.raises(HarnessError, match=r"modules hf-encoder cannot reproduce: Dense$"):
        encoder_defaults(folder, OWNER)


# --- the models load what a name resolves to ----------------------------------------------------


def test_check_folder_resolves_a_cached_name(hub: Path, tiny_encoder_dir: Path) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, MAIN)
    assert check_folder(Path("org/tiny"), OWNER) == hub / "models--org--tiny" / "snapshots" / MAIN
    assert check_folder("org/tiny", OWNER, revision=MAIN) == hub / "models--org--tiny" / "snapshots" / MAIN


def test_check_folder_enters_a_cached_sentence_transformers_transformer_folder(
    hub: Path, tmp_path: Path, tiny_encoder_dir: Path
) -> None:
    st = sentence_transformers_folder(
        tmp_path / "st", tiny_encoder_dir, "0_Transformer", "cls_token", normalize=True, prompts=None, max_seq_length=64
    )
    put_in_cache(hub, "org/tiny-st", st, MAIN)
    snapshot = hub / "models--org--tiny-st" / "snapshots" / MAIN
    assert check_folder("org/tiny-st", OWNER) == snapshot / "0_Transformer"
    settings = encoder_defaults(resolve_source("org/tiny-st", OWNER))
    assert settings is not None and settings.folder == snapshot / "0_Transformer"


def cls_vectors(folder: Path, texts: list[str]) -> np.ndarray:
    """First-token vectors, L2-normalised, of a plain transformers forward pass on ``folder``."""
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    with torch.inference_mode():
        states = model(**tokenizer(texts, return_tensors="pt", padding=True)).last_hidden_state[:, 0]
    return torch.nn.functional.normalize(states, dim=-1).numpy()


def test_an_encoder_loads_a_cached_checkpoint(hub: Path, tiny_encoder_dir: Path) -> None:
    put_in_cache(hub, "org/tiny", tiny_encoder_dir, MAIN)
    texts = ["the Danube river", "中文句子"]
    expected = cls_vectors(tiny_encoder_dir, texts)
    for path in (resolve_source("org/tiny", OWNER), Path("org/tiny@main")):
        encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=path, pooling="cls")
        assert encoder.path == hub / "models--org--tiny" / "snapshots" / MAIN
        assert np.allclose(encoder.encode(texts, role="query"), expected, atol=1e-5)


def test_a_reader_loads_a_cached_checkpoint_by_name(hub: Path, tiny_reader_dir: Path) -> None:
    put_in_cache(hub, "org/tiny-reader", tiny_reader_dir, MAIN)
    reader = HFReader(runtime=Runtime(device_request="cpu"), path=Path("org/tiny-reader"))
    assert reader.path == hub / "models--org--tiny-reader" / "snapshots" / MAIN
    assert reader.model.config.architectures == ["BertForQuestionAnswering"]


def test_an_encoder_takes_a_sentence_transformers_folders_settings_unless_told_otherwise(
    tmp_path: Path, tiny_encoder_dir: Path
) -> None:
    folder = sentence_transformers_folder(
        tmp_path / "st",
        tiny_encoder_dir,
        "0_Transformer",
        "cls_token",
        normalize=True,
        max_seq_length=64,
        prompts={"prompts": {"query": "query: ", "document": "passage: "}, "default_prompt_name": None},
    )
    encoder = HFEncoder(runtime=Runtime(device_request="cpu"), path=folder)
    assert (encoder.pooling, encoder.normalizes) == ("cls", True)
    assert encoder.prefix == {"query": "query: ", "passage": "passage: "}
    assert encoder.max_length == {"query": 64, "passage": 64}
    # the vectors are the first-token vectors of the prefixed texts
    assert np.allclose(
        encoder.encode(["the Danube river"], role="query"),
        cls_vectors(tiny_encoder_dir, ["query: the Danube river"]),
        atol=1e-5,
    )
    explicit = HFEncoder(
        runtime=Runtime(device_request="cpu"), path=folder, pooling="mean", query_prefix="", passage_max_length=16
    )
    assert (explicit.pooling, explicit.prefix["query"], explicit.prefix["passage"]) == ("mean", "", "passage: ")
    assert explicit.max_length == {"query": 64, "passage": 16}
    # the label is the name the user gave, not the snapshot's hash or the subfolder's name
    assert encoder.identity().label == "st"
