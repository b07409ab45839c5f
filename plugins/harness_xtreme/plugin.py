"""Declares the XTREME tasks and suites; importing this module imports nothing heavy.

Suites ``xtreme`` and ``xtreme-r`` run a model family (``harness.running.family``: XTREME fine-tunes one
model per task) over the benchmark's tasks and score the runs as one submission with the
``xtreme`` task; the name ``xtreme`` alone is that task, and the suite when the model is a family.

The suites name tasks of other plugins (XQuAD, MLQA, LAReQA) by their registered names only:
they are XTREME's task groups, so XTREME's plugin declares them, and it imports none of those
plugins.
"""

from pathlib import Path

from harness.plugin import SuiteSpec, TaskSpec, hookimpl
from harness_xtreme.benchmark import TASKS, Version
from harness_xtreme.metadata import (
    BUCC_TASK,
    MEWSLIX_TASK,
    PANX_TASK,
    PAWSX_TASK,
    TATOEBA_TASK,
    TYDIQA_GOLDP,
    UDPOS_TASK,
    XCOPA_TASK,
    XNLI_TASK,
    XTREME_SUBMISSION,
)


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        TYDIQA_GOLDP.spec("harness_xtreme.tydiqa:TyDiQAGoldP"),
        TATOEBA_TASK.spec("harness_xtreme.tatoeba:Tatoeba"),
        XTREME_SUBMISSION.spec("harness_xtreme.submission:XtremeSubmission"),
        XNLI_TASK.spec("harness_xtreme.labelled:XNLI"),
        PAWSX_TASK.spec("harness_xtreme.labelled:PAWSX"),
        PANX_TASK.spec("harness_xtreme.labelled:PANX"),
        UDPOS_TASK.spec("harness_xtreme.labelled:UDPOS"),
        BUCC_TASK.spec("harness_xtreme.bucc:Bucc2018"),
        MEWSLIX_TASK.spec("harness_xtreme.mewslix:MewsliX"),
        XCOPA_TASK.spec("harness_xtreme.xcopa:XCOPA"),
    ]


#: This plugin's tasks whose languages depend on the version (``xtreme_version=``).
VERSIONED = frozenset({"panx", "udpos", "tatoeba"})


def version_suite(version: Version) -> SuiteSpec:
    """The suite that runs a model family over a version's tasks, in evaluate.py's order, and
    scores the runs as one submission with the ``xtreme`` task (group scores, ``all_task``)."""
    option = f":xtreme_version={version}" if version != "xtreme" else ""
    tasks = tuple(task.name + (option if task.name in VERSIONED else "") for task in TASKS[version])
    summary = (
        (
            "XTREME: a model family (one fine-tuned model per task, @family.json) over its 9 tasks, scored as "
            "evaluate.py: group scores and all_task (--labels: the label folder)"
        )
        if version == "xtreme"
        else (
            "XTREME-R: a model family over its 10 tasks, scored as evaluate.py --xtreme_version xtreme-r: every "
            "group (its all_task cannot be produced: LAReQA has no metric there; --labels)"
        )
    )
    return SuiteSpec(version, tasks, summary, scored_by=f"xtreme{option}")


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [
        version_suite("xtreme"),
        version_suite("xtreme-r"),
        SuiteSpec(
            "xtreme-qa", ("xquad", "mlqa", "tydiqa"), "XTREME's extractive QA tasks: XQuAD, MLQA (XLT), TyDiQA-GoldP"
        ),
        SuiteSpec(
            "xtreme-retrieval",
            ("tatoeba", "lareqa"),
            "XTREME(-R)'s sentence retrieval tasks an encoder runs here: Tatoeba and LAReQA (XQuAD-R)",
        ),
    ]


@hookimpl
def harness_schemas() -> list[Path]:
    return [
        Path(__file__).with_name("tatoeba-predictions.schema.json"),
        Path(__file__).with_name("xtreme-submission.schema.json"),
    ]
