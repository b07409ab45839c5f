"""Local checkpoint folders: checked, hashed and loaded the same way for every HF model.

Nothing is ever downloaded: a ``path`` is a folder on disk or a name already in the local
Hugging Face cache (:mod:`harness_hf.sources`), and ``from_pretrained`` runs with
``local_files_only=True``. The weights hash covers every weight file, so a result names the
exact checkpoint it was computed with.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from harness.plugin import HarnessError, Model, ModelIdentity, Runtime
from harness.plugin.io import package_version
from harness.plugin.services import AdaptiveBatcher, file_digest
from harness_hf.sources import resolve_source, transformer_folder

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
#: Numeric precision of the forward pass (the ``precision=`` option of every HF model).
Precision = Literal["auto", "float32", "float16", "bfloat16"]


def check_folder(path: str | Path, owner: str, revision: str | None = None) -> Path:
    """The transformers checkpoint folder that ``path`` names, or a one-line error. ``path`` is a
    local folder or a model name in the local Hugging Face cache (``org/name``, ``@revision``
    optional): models users already have are used in place, and nothing is ever downloaded. In
    a sentence-transformers folder the checkpoint is its Transformer module's folder."""
    folder = transformer_folder(resolve_source(path, owner, revision), owner)
    if not (folder / "config.json").exists():
        raise HarnessError(f"{owner}: {folder} has no config.json; is it a transformers checkpoint folder?")
    return folder


def weights_hash(path: Path) -> str:
    """One SHA-256 over the weight files of a checkpoint folder (names and their digests)."""
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not files:
        raise HarnessError(f"{path} has no weight files ({', '.join(WEIGHT_SUFFIXES)})")
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode())
        digest.update(file_digest(file).removeprefix("sha256:").encode())
    return "sha256:" + digest.hexdigest()


def config_summary(path: Path) -> dict[str, Any]:
    """Architecture facts from config.json for a result's model details."""
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    keys = ("model_type", "architectures", "hidden_size", "num_hidden_layers", "vocab_size", "d_model")
    return {key: config[key] for key in keys if key in config}


def cpu_has_bf16() -> bool:
    """Whether this CPU runs bfloat16 matrix products natively (AVX512-BF16 or AMX), through
    oneDNN; without them torch emulates bf16 and it is slower than float32."""
    import torch

    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def torch_dtype(name: str, device: str, *, cpu_auto: str = "float32") -> Any:
    """The torch dtype for precision ``name``. ``auto`` is bfloat16 (float16 where bf16 is
    unsupported) on a GPU and ``cpu_auto`` on a CPU: float32 for an arbitrary checkpoint, whose
    faithfulness in bf16 nobody has checked; a model that has been checked may pass ``bfloat16``
    (used only where the CPU has native bf16, see :func:`cpu_has_bf16`)."""
    import torch

    if name == "auto":
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        name = cpu_auto if cpu_auto != "bfloat16" or cpu_has_bf16() else "float32"
    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]


class CheckpointModel(Model):
    """What every model loaded from a local transformers folder shares: the folder check, the
    device and precision, the tokenizer and weights, the length batcher, and the identity."""

    #: The ``transformers`` auto class that loads the weights (e.g. ``"AutoModel"``).
    auto_class = "AutoModel"
    #: Rows a forward pass takes when ``--batch-size`` is not given, on a CPU and on a GPU.
    cpu_batch_size = 32
    gpu_batch_size = 32

    def __init__(
        self, *, runtime: Runtime, path: Path, precision: str, label: str | None, cpu_auto: str = "float32"
    ) -> None:
        import torch

        self.owner = f"model {self.name or type(self).__name__}"
        self.path = check_folder(path, self.owner)
        self.runtime = runtime
        #: The user's name for the model: the folder they named (a sentence-transformers folder, not
        #: its Transformer subfolder) or the Hugging Face name they gave (not the snapshot hash).
        self.label = label or (Path(path).expanduser().name if Path(path).expanduser().is_dir() else str(path))
        self.device = runtime.device
        self.dtype = torch_dtype(precision, self.device, cpu_auto=cpu_auto)
        self.precision = str(self.dtype).removeprefix("torch.")
        self.batch_size = runtime.batch_size or (
            self.gpu_batch_size if self.device.startswith("cuda") else self.cpu_batch_size
        )
        self.batcher = AdaptiveBatcher(self.batch_size)
        self._torch = torch
        self.tokenizer = self.load_tokenizer()
        self.model = self.load_model()

    def load_tokenizer(self) -> Any:
        """The checkpoint's tokenizer, through ``AutoTokenizer``."""
        import transformers

        return transformers.AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)

    def load_model(self) -> Any:
        """The checkpoint's weights through transformers' :attr:`auto_class`, on the device, in
        the precision, in inference mode."""
        return self.load_weights(self.dtype)

    def load_weights(self, dtype: Any) -> Any:
        """The checkpoint's weights through transformers' :attr:`auto_class` in ``dtype``, on the
        device, in inference mode."""
        import transformers
        from transformers.utils import logging as transformers_logging

        loader = getattr(transformers, self.auto_class)
        # transformers draws a "Loading weights" bar on stderr even under --quiet; loading is a
        # phase the runner already times and logs (-v), so the bar is only noise here
        shown = transformers_logging.is_progress_bar_enabled()
        transformers_logging.disable_progress_bar()
        try:
            model = loader.from_pretrained(str(self.path), local_files_only=True, dtype=dtype)
        finally:
            if shown:
                transformers_logging.enable_progress_bar()
        return model.to(self.device).eval()

    def to_device(self, batch: dict[str, Any]) -> dict[str, Any]:
        """Tensors to the model's device: pinned memory and non-blocking copies on a GPU."""
        on_gpu = self.device.startswith("cuda")
        return {k: (v.pin_memory() if on_gpu else v).to(self.device, non_blocking=True) for k, v in batch.items()}

    def checkpoint_identity(self, default_name: str, options: dict[str, Any]) -> ModelIdentity:
        """Identity with the weights hash, the options that change outputs, and the checkpoint facts."""
        return ModelIdentity(
            name=self.name or default_name,
            label=self.label,
            weights=weights_hash(self.path),
            options={**options, "precision": self.precision},
            details={
                "path": str(self.path),
                "config": config_summary(self.path),
                "device": self.device,
                "transformers": package_version("transformers"),
                "batch_size": self.batch_size,
            },
        )


class FineTunedHead(CheckpointModel):
    """A checkpoint with a fine-tuned task head (classification, tagging, multiple choice) whose
    inputs are cut to ``max_length`` tokens, 128 as XTREME trains and tests them."""

    #: The registered model name: the identity's default name and the name in messages.
    model_name = "hf-head"

    def __init__(
        self,
        *,
        runtime: Runtime,
        path: Path,
        max_length: int = 128,
        precision: Precision = "auto",
        label: str | None = None,
    ) -> None:
        if max_length < 4:  # room for the special tokens and a subword of each text
            raise HarnessError(f"model {self.model_name}: max_length must be at least 4, not {max_length}")
        super().__init__(runtime=runtime, path=path, precision=precision, label=label)
        self.max_length = max_length

    def identity(self) -> ModelIdentity:
        return self.checkpoint_identity(self.model_name, {"max_length": self.max_length})
