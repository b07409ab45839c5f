"""What this plugin provides. Only names and import paths: the harness imports the targets
when a task or model is used, so `harness list` stays instant."""

from pathlib import Path

from harness.hookspecs import hookimpl
from harness.registry import ModelSpec, TaskSpec


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [TaskSpec("example-capitals", "harness_example.task:Capitals",
                     "toy cross-lingual answer retrieval about capitals (P@1)", ("de", "en", "es"))]


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [ModelSpec("char-trigram", "harness_example.model:CharTrigram", "hashed character trigrams (toy encoder)")]


@hookimpl
def harness_schemas() -> list[Path]:
    """The task's prediction format, so `harness validate --schema example-capitals` knows it."""
    return [Path(__file__).with_name("example-capitals.schema.json")]
