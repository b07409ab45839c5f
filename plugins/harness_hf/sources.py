"""Where a checkpoint comes from: a local folder, or a model named as on the Hugging Face hub, and
what a sentence-transformers folder says about how to encode with it.

Names such as ``intfloat/multilingual-e5-small`` (optionally ``@revision``) are looked up in the
local Hugging Face cache first, through ``huggingface_hub.snapshot_download(local_files_only=True)``
so the cache layout (``models--org--name/refs/<branch>``, ``snapshots/<commit>/``) is read by
the library that writes it. A name not in the cache is downloaded through the same library when
the machine may go online (neither ``HARNESS_OFFLINE``, ``HF_HUB_OFFLINE`` nor
``TRANSFORMERS_OFFLINE`` is set): the revision (a branch, tag or commit; ``main`` by default) is
resolved to its commit, whose snapshot folder the model then loads, so the model's identity and
the result name the exact commit (:func:`hub_commit`). A second run finds the snapshot in the
cache without a request. The cache folder and the hub's address (``HF_ENDPOINT``) are read here
on every call and passed explicitly, because ``huggingface_hub`` fixes its own defaults when it
is first imported.

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

from harness.plugin import HarnessError

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


#: Files a hub snapshot is fetched without: other frameworks' weights and exports, which no HF
#: model here loads (a repository often holds its weights in three or four of them).
NOT_FETCHED = (
    "*.onnx",
    "*.onnx_data",
    "onnx/*",
    "openvino/*",
    "coreml/*",
    "*.h5",
    "*.msgpack",
    "*.ot",
    "*.tflite",
    "tf_model*",
    "flax_model*",
    "rust_model*",
)
#: PyTorch pickles, fetched only when the repository has no safetensors weights.
PICKLED = ("*.bin", "*.pt", "*.pth")
#: What makes the hub off limits (any set to 1, true, yes or on).
OFFLINE_VARIABLES = ("HARNESS_OFFLINE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def offline() -> str | None:
    """The variable that keeps the hub off limits (``NAME=value``), or None when downloads may run."""
    for name in OFFLINE_VARIABLES:
        if os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}:
            return f"{name}={os.environ[name]}"
    return None


def hub_endpoint() -> str | None:
    """``HF_ENDPOINT`` read now (a site's hub mirror, or a test's server); None: the library's default."""
    return os.environ.get("HF_ENDPOINT") or None


def hub_commit(folder: Path) -> str | None:
    """The commit a hub snapshot folder holds (``.../snapshots/<commit>``, or a folder inside
    one such as a sentence-transformers model's ``0_Transformer``); None for any other folder."""
    for candidate in (folder, *folder.parents):
        if candidate.parent.name == "snapshots" and candidate.parent.parent.name.startswith("models--"):
            return candidate.name
    return None


