"""What XTREME and XTREME-R consist of, as ``google-research/xtreme:evaluate.py`` defines them.

Each version lists its tasks with their test languages (in the official order: per-task
averages are sums in this order, so they equal the official floats), the groups its summary
table reports, and what a task's files and figure are. A submission folder holds one sub-folder
per task with a file ``test-{lang}.{suffix}`` per language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Version = Literal["xtreme", "xtreme-r"]

#: How a task's files are read and which metrics a language gets.
Kind = Literal["classification", "tagging", "bitext", "tatoeba", "qa", "mewslix", "xcopa", "lareqa"]


@dataclass(frozen=True)
class TaskDef:
    """One task of a version: its languages and the kind of files and metric it has.

    ``score_metric`` names the language metric whose mean over languages is the task's figure
    (``avg_metric`` in the official output), which groups and ``all_task`` average: ``em_f1``
    (the mean of average EM and average F1) for QA, ``f1`` for tagging and BUCC, ``accuracy``
    for classification and Tatoeba, ``map@20`` for Mewsli-X. It is None for XTREME-R's LAReQA, which
    ``evaluate.py`` lists with no languages and no metric (its mAP@20 comes from
    ``third_party/evaluate_retrieval.py``), so it is never scored there.
    """

    name: str
    kind: Kind
    languages: tuple[str, ...]
    score_metric: str | None
    #: A classification task's labels: evaluate.py compares lines as text, so a line that is no
    #: label ("abc", "NaN", "-1", blank) is a mistake in the file, refused rather than scored wrong.
    classes: tuple[str, ...] = ()

    @property
    def suffix(self) -> str:
        """File extension of the task's files: json for QA and Mewsli-X, jsonl for XCOPA, else tsv."""
        return {"qa": "json", "mewslix": "json", "xcopa": "jsonl"}.get(self.kind, "tsv")

    def file_name(self, lang: str) -> str:
        return f"test-{lang}.{self.suffix}"


def _codes(text: str) -> tuple[str, ...]:
    return tuple(text.split(","))


PAWSX = _codes("de,en,es,fr,ja,ko,zh")
XNLI = _codes("ar,bg,de,el,en,es,fr,hi,ru,sw,th,tr,ur,vi,zh")
PANX = _codes(
    "ar,he,vi,id,jv,ms,tl,eu,ml,ta,te,af,nl,en,de,el,bn,hi,mr,ur,fa,fr,it,pt,es,bg,ru,ja,ka,ko,th,sw,yo,my,"
    "zh,kk,tr,et,fi,hu"
)
UDPOS = _codes("af,ar,bg,de,el,en,es,et,eu,fa,fi,fr,he,hi,hu,id,it,ja,kk,ko,mr,nl,pt,ru,ta,te,th,tl,tr,ur,vi,yo,zh")
BUCC = _codes("de,fr,ru,zh")
#: The 36 Tatoeba languages of XTREME (XTREME-R adds az, lt, pl, uk, ro).
TATOEBA = _codes(
    "ar,he,vi,id,jv,tl,eu,ml,ta,te,af,nl,de,el,bn,hi,mr,ur,fa,fr,it,pt,es,bg,ru,ja,ka,ko,th,sw,zh,kk,tr,et,fi,hu"
)
TATOEBA_R_EXTRA = _codes("az,lt,pl,uk,ro")
XQUAD = _codes("en,es,de,el,ru,tr,ar,vi,th,zh,hi")
MLQA = _codes("en,es,de,ar,hi,vi,zh")
#: TyDiQA-GoldP as XTREME scores it: English is one of the nine averaged languages.
TYDIQA = _codes("en,ar,bn,fi,id,ko,ru,sw,te")
XCOPA = _codes("et,ht,id,it,qu,sw,ta,th,tr,vi,zh")
MEWSLIX = _codes("ar,de,en,es,fa,ja,pl,ro,ta,tr,uk")

