"""What the XTREME plugin's tasks are, in a module that imports nothing heavy: ``plugin.py``
builds the registry's entries from it for ``harness list``, and the task classes use it as their
metadata."""

from harness.protocols import Encoder, PredictionSource, Reader
from harness.task import TaskMetadata

from harness_xtreme.benchmark import TASKS, TATOEBA, TATOEBA_R_EXTRA, TYDIQA

#: The overall figure of a submission (``evaluate.py``'s name for it).
ALL_TASK = "all_task"

TYDIQA_GOLDP = TaskMetadata(
    name="tydiqa",
    description="TyDiQA-GoldP extractive QA (9 languages), SQuAD v1.1 EM/F1 per language; mean over all "
                "nine including English (XTREME), and without English (TyDi QA's GoldP protocol).",
    reference="Clark et al., TyDi QA, TACL 2020; Hu et al., XTREME, ICML 2020; "
              "google-research/xtreme third_party/evaluate_squad.py and evaluate.py",
    languages=TYDIQA,
    splits=("test",),
    main_metric="f1",
    needs=Reader,
    prediction_format="span-qa-predictions",
    prediction_file="predictions",
    data_subdir="tydiqa",
    scorer="squad-v1.1|norm:ascii-english|em+f1|avg:mean-with-en",
)

TATOEBA_TASK = TaskMetadata(
    name="tatoeba",
    description="Tatoeba bitext retrieval (XTREME): each English sentence retrieves its translation among "
                "the other language's sentences by cosine similarity; accuracy per language and the mean "
                "(XTREME's 36 languages by default, XTREME-R's 41 with tatoeba:xtreme_version=xtreme-r).",
    reference="Hu et al., XTREME, ICML 2020; Artetxe and Schwenk, TACL 2019 (LASER Tatoeba test set); "
              "google-research/xtreme utils_preprocess.py, third_party/evaluate_retrieval.py, evaluate.py",
    languages=TATOEBA + TATOEBA_R_EXTRA,
    splits=("test",),
    main_metric="accuracy",
    needs=Encoder,
    prediction_format="tatoeba-predictions",
    prediction_file="predictions",
    data_subdir="tatoeba/v1",
    scorer="tatoeba|cosine-nn|str-eq|avg:mean",
)

#: Every language of any task of either version.
XTREME_SUBMISSION = TaskMetadata(
    name="xtreme",
    description="Scores a whole XTREME / XTREME-R submission folder exactly as evaluate.py: every task "
                "present in both folders, per language, per task (avg_metric), per group, and all_task "
                "(xtreme:xtreme_version=xtreme-r for XTREME-R).",
    reference="Hu et al., XTREME, ICML 2020; Ruder et al., XTREME-R, EMNLP 2021; google-research/xtreme "
              "evaluate.py",
    languages=tuple(sorted({lang for tasks in TASKS.values() for task in tasks for lang in task.languages})),
    splits=("test",),
    main_metric=ALL_TASK,
    needs=PredictionSource,
    prediction_format="xtreme-submission",
    prediction_file="predictions",
    unit="task",
)
