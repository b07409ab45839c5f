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
    tokenizer.train_from_iterator(
        demo_texts(), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIAL)
    )
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=512,
    )
    fast.save_pretrained(str(folder))


def tiny_bert_config(vocab_size: int):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )


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


#: A chat template of the simplest kind, for tests of instruction-tuned checkpoints.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def train_bpe(folder: Path, vocab_size: int = 600, *, chat: bool = False) -> int:
    """Train a byte-level BPE tokenizer (GPT-2's kind) on the demo data, with ``<pad>`` and
    ``</s>``, save it in ``folder`` (with :data:`CHAT_TEMPLATE` when ``chat``); its size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<pad>", "</s>", "<unk>"] + (["<|user|>", "<|assistant|>", "<|end|>"] if chat else [])
    tokenizer.train_from_iterator(
        demo_texts(),
        trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=1024
    )
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(folder))
    return len(fast)


def build_tiny_causal_lm(folder: Path, seed: int = 0, *, chat: bool = False) -> Path:
    """A random 2-layer Llama (causal LM) + byte-level BPE tokenizer in ``folder``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    vocab_size = train_bpe(folder, chat=chat)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        pad_token_id=0,
        bos_token_id=None,
        eos_token_id=1,
    )
    LlamaForCausalLM(config).save_pretrained(str(folder))
    return folder


def build_tiny_seq2seq(folder: Path, seed: int = 0) -> Path:
    """A random 2-layer T5 (seq2seq LM) + byte-level BPE tokenizer in ``folder``."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    vocab_size = train_bpe(folder)
    torch.manual_seed(seed)
    config = T5Config(
        vocab_size=vocab_size,
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    T5ForConditionalGeneration(config).save_pretrained(str(folder))
    return folder