#: Classification labels in the order of XTREME's processors' ``get_labels`` (a checkpoint
#: fine-tuned by XTREME's scripts has output i for label i).
PAWSX_CLASSES = ("0", "1")
XNLI_CLASSES = ("contradiction", "entailment", "neutral")
#: Tag sets in the order of the ``labels.txt`` XTREME's preprocess scripts write (``sort | uniq``
#: of every tag), which ``run_tag.py`` numbers: WikiANN's IOB2 entities, and UD's 17 UPOS tags.
PANX_TAGS = ("B-LOC", "B-ORG", "B-PER", "I-LOC", "I-ORG", "I-PER", "O")
UDPOS_TAGS = (
    "ADJ",
    "ADP",
    "ADV",
    "AUX",
    "CCONJ",
    "DET",
    "INTJ",
    "NOUN",
    "NUM",
    "PART",
    "PRON",
    "PROPN",
    "PUNCT",
    "SCONJ",
    "SYM",
    "VERB",
    "X",
)

TASKS: dict[Version, tuple[TaskDef, ...]] = {
    "xtreme": (
        TaskDef("pawsx", "classification", PAWSX, "accuracy", PAWSX_CLASSES),
        TaskDef("xnli", "classification", XNLI, "accuracy", XNLI_CLASSES),
        TaskDef("panx", "tagging", PANX, "f1"),
        TaskDef("udpos", "tagging", UDPOS, "f1"),
        TaskDef("bucc2018", "bitext", BUCC, "f1"),
        TaskDef("tatoeba", "tatoeba", TATOEBA, "accuracy"),
        TaskDef("xquad", "qa", XQUAD, "em_f1"),
        TaskDef("mlqa", "qa", MLQA, "em_f1"),
        TaskDef("tydiqa", "qa", TYDIQA, "em_f1"),
    ),
    "xtreme-r": (
        TaskDef("xnli", "classification", XNLI, "accuracy", XNLI_CLASSES),
        TaskDef("panx", "tagging", PANX + _codes("qu,pl,uk,az,lt,pa,gu,ro"), "f1"),
        TaskDef("udpos", "tagging", UDPOS + _codes("lt,pl,uk,wo,ro"), "f1"),
        TaskDef("tatoeba", "tatoeba", TATOEBA + TATOEBA_R_EXTRA, "accuracy"),
        TaskDef("xcopa", "xcopa", XCOPA, "accuracy"),
        TaskDef("lareqa", "lareqa", (), None),
        TaskDef("mewslix", "mewslix", MEWSLIX, "map@20"),
        TaskDef("xquad", "qa", XQUAD + ("ro",), "em_f1"),
        TaskDef("mlqa", "qa", MLQA, "em_f1"),
        TaskDef("tydiqa", "qa", TYDIQA, "em_f1"),
    ),
}

#: The tasks whose test data is parallel: each item is translated into every language and keeps
#: its id there (XNLI's and PAWS-X's pairs and XCOPA's items on the same line of every language's
#: file; XQuAD's and MLQA's question ids). TyDiQA's questions were written in each language, and
#: Tatoeba's, BUCC's, Mewsli-X's, PAN-X's and UD's sentences differ from language to language.
PARALLEL = frozenset({"xnli", "pawsx", "xcopa", "xquad", "mlqa"})


def item_cluster(unit: str, item_id: str) -> str:
    """A submission item's cluster (units are ``task/lang``): a parallel task's item together with
    its translations (``xnli/7`` in every language), any other item alone."""
    task = unit.partition("/")[0]
    return f"{task}/{item_id}" if task in PARALLEL else f"{unit}/{item_id}"


#: The summary groups, each the mean of its tasks' figures (XTREME-R lists XCOPA twice).
GROUPS: dict[Version, dict[str, tuple[str, ...]]] = {
    "xtreme": {
        "classification": ("pawsx", "xnli"),
        "tagging": ("udpos", "panx"),
        "qa": ("xquad", "mlqa", "tydiqa"),
        "retrieval": ("bucc2018", "tatoeba"),
    },
    "xtreme-r": {
        "classification": ("xnli", "xcopa"),
        "tagging": ("udpos", "panx"),
        "qa": ("xquad", "mlqa", "tydiqa"),
        "retrieval": ("tatoeba", "mewslix"),
        "multi_choice": ("xcopa",),
    },
}


def task_defs(version: Version) -> dict[str, TaskDef]:
    """The tasks of ``version`` by name, in the official order."""
    return {task.name: task for task in TASKS[version]}
