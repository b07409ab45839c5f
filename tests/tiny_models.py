"""Tiny random transformers models built from a config, saved as real checkpoint folders.

Tests load them through exactly the code path a real checkpoint takes (``from_pretrained`` on a
folder), so everything but the weights' quality is exercised, offline and in seconds.
"""

from __future__ import annotations

from pathlib import Path

from harness.demo import LANGUAGES, parallel_qa_dir

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def demo_texts() -> list[str]:
    """Every context and question of the demo data (all languages): a tokenizer training corpus."""
    import json

    texts = []
    for lang in LANGUAGES:
        doc = json.loads((parallel_qa_dir() / f"{lang}.json").read_text(encoding="utf-8"))
        for article in doc["data"]:
            for paragraph in article["paragraphs"]:
                texts.append(paragraph["context"])
                texts.extend(qa["question"] for qa in paragraph["qas"])
    return texts


def train_wordpiece(folder: Path, vocab_size: int = 1200) -> None:
    """Train a multilingual WordPiece tokenizer on the demo data and save it in ``folder``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(handle_chinese_chars=True, lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(demo_texts(), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIAL))
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)]
    )
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_max_length=512)
    fast.save_pretrained(str(folder))


def tiny_bert_config(vocab_size: int):
    from transformers import BertConfig

    return BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=512)


def build_tiny_encoder(folder: Path, seed: int = 0) -> Path:
    """A random BertModel + trained tokenizer in ``folder``."""
    import torch
    from transformers import AutoTokenizer, BertModel

    train_wordpiece(folder)
    torch.manual_seed(seed)
    vocab_size = len(AutoTokenizer.from_pretrained(str(folder)))
    BertModel(tiny_bert_config(vocab_size)).save_pretrained(str(folder))
    return folder


def build_tiny_reader(folder: Path, seed: int = 0) -> Path:
    """A random BertForQuestionAnswering + trained tokenizer in ``folder``: an extractive reader
    whose answers mean nothing but take every code path of a real checkpoint."""
    import torch
    from transformers import AutoTokenizer, BertForQuestionAnswering

    train_wordpiece(folder)
    torch.manual_seed(seed)
    vocab_size = len(AutoTokenizer.from_pretrained(str(folder)))
    BertForQuestionAnswering(tiny_bert_config(vocab_size)).save_pretrained(str(folder))
    return folder
