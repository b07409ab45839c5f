"""xlqa-harness: score models on cross-lingual QA benchmarks exactly as the official scripts do.

The core (this package) knows no benchmark: tasks and models arrive as plugins through the
``harness.plugins`` entry-point group, first-party ones included.

From Python (:mod:`harness.api`)::

    import harness
    harness.tasks(languages="de", needs="Encoder")       # what can run
    outcomes = harness.evaluate("lareqa", model)          # a name, a harness model, or any object
    harness.score("xquad", "predictions.json")           # predictions made elsewhere

The API is imported on first use, so ``import harness`` (and ``harness list``) stays fast.
"""

from typing import Any

__version__ = "0.1.0"

#: What ``harness.NAME`` gives, from :mod:`harness.api`.
_API = ("evaluate", "plan", "score", "tasks", "describe_task", "Outcome", "Plan", "TaskInfo", "TaskOption")

__all__ = ["__version__", *_API]


def __dir__() -> list[str]:
    """The public API too (imported on first use, so not yet among the module's attributes): what
    a notebook's completion and ``dir(harness)`` list."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})


def __getattr__(name: str) -> Any:
    if name in _API:
        from harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
