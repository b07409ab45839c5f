"""A checkpoint's ``tokenizer.json`` read by the ``tokenizers`` library alone.

Why: loading a tokenizer through transformers' ``AutoTokenizer`` imports its tokenization stack
(about 1 s here before the file is even read), which a ``--dry-run`` that should answer in
seconds cannot afford. For checkpoints whose tokenizer class is transformers' generic fast one
(``PreTrainedTokenizerFast`` / ``TokenizersBackend``, as the converted ``e5-small`` folder and
many exported checkpoints have), transformers adds nothing to the file's pipeline: the features
are the file's own ids and attention mask, truncated longest-first at ``max_length`` with the
special tokens counted, and token type ids only where ``tokenizer_config.json`` lists them among
``model_input_names`` (the generic class's default leaves them out). Any other class keeps
``AutoTokenizer``. Equality with ``AutoTokenizer`` is tested on single texts and pairs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Tokenizer classes that are ``tokenizer.json`` as it is (see the module's docstring).
GENERIC_CLASSES = frozenset({"PreTrainedTokenizerFast", "TokenizersBackend"})
DEFAULT_INPUTS = ("input_ids", "attention_mask")


class TokenizerFile:
    """``tokenizer.json`` through ``tokenizers``, called like a transformers tokenizer."""

    @staticmethod
    def applies(folder: Path) -> bool:
        """Whether ``folder``'s tokenizer is the generic fast class over a ``tokenizer.json``."""
        config = folder / "tokenizer_config.json"
        if not (folder / "tokenizer.json").is_file() or not config.is_file():
            return False
        return json.loads(config.read_text(encoding="utf-8")).get("tokenizer_class") in GENERIC_CLASSES

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.model_input_names = tuple(config.get("model_input_names", DEFAULT_INPUTS))
        self.truncation_side = config.get("truncation_side", "right")
        pad = config.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        self.pad_token_id = self.tokenizer.token_to_id(pad) if pad else None

    def __call__(
        self,
        texts: Sequence[str],
        pairs: Sequence[str] | None = None,
        *,
        truncation: bool = True,
        max_length: int | None = None,
    ) -> dict[str, list[list[int]]]:
        """Features of ``texts`` (or of (text, pair) pairs), unpadded, as lists per text."""
        if truncation and max_length is not None:
            self.tokenizer.enable_truncation(max_length, strategy="longest_first", direction=self.truncation_side)
        else:
            self.tokenizer.no_truncation()
        inputs: list[Any] = list(texts) if pairs is None else list(zip(texts, pairs))
        encodings = self.tokenizer.encode_batch(inputs)
        fields = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}
        return {name: [getattr(e, fields[name]) for e in encodings] for name in self.model_input_names}
