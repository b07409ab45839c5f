"""Tiny random classification and token classification checkpoints built from a config and saved
as real checkpoint folders, so tests load them through the code path of a real checkpoint."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.tiny_models import tiny_bert_config, train_wordpiece


def build_tiny_head(folder: Path, head: str, labels: Sequence[str], seed: int = 0) -> Path:
    """A random BERT with a ``head`` (``AutoModelForSequenceClassification`` or
    ``AutoModelForTokenClassification``) whose config names its outputs ``labels``. Torch is set to
    one thread, as for the other tiny models: on a shared small machine more only fight."""
    import torch
    import transformers

    torch.set_num_threads(1)

    folder.mkdir(parents=True, exist_ok=True)
    train_wordpiece(folder)
    torch.manual_seed(seed)
    config = tiny_bert_config(len(transformers.AutoTokenizer.from_pretrained(str(folder))))
    config.num_labels = len(labels)
    config.id2label = dict(enumerate(labels))
    config.label2id = {label: i for i, label in enumerate(labels)}
    getattr(transformers, head).from_config(config).save_pretrained(str(folder))
    return folder
