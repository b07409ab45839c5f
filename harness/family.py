"""Model families: one model per task of a suite, for benchmarks that fine-tune one checkpoint per
task and score them together.

XTREME fine-tunes a pretrained encoder separately for each task (a classifier on MultiNLI for
XNLI, another on PAWS for PAWS-X, a tagger per tagging task, a reader on SQuAD for the three QA
tasks) and uses the encoder itself for retrieval; its score averages over all of them. One model
object cannot be all of these, so a suite is run with a *family*, a JSON file
(``schemas/model-family.schema.json``) naming the model of each task::

    {"name": "mbert",
     "models": {"xnli": "hf-classifier:path=xnli", "pawsx": "hf-classifier:path=pawsx",
                "panx": "hf-tagger:path=panx", "udpos": "hf-tagger:path=udpos",
                "xquad,mlqa,tydiqa": "hf-reader:path=squad",
                "bucc2018,tatoeba": "hf-encoder:path=bert-base-multilingual-cased"}}

Tasks that share a model run together (loaded once, one encoding queue). Relative paths in the
options a model declares as paths are taken relative to the family file, so a family folder can be
moved or shared whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError, InputError
from harness.io import read_json
from harness.options import bind_options, parse_named, path_options
from harness.registry import Registry, load_target
from harness.validation import validate

#: The schema of a family file.
FAMILY_SCHEMA = "model-family"


@dataclass(frozen=True)
class ModelFamily:
    """A family file, read: its name and the model (as command-line text) of each task it names."""

    name: str
    file: Path
    models: dict[str, str]

    @classmethod
    def read(cls, path: Path, registry: Registry) -> ModelFamily:
        """Read and check ``path``: every key a registered task named once, every model a
        registered model with valid options (nothing is loaded yet)."""
        document = read_json(path)
        validate(document, FAMILY_SCHEMA, file=path)
        models: dict[str, str] = {}
        for key, text in document["models"].items():
            for task in key.split(","):
                if task not in registry.tasks.entries:
                    raise InputError(f"'{task}' is no task of the installed plugins", file=path, field=f"models.{key}")
                if task in models:
                    raise InputError(f"task '{task}' is given a model twice", file=path, field=f"models.{key}")
            try:
                model = _relative_to(text, path.parent, registry)
            except HarnessError as exc:
                raise InputError(str(exc), file=path, field=f"models.{key}") from None
            models.update(dict.fromkeys(key.split(","), model))
        return cls(document["name"], path, models)

    def groups(self, task_texts: Sequence[str]) -> list[tuple[str, list[str]]]:
        """``task_texts`` grouped by their model, in the order the tasks come: each group runs as
        one suite with its model loaded once. Refuses (before any work) a task the family
        does not cover."""
        missing = [text for text in task_texts if parse_named(text).name not in self.models]
        if missing:
            names = ", ".join(parse_named(text).name for text in missing)
            raise InputError(f"models: no model for {names} (a family names the model of every task it runs)",
                             file=self.file)
        groups: dict[str, list[str]] = {}
        for text in task_texts:
            groups.setdefault(self.models[parse_named(text).name], []).append(text)
        return list(groups.items())


def _relative_to(text: str, folder: Path, registry: Registry) -> str:
    """``text`` with the relative values of its path options made relative to ``folder``, its
    options checked."""
    named = parse_named(text)
    spec, plugin = registry.model(named.name)
    model_cls = load_target(spec, plugin, "model")
    paths = path_options(model_cls)
    options = {key: str(folder / value) if key in paths and not Path(value).expanduser().is_absolute() else value
               for key, value in named.options.items()}
    bind_options(model_cls, options, owner=f"model {named.name}")  # a wrong option stops the suite before it starts
    return named.name + "".join(f"{':' if i == 0 else ','}{k}={v}" for i, (k, v) in enumerate(options.items()))
