"""What the XOR-TyDi QA tasks are, in a module that imports nothing heavy: ``plugin.py`` builds the
registry's entries from it for ``harness list``, and the task classes use it as their metadata."""

from harness.plugin import BenchmarkRef, OpenDomainQA, Retriever, TaskMetadata

#: The seven XOR-TyDi QA languages, in the order of the official EnglishSpan scorer.
XOR_LANGUAGES: tuple[str, ...] = ("ar", "bn", "fi", "ja", "ko", "ru", "te")

#: The official v1.1 files all three tasks read (`harness data get xor-tydi`).
XOR_TYDI = BenchmarkRef.beside(__file__, "xor-tydi")

REFERENCE = "Asai et al., XOR QA: Cross-lingual Open-Retrieval Question Answering, NAACL 2021; AkariAsai/XORQA evals/"

XOR_ENGSPAN = TaskMetadata(
    name="xor-engspan",
    description="XOR-TyDi QA XOR-EnglishSpan: English short answers to questions in 7 languages (F1, EM).",
    reference=REFERENCE + "eval_xor_engspan.py",
    languages=XOR_LANGUAGES,
    splits=("dev", "test"),
    main_metric="f1",
    needs=OpenDomainQA,
    prediction_format="xor-engspan-predictions",
    data_subdir="xor-tydi",
    data=XOR_TYDI,
    scorer="xor-engspan|norm:squad-v1.1|f1+em|avg:mean",
    scale="percent",
)

XOR_FULL = TaskMetadata(
    name="xor-full",
    description="XOR-TyDi QA XOR-Full: answers in the question's language (F1, EM, character BLEU).",
    reference=REFERENCE + "eval_xor_full.py",
    languages=XOR_LANGUAGES,
    splits=("dev", "test"),
    main_metric="f1",
    needs=OpenDomainQA,
    prediction_format="xor-full-predictions",
    data_subdir="xor-tydi",
    data=XOR_TYDI,
    scorer="xor-full|norm:mecab|bleu:nltk-char4|avg:/7",
    scale="percent",
)

XOR_RETRIEVE = TaskMetadata(
    name="xor-retrieve",
    description="XOR-TyDi QA XOR-Retrieve: English passages for questions in 7 languages (R@2kt, R@5kt); "
    "corpus=... to run a retriever.",
    reference=REFERENCE + "eval_xor_retrieve.py",
    languages=XOR_LANGUAGES,
    splits=("dev", "test"),
    main_metric="r@5kt",
    needs=Retriever,
    prediction_format="xor-retrieve-predictions",
    data_subdir="xor-tydi",
    data=XOR_TYDI,
    scorer="xor-retrieve|tok:nltk|match:raw-substring|yesno:skip|avg:macro",
    scale="percent",
)