def cached_snapshot(source: str, revision: str | None, owner: str) -> Path:
    """The snapshot folder of a model name: from the local Hugging Face cache, else downloaded from
    the hub when the machine may go online; a one-line error otherwise. ``revision`` (or ``@rev``
    in the name) is a branch, tag or full commit hash; without one it is ``main``."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, IncompleteSnapshotError, LocalEntryNotFoundError

    name, in_name = split_revision(source)
    if in_name is not None and revision is not None and in_name != revision:
        raise HarnessError(f"{owner}: {source} names revision {in_name} but revision={revision}")
    revision = revision or in_name or "main"
    cache = hub_cache()
    repo_folder = cache / ("models--" + name.replace("/", "--"))
    try:
        # the files a download skips are not asked for (the cached listing names them all)
        folder = snapshot_download(
            name, revision=revision, cache_dir=cache, local_files_only=True, ignore_patterns=[*NOT_FETCHED, *PICKLED]
        )
    except HFValidationError:
        raise HarnessError(
            f"{owner}: path={source} is not a local checkpoint folder nor a Hugging Face "
            "model name (nothing is downloaded)"
        ) from None
    except (IncompleteSnapshotError, LocalEntryNotFoundError) as error:
        blocked = offline()
        if blocked is None:
            return download_snapshot(name, revision, owner)
        if isinstance(error, IncompleteSnapshotError):
            raise HarnessError(
                f"{owner}: the cached snapshot of {name} at revision {revision} lacks files "
                f"({repo_folder}); {blocked}, so nothing is downloaded"
            ) from None
        if repo_folder.is_dir():
            raise HarnessError(
                f"{owner}: {name} has no revision {revision} in the Hugging Face cache "
                f"({repo_folder}: refs/, snapshots/); {blocked}, so nothing is downloaded"
            ) from None
        raise HarnessError(
            f"{owner}: path={source} is not a local checkpoint folder and not in the Hugging Face cache "
            f"({repo_folder}); {blocked}, so nothing is downloaded"
        ) from None
    return Path(folder)


def _hub_failure(error: BaseException, name: str, revision: str, where: str) -> str:
    """Why the hub gave nothing, from ``error`` or the errors it was raised from (the library
    wraps the answer of its first request in the error of a later step)."""
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    root: BaseException = error
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, GatedRepoError):
            return (
                f"{name} is gated on the hub: accept its terms at {where}/{name} and log in (`hf auth login` or "
                "HF_TOKEN), or pass path=FOLDER"
            )
        if isinstance(cause, RevisionNotFoundError):
            return f"{name} has no revision {revision} on the hub ({where}/{name})"
        if isinstance(cause, RepositoryNotFoundError):
            return (
                f"{name} is not a model on the hub ({where}/{name}), or a private one (log in with "
                "`hf auth login` or HF_TOKEN)"
            )
        cause = cause.__cause__
    while root.__cause__ is not None:  # the first failure (not the cache miss that led here)
        root = root.__cause__
    reason = str(root).splitlines()[0] if str(root) else type(root).__name__
    return f"{name} is not in the Hugging Face cache and the hub ({where}) could not give it: {reason}"


def _silent_tqdm() -> type:
    from tqdm.auto import tqdm

    class Silent(tqdm):  # type: ignore[misc]  # tqdm ships no types: a subclass of Any
        """No bar for the listing that comes before a download (the download draws its own)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, "disable": True})

    return Silent


def download_snapshot(name: str, revision: str, owner: str) -> Path:
    """Download model ``name`` at ``revision`` from the hub into the Hugging Face cache (the
    library resolves the revision to its commit and writes ``refs/<revision>``, so the next run
    finds it offline); the files a transformers model needs, safetensors weights before pickles.
    A gated, missing or unreachable repository is one line."""
    import httpx2
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    endpoint = hub_endpoint()
    where = endpoint or "https://huggingface.co"
    try:
        listing = snapshot_download(
            name,
            revision=revision,
            cache_dir=hub_cache(),
            endpoint=endpoint,
            ignore_patterns=list(NOT_FETCHED),
            dry_run=True,
            tqdm_class=_silent_tqdm(),
        )
        has_safetensors = any(item.filename.endswith(".safetensors") for item in listing)
        skipped = [*NOT_FETCHED, *(PICKLED if has_safetensors else ())]
        folder = snapshot_download(
            name, revision=revision, cache_dir=hub_cache(), endpoint=endpoint, ignore_patterns=skipped
        )
    except (LocalEntryNotFoundError, HfHubHTTPError, httpx2.HTTPError, OSError) as error:
        raise HarnessError(f"{owner}: {_hub_failure(error, name, revision, where)}") from None
    return Path(folder)


def resolve_source(source: str | Path, owner: str, revision: str | None = None) -> Path:
    """The folder a model's ``path`` option names: an existing local folder as given, otherwise a
    model name from the Hugging Face cache or the hub (:func:`cached_snapshot`)."""
    local = Path(source).expanduser()
    if local.is_dir() and revision is None:
        return local
    if local.is_dir():
        raise HarnessError(
            f"{owner}: revision={revision} applies to a Hugging Face cache name, but {local} is a local folder"
        )
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
        raise HarnessError(
            f"{owner}: {path} uses pooling {named}; hf-encoder supports {' or '.join(POOLING_FLAGS)} alone"
        )
    pooling = POOLING_FLAGS[modes[0]]
    if pooling == "mean" and config.get("include_prompt") is False:
        raise HarnessError(
            f"{owner}: {path} leaves the prompt out of mean pooling (include_prompt=false), "
            "which hf-encoder does not reproduce"
        )
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
