"""What the XTREME plugin's tasks are, in a module that imports nothing heavy: ``plugin.py``
builds the registry's entries from it for ``harness list``, and the task classes use it as their
metadata."""

from dataclasses import replace

from harness.plugin import (
    BenchmarkRef,
    Clusters,
    Edition,
    Encoder,
    MultipleChoice,
    PairClassifier,
    PredictionSource,
    Reader,
    TaskMetadata,
    TokenTagger,
)
from harness_xtreme.benchmark import (
    BUCC,
    MEWSLIX,
    PARALLEL,
    PAWSX,
    TASKS,
    TATOEBA,
    TATOEBA_R_EXTRA,
    TYDIQA,
    XCOPA,
    XNLI,
    item_cluster,
    task_defs,
)

#: The overall figure of a submission (``evaluate.py``'s name for it).
ALL_TASK = "all_task"


def _editions(task: str) -> tuple[Edition, ...]:
    """XTREME's and XTREME-R's lists of ``task``'s languages, where both have the task: a run on
    either list is whole (the task declares their union)."""
    return tuple(Edition(version.upper(), task_defs(version)[task].languages) for version in TASKS)


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
    scale="percent",
    data=BenchmarkRef.beside(__file__, "tydiqa"),
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
    scale="percent",
    data=BenchmarkRef.beside(__file__, "tatoeba"),
    editions=_editions("tatoeba"),
)

#: Every language of any task of either version.
XTREME_SUBMISSION = TaskMetadata(
    name="xtreme",
    description="Scores a whole XTREME / XTREME-R submission folder exactly as evaluate.py: every task "
    "present in both folders, per language, per task (avg_metric), per group, and all_task "
    "(xtreme:xtreme_version=xtreme-r for XTREME-R).",
    reference="Hu et al., XTREME, ICML 2020; Ruder et al., XTREME-R, EMNLP 2021; google-research/xtreme evaluate.py",
    languages=tuple(sorted({lang for tasks in TASKS.values() for task in tasks for lang in task.languages})),
    splits=("test",),
    main_metric=ALL_TASK,
    needs=PredictionSource,
    prediction_format="xtreme-submission",
    prediction_file="predictions",
    unit="task",
    scorer="xtreme|evaluate.py|avg:mean|all_task:fsum",
    scale="percent",
    clusters=Clusters("item (with its translations)", item_cluster),
)

#: Where XTREME's tasks come from, and how their files are laid out (the plugin's README).
_XTREME = (
    "Hu et al., XTREME, ICML 2020; google-research/xtreme scripts/download_data.sh, utils_preprocess.py, evaluate.py"
)
#: The split files of XTREME's download script: "test" (labels from a label folder, ``labels=``) and "dev".
_SPLITS = ("test", "dev")


def _submission_task(
    name: str, description: str, reference: str, languages: tuple[str, ...], main_metric: str, needs: type, scorer: str
) -> TaskMetadata:
    """An XTREME task whose predictions are written as a submission folder (``{task}/test-{lang}.tsv``);
    ``scorer``: what follows the task's name in its scorer signature. A parallel task's items are
    clustered by line, the same item in every language's file."""
    return TaskMetadata(
        name=name,
        description=description,
        reference=f"{reference}; {_XTREME}",
        languages=languages,
        splits=_SPLITS,
        main_metric=main_metric,
        needs=needs,
        prediction_format="xtreme-submission",
        prediction_file="predictions",
        data_subdir=name,
        scorer=f"{name}|{scorer}",
        scale="percent",
        clusters=Clusters("line") if name in PARALLEL else None,
    )


XNLI_TASK = _submission_task(
    "xnli",
    "XNLI natural language inference (15 languages, zero-shot from English): accuracy per language and the "
    "mean, as evaluate.py; any PairClassifier (hf-classifier).",
    "Conneau et al., XNLI, EMNLP 2018",
    XNLI,
    "accuracy",
    PairClassifier,
    "acc|str-eq|avg:mean",
)
PAWSX_TASK = _submission_task(
    "pawsx",
    "PAWS-X paraphrase identification (7 languages): accuracy per language and the mean, as evaluate.py; "
    "any PairClassifier (hf-classifier).",
    "Yang et al., PAWS-X, EMNLP 2019",
    PAWSX,
    "accuracy",
    PairClassifier,
    "acc|str-eq|avg:mean",
)
PANX_TASK = replace(
    _submission_task(
        "panx",
        "PAN-X (WikiANN) named entities (40 languages, XTREME-R 48): seqeval-1.2.2 span F1 per language and the mean, as "
        "evaluate.py; any TokenTagger (hf-tagger).",
        "Pan et al., WikiANN, ACL 2017",
        task_defs("xtreme-r")["panx"].languages,
        "f1",
        TokenTagger,
        "seqeval-1.2.2|micro|f1|avg:mean",
    ),
    data=BenchmarkRef.beside(__file__, "panx"),
    editions=_editions("panx"),
)  # behind a licence click: `harness data get panx` says what to do
UDPOS_TASK = replace(
    _submission_task(
        "udpos",
        "UD-POS part-of-speech tags (33 languages, XTREME-R 38): evaluate.py's seqeval-1.2.2 'F1' per language and the "
        "mean; any TokenTagger (hf-tagger).",
        "Nivre et al., Universal Dependencies v2.5",
        task_defs("xtreme-r")["udpos"].languages,
        "f1",
        TokenTagger,
        "seqeval-1.2.2|micro|f1|avg:mean",
    ),
    editions=_editions("udpos"),
)
BUCC_TASK = _submission_task(
    "bucc2018",
    "BUCC 2018 bitext mining (de, fr, ru, zh to en): ratio-margin mining over any Encoder's vectors "
    "(k=4 both ways), threshold chosen on the dev split for best F1, F1 on the gold pairs, as XTREME.",
    "Zweigenbaum et al., BUCC 2018 shared task; Artetxe and Schwenk, margin-based mining, ACL 2019",
    BUCC,
    "f1",
    Encoder,
    "margin:ratio-k4|threshold:dev-best-f1|pair-set-f1|avg:mean",
)
MEWSLIX_TASK = _submission_task(
    "mewslix",
    "Mewsli-X entity linking as retrieval (XTREME-R, 11 languages): each WikiNews mention, in its sentence "
    "with { } around it, retrieves Wikidata entities by their descriptions (cosine, top 20) with any Encoder; "
    "map@20 (= MRR@20) per language and the mean, as evaluate.py.",
    "Botha et al., Entity Linking in 100 Languages, EMNLP 2020; Ruder et al., XTREME-R, EMNLP 2021; "
    "google-research/xtreme third_party/utils_mewslix.py, evaluate_retrieval.py",
    MEWSLIX,
    "map@20",
    Encoder,
    "mention:sentence+braces|entity:description|cosine|top20|mrr@20|avg:mean",
)
XCOPA_TASK = _submission_task(
    "xcopa",
    "XCOPA causal commonsense reasoning (XTREME-R, 11 languages): the premise's cause or effect chosen "
    "between two by any MultipleChoice model (hf-multiple-choice); accuracy per language and the mean, as evaluate.py.",
    "Ponti et al., XCOPA, EMNLP 2020; Ruder et al., XTREME-R, EMNLP 2021; google-research/xtreme "
    "third_party/run_xcopa.py",
    XCOPA,
    "accuracy",
    MultipleChoice,
    "premise+what-was-the-question|acc|avg:mean",
)
