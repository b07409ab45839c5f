"""Declares the XTREME tasks and suites; importing this module imports nothing heavy.

The suites name tasks of other plugins (XQuAD, MLQA, LAReQA) by their registered names only:
they are XTREME's task groups, so XTREME's plugin declares them, and it imports none of those
plugins.
"""

from pathlib import Path

from harness.hookspecs import hookimpl
from harness.registry import SuiteSpec, TaskSpec

from harness_xtreme.metadata import (
    BUCC_TASK, PANX_TASK, PAWSX_TASK, TATOEBA_TASK, TYDIQA_GOLDP, UDPOS_TASK, XNLI_TASK, XTREME_SUBMISSION,
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
    ]


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [
        SuiteSpec("xtreme-qa", ("xquad", "mlqa", "tydiqa"), "XTREME's extractive QA tasks: XQuAD, MLQA (XLT), TyDiQA-GoldP"),
        SuiteSpec("xtreme-retrieval", ("tatoeba", "lareqa"),
                  "XTREME(-R)'s sentence retrieval tasks an encoder runs here: Tatoeba and LAReQA (XQuAD-R)"),
    ]


@hookimpl
def harness_schemas() -> list[Path]:
    return [Path(__file__).with_name("tatoeba-predictions.schema.json"),
            Path(__file__).with_name("xtreme-submission.schema.json")]
