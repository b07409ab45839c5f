"""What ties a fine-tuned head's outputs to a task's labels: the checkpoint's ``id2label``.

A classification or tagging checkpoint numbers its outputs; its ``config.json`` names them
(``id2label``). The task says which labels it scores (in XTREME's numbering). Output i is
the task's label named like ``id2label[i]`` (case aside: MNLI checkpoints say ``ENTAILMENT``).
A checkpoint fine-tuned by XTREME's own scripts keeps transformers' default names
``LABEL_0``..``LABEL_{n-1}``, because those scripts number the labels without naming them in
the config; with exactly as many outputs as the task has labels, output i is then the task's
label i, which is XTREME's numbering. Anything else is a one-line error that shows both lists,
never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.plugin import HarnessError


def _default_names(count: int) -> list[str]:
    return [f"LABEL_{i}" for i in range(count)]


def output_labels(id2label: Mapping[int, str], task_labels: Sequence[str], owner: str) -> list[str]:
    """The task label of each of the checkpoint's outputs, in output order."""
    names = [str(id2label[i]) for i in sorted(int(key) for key in id2label)]
    by_folded = {label.casefold(): label for label in task_labels}
    if all(name.casefold() in by_folded for name in names):
        return [by_folded[name.casefold()] for name in names]
    if names == _default_names(len(names)) and len(names) == len(task_labels):
        return list(task_labels)
    raise HarnessError(
        f"{owner}: the checkpoint's labels ({', '.join(names)}; config.json id2label) are not the "
        f"task's ({', '.join(task_labels)}): name each output in id2label with one of the task's labels"
    )
