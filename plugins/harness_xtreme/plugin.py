"""Declares the XTREME tasks and suite; importing this module imports nothing heavy."""

from pathlib import Path

from harness.hookspecs import hookimpl
from harness.registry import SuiteSpec, TaskSpec

from harness_xtreme.benchmark import TATOEBA, TYDIQA


@hookimpl
def harness_tasks() -> list[TaskSpec]:
    return [
        TaskSpec("tydiqa", "harness_xtreme.tydiqa:TyDiQAGoldP",
                 "TyDiQA-GoldP extractive QA, SQuAD v1.1 scorer, English in the average (as XTREME): EM/F1", TYDIQA),
        TaskSpec("tatoeba", "harness_xtreme.tatoeba:Tatoeba",
                 "Tatoeba bitext retrieval as XTREME: English -> 36 languages (LASER files), cosine top-1 accuracy",
                 TATOEBA),
        TaskSpec("xtreme", "harness_xtreme.submission:XtremeSubmission",
                 "a whole XTREME/XTREME-R submission folder scored as evaluate.py: tasks, groups, all_task "
                 "(xtreme:xtreme_version=xtreme-r)"),
    ]


@hookimpl
def harness_suites() -> list[SuiteSpec]:
    return [
        SuiteSpec("xtreme-retrieval", ("tatoeba", "lareqa"),
                  "XTREME(-R)'s sentence retrieval tasks an encoder runs here: Tatoeba and LAReQA (XQuAD-R)"),
    ]


@hookimpl
def harness_schemas() -> list[Path]:
    return [Path(__file__).with_name("tatoeba-predictions.schema.json"),
            Path(__file__).with_name("xtreme-submission.schema.json")]
