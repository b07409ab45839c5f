"""Declares the replay and reference models; importing this module imports nothing heavy."""

from harness.plugin import ModelSpec, hookimpl


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "predictions",
            "harness_baselines.models:ReplayPredictions",
            "replay a predictions file in the task's official format (file=...): the submission path",
        ),
        ModelSpec(
            "oracle", "harness_baselines.models:Oracle", "the gold answers, as the task defines them (sanity row)"
        ),
        ModelSpec("empty", "harness_baselines.models:Empty", "empty answers / rankings (the metric's floor)"),
    ]
