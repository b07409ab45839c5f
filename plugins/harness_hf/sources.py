"""Where a checkpoint comes from: a local folder, or a model the user already has in the Hugging
Face cache, and what a sentence-transformers folder says about how to encode with it.

Names such as ``intfloat/multilingual-e5-small`` (optionally ``@revision``) are looked up in the
local Hugging Face cache only, through ``huggingface_hub.snapshot_download(local_files_only=True)``
so the cache layout (``models--org--name/refs/<branch>``, ``snapshots/<commit>/``) is read by
the library that writes it. The cache folder is computed here on every call from
``HF_HUB_CACHE``, ``HF_HOME``/hub or ``~/.cache/huggingface/hub`` and passed explicitly, because
``huggingface_hub`` fixes its own default when it is first imported. Nothing is ever downloaded.

A sentence-transformers folder is read as data (the package is not a dependency): its
``modules.json`` names the transformer folder, the pooling and whether vectors are
L2-normalised; ``sentence_bert_config.json`` the maximum length; and
``config_sentence_transformers.json`` the prompts, which become the encoder's prefixes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness.errors import HarnessError

Pooling = Literal["cls", "mean"]

#: sentence-transformers' pooling flags (``1_Pooling/config.json``) and the encoder's pooling.
POOLING_FLAGS: dict[str, Pooling] = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean"}

#: Prompt names that give each side's prefix, first found wins; without one, a side takes the
#: ``default_prompt_name`` prompt, as sentence-transformers applies it to any text encoded
#: without an explicit prompt.
QUERY_PROMPTS = ("query",)
PASSAGE_PROMPTS = ("passage", "document")


@dataclass(frozen=True)
class EncoderSettings:
    """How a sentence-transformers folder says its model encodes: the defaults of ``hf-encoder``'s
    options (an option the user gives explicitly wins)."""

    #: The folder holding the transformers checkpoint (config.json, weights, tokenizer).
    folder: Path
    pooling: Pooling
    #: True when the module list has a ``Normalize`` module (vectors are L2-normalised).
    normalize: bool
    #: ``max_seq_length`` of ``sentence_bert_config.json``; None when the folder does not say.
    max_length: int | None
    query_prefix: str
    passage_prefix: str


def hub_cache() -> Path:
    """The Hugging Face hub cache folder, read from the environment now (not at import), so a
    changed ``HF_HUB_CACHE``/``HF_HOME`` is honoured."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path("~/.cache/huggingface/hub").expanduser()


def split_revision(source: str) -> tuple[str, str | None]:
    """``org/name@rev`` as (``org/name``, ``rev``); a name without ``@`` has no revision."""
    name, at, revision = source.partition("@")
    return name, (revision if at else None)


def cached_snapshot(source: str, revision: str | None, owner: str) -> Path:
    """The snapshot folder of a model name in the local Hugging Face cache, or a one-line error
    saying where it looked. ``revision`` (or ``@rev`` in the name) is a branch or tag recorded in
    ``refs/`` or a full commit hash; without one it is ``main``."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, IncompleteSnapshotError, LocalEntryNotFoundError

    name, in_name = split_revision(source)
    if in_name is not None and revision is not None and in_name != revision:
        raise HarnessError(f"{owner}: {source} names revision {in_name} but revision={revision}")
    revision = revision or in_name or "main"
    cache = hub_cache()
    repo_folder = cache / ("models--" + name.replace("/", "--"))
    try:
        folder = snapshot_download(name, revision=revision, cache_dir=cache, local_files_only=True)
    except HFValidationError:
        raise HarnessError(f"{owner}: path={source} is not a local checkpoint folder nor a Hugging Face "
                           "model name (nothing is downloaded)") from None
    except IncompleteSnapshotError:
        raise HarnessError(f"{owner}: the cached snapshot of {name} at revision {revision} lacks files "
                           f"({repo_folder}); nothing is downloaded") from None
    except LocalEntryNotFoundError:
        if repo_folder.is_dir():
            raise HarnessError(f"{owner}: {name} has no revision {revision} in the Hugging Face cache "
                               f"({repo_folder}: refs/, snapshots/); nothing is downloaded") from None
        raise HarnessError(f"{owner}: path={source} is not a local checkpoint folder and not in the Hugging Face cache "
                           f"({repo_folder}); nothing is downloaded") from None
    return Path(folder)


def resolve_source(source: str | Path, owner: str, revision: str | None = None) -> Path:
    """The folder a model's ``path`` option names: an existing local folder as given, otherwise a
    model name looked up in the local Hugging Face cache."""
    local = Path(source).expanduser()
    if local.is_dir() and revision is None:
        return local
    if local.is_dir():
        raise HarnessError(f"{owner}: revision={revision} applies to a Hugging Face cache name, "
                           f"but {local} is a local folder")
    return cached_snapshot(str(source), revision, owner)


def _read_json(path: Path, owner: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise HarnessError(f"{owner}: cannot read {path}: {error}") from None


def _module_kind(module: dict[str, Any]) -> str:
    """``sentence_transformers.models.Pooling`` (or a submodule path to it) as ``Pooling``."""
    return str(module.get("type", "")).rsplit(".", 1)[-1]


def _modules(folder: Path, owner: str) -> dict[str, dict[str, Any]] | None:
    """The modules of a sentence-transformers folder by kind; None when ``modules.json`` is absent.
    A module the encoder cannot reproduce (Dense, ...) is an error, not silently skipped, since
    the vectors would then not be the model's."""
    path = folder / "modules.json"
    if not path.is_file():
        return None
    modules = {_module_kind(m): m for m in _read_json(path, owner)}
    unsupported = sorted(set(modules) - {"Transformer", "Pooling", "Normalize"})
    if unsupported:
        raise HarnessError(f"{owner}: {path} has modules hf-encoder cannot reproduce: {', '.join(unsupported)}")
    if "Transformer" not in modules:
        raise HarnessError(f"{owner}: {path} has no Transformer module")
    return modules


