"""A tiny random Marian translation model built from a config and saved as a checkpoint folder.

Its tokenizer is a word-level vocabulary of a few English and Finnish sentences (no
sentencepiece needed); the weights are random, so its "translations" are arbitrary vocabulary
words, deterministic for a seed. It exercises the real loading and generation code path.
"""

from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "Where is the Eiffel Tower ?",
    "When did the Titanic sink ?",
    "Where is the headquarters of Google ?",
    "What is the capital of Japan ?",
    "Missä Eiffel-torni sijaitsee ?",
    "Milloin Titanic upposi ?",
]


def build_tiny_marian(folder: Path, seed: int = 0) -> Path:
    """A random 1-layer MarianMTModel and a word-level fast tokenizer in ``folder``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import MarianConfig, MarianMTModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.train_from_iterator(SENTENCES, trainers.WordLevelTrainer(special_tokens=["<pad>", "</s>", "<unk>"]))
    eos = tokenizer.token_to_id("</s>")
    tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", eos)])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=64
    )
    fast.save_pretrained(str(folder))
    config = MarianConfig(
        vocab_size=len(fast),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        pad_token_id=fast.pad_token_id,
        eos_token_id=eos,
        decoder_start_token_id=fast.pad_token_id,
        forced_eos_token_id=eos,
    )
    torch.manual_seed(seed)
    MarianMTModel(config).save_pretrained(str(folder))
    return folder
