"""A checkpoint with a real model's shape and tokenizer and random weights, for speed measurements
where the real weights cannot go (a GPU machine reached through a 64 MiB transfer, say).

Speed does not depend on the weights' values: the same config gives the same matrix products,
the same tokenizer gives the same token counts on the same texts. What changes is when a
generator stops: a random model rarely emits its end token, so every request runs to its
``max_new_tokens`` (an upper bound on a real model's decode time). Scores from such a checkpoint
mean nothing and are never reported.

    python benchmarks/shaped_checkpoint.py REAL_FOLDER OUT_FOLDER

``REAL_FOLDER`` needs ``config.json`` and the tokenizer files (``tokenizer.json``,
``tokenizer_config.json``, a chat template if any); its weights are not read. A config whose
architecture ends in ``ForCausalLM`` gets a causal LM, any other the bare encoder (``AutoModel``,
as hf-encoder loads it).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json")


def shaped_checkpoint(real: Path, out: Path, seed: int = 0) -> Path:
    """Write ``out``: ``real``'s config and tokenizer with random weights (seeded), as safetensors."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(real)
    causal = any(name.endswith("ForCausalLM") for name in config.architectures or ())
    torch.manual_seed(seed)
    model = (AutoModelForCausalLM if causal else AutoModel).from_config(config)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    for name in TOKENIZER_FILES:
        if (real / name).exists():
            shutil.copy(real / name, out / name)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("real", type=Path, help="folder with the real config.json and tokenizer files")
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(shaped_checkpoint(args.real, args.out, args.seed))


if __name__ == "__main__":
    main()