def transformer_folder(folder: Path, owner: str) -> Path:
    """The folder with the transformers checkpoint: ``folder`` itself, or for a sentence-transformers
    folder its Transformer module's path (often ``""`` or ``0_Transformer``)."""
    modules = _modules(folder, owner)
    if modules is None:
        return folder
    return folder / str(modules["Transformer"].get("path", ""))


def _pooling(path: Path, owner: str) -> Pooling:
    """The one pooling mode the Pooling config turns on; cls and mean are supported."""
    config = _read_json(path, owner)
    modes = sorted(key for key, value in config.items() if key.startswith("pooling_mode_") and value is True)
    if len(modes) != 1 or modes[0] not in POOLING_FLAGS:
        named = ", ".join(modes) or "none"
        raise HarnessError(f"{owner}: {path} uses pooling {named}; hf-encoder supports "
                           f"{' or '.join(POOLING_FLAGS)} alone")
    pooling = POOLING_FLAGS[modes[0]]
    if pooling == "mean" and config.get("include_prompt") is False:
        raise HarnessError(f"{owner}: {path} leaves the prompt out of mean pooling (include_prompt=false), "
                           "which hf-encoder does not reproduce")
    return pooling


def _prefix(prompts: dict[str, str], names: tuple[str, ...], default: str) -> str:
    return next((prompts[name] for name in names if name in prompts), default)


def encoder_defaults(folder: Path, owner: str = "hf-encoder") -> EncoderSettings | None:
    """How the sentence-transformers folder ``folder`` encodes, or None when it is not one (no
    ``modules.json``). Prompts map to prefixes as: query side ``query``; passage side
    ``passage``, else ``document``; a side without its prompt takes the ``default_prompt_name``
    prompt, else no prefix."""
    modules = _modules(folder, owner)
    if modules is None:
        return None
    if "Pooling" not in modules:
        raise HarnessError(f"{owner}: {folder / 'modules.json'} has no Pooling module")
    model_folder = folder / str(modules["Transformer"].get("path", ""))
    pooling = _pooling(folder / str(modules["Pooling"].get("path", "")) / "config.json", owner)
    bert_config = model_folder / "sentence_bert_config.json"
    max_length = _read_json(bert_config, owner).get("max_seq_length") if bert_config.is_file() else None
    st_config = folder / "config_sentence_transformers.json"
    config = _read_json(st_config, owner) if st_config.is_file() else {}
    prompts: dict[str, str] = config.get("prompts") or {}
    default_name = config.get("default_prompt_name")
    if default_name and default_name not in prompts:
        raise HarnessError(f"{owner}: {st_config} names default_prompt_name {default_name}, which is not a prompt")
    default = prompts[default_name] if default_name else ""
    return EncoderSettings(
        folder=model_folder,
        pooling=pooling,
        normalize="Normalize" in modules,
        max_length=max_length,
        query_prefix=_prefix(prompts, QUERY_PROMPTS, default),
        passage_prefix=_prefix(prompts, PASSAGE_PROMPTS, default),
    )
