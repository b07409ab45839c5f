"""The ``retrieve-read`` model: open-domain QA as retrieve top-k passages, read them, keep the best span.

The pipeline of the XOR QA and MKQA baselines, from parts the harness already has:

1. **Translate the question (optional).** With ``translator=...`` every question not already in
   ``target_lang`` (the corpus language, English by default) is translated into it first, and
   the translation is what is retrieved with and read (translate-test).
2. **Retrieve.** ``retriever=...`` is any Retriever (``bm25``, ``dense:encoder=...``) or any
   Encoder (``e5-small``, ``hf-encoder:path=...``: exact inner-product search). The passage
   collection ``corpus=...`` (a ``psgs_w100.tsv``-style TSV or JSON lines, or a folder of
   ``{lang}.tsv`` / ``{lang}.jsonl`` files, read by :mod:`harness.data.passages`) is indexed once,
   on the first question, and kept for the rest of the run (every task of a suite included);
   each question asks the index for its ``top_k`` passages only.
3. **Read.** ``reader=...`` is any Reader (``hf-reader:path=...``). The (question, passage text)
   pairs of all questions of one call go to the reader in one ``read`` call, so hf-reader
   batches them by length.
4. **Pick.** The k passages are treated like the windows of one long context, exactly as
   hf-reader treats the windows of one passage: the answer is the span with the highest reader
   score over all passages (a tie goes to the better-ranked passage), and

   ``no_answer_score = min over passages of the reader's null score - best span score``.

   That is the quantity SQuAD 2.0 readers (BERT, ``transformers``' ``run_qa.py``) compare with
   their ``null_score_diff_threshold``: the null ([CLS]) score of the passage that most believes
   an answer exists, minus the best answer's score. It grows as abstaining looks better, it is a
   real number on one scale for every question, and thresholding it is the reader's own
   abstention rule, so MKQA's best-threshold sweep over ``no_answer_prob`` amounts to tuning
   that threshold. A question none of whose passages holds a valid span answers "" with no
   score (MKQA reads a missing ``no_answer_prob`` as 0; an empty answer scores the same at
   every threshold), and so does a reader without null scores.
5. **Translate the answer back (optional).** A task says which language it scores answers in
   (``OpenQuestion.answer_lang``: English for XOR-EnglishSpan, the question's language for
   XOR-Full and MKQA). With ``answer_translator=...``, an answer found in a passage of another
   language is translated from the passage's language into that one; without it, answers stay
   in their passage's language. Yes/no questions get no ``yes_no``: an extractive reader has
   no principled yes/no decision.

**Generate instead of read.** With ``generator=...`` (``hf-generator:path=...``, ``openai-compatible:...``)
in place of ``reader``, the pipeline is retrieval-augmented generation: the task prompts the
generator with its template (``xor-full:prompt=rag``: the top-k passages with their ids, then the
question; see :mod:`harness.models.prompting`), and its per-instance records keep the passage ids of each
prompt. Used outside a task's prompt, it answers zero-shot with the built-in ``rag`` template.

Options with options of their own need ``--model-args`` JSON. XOR-Full end to end with real
checkpoints, here for Japanese: ``/data/wiki`` holds ``en.tsv`` (DPR's ``psgs_w100.tsv``) and
``ja.tsv`` (Japanese Wikipedia passages in the same layout), the reader is a multilingual
SQuAD 2.0 checkpoint (so its null scores mean something), and the answer translator a Marian
English-to-Japanese checkpoint::

    harness run xor-full retrieve-read --langs ja --data-dir /data/xor-tydi --model-args '{
      "corpus": "/data/wiki",
      "retriever": "dense:encoder=e5-small,index=hnsw,index_dir=/data/wiki-e5",
      "reader": "hf-reader:path=/models/xlm-roberta-large-squad2",
      "answer_translator": "hf-translator:path=/models/marian-en-ja",
      "top_k": 20}'

Answers read from Japanese passages are kept as they are; answers read from English passages go
through ``answer_translator``. ``hf-translator`` passes no language codes to its model, so with
one Marian pair per direction each language is its own run (``--langs``); merge the
``predictions.json`` files (``jq -s add``) and score them together with ``harness score
xor-full --predictions`` for the official 7-language average. For translate-test, add
``"translator": "hf-translator:path=/models/marian-mul-en"`` (every question into English
before retrieval and reading) and give an English corpus; answers still go back through
``answer_translator``. XOR-EnglishSpan wants English answers: over an English corpus no
``answer_translator`` is needed (one run serves all languages). MKQA is run like XOR-Full
(``harness run mkqa ...``): its answers are wanted in the question's language.

The result's model identity records every part (name, label, weights and options of the
retriever, reader and translators), ``top_k``, ``titles``, ``target_lang`` and the SHA-256 of
each corpus file, since each of them changes the answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from harness.plugin import (
    Generator,
    HarnessError,
    Model,
    ModelIdentity,
    ModelOption,
    OpenAnswer,
    OpenDomainQA,
    OpenQuestion,
    Ranking,
    Reader,
    ReadingExample,
    Retriever,
    Runtime,
    SearchIndex,
    SpanAnswer,
    Translator,
)
from harness.plugin.io import sha256_file
from harness.plugin.services import (
    EncodingStats,
    GenerationStats,
    Progress,
    PromptTarget,
    ReportsEncoding,
    generation_service,
    identity_part,
    load_model,
)
from harness.plugin.tasks import (
    Passage,
    Passages,
    PromptChoice,
    ask_open,
    corpus_files,
    load_template,
    read_passages,
    translate_each,
)

OWNER = "retrieve-read"


@dataclass(frozen=True)
class Choice:
    """The answer chosen for one question from its passages' spans."""

    text: str
    passage_lang: str | None  # None: no passage held a valid span
    no_answer_score: float | None


def choose(spans: Sequence[SpanAnswer], passage_langs: Sequence[str]) -> Choice:
    """The best valid span over one question's passages (in ranking order) and its no-answer
    score (see the module docstring)."""
    best: int | None = None
    for i, span in enumerate(spans):
        if span.text and span.score > float("-inf") and (best is None or span.score > spans[best].score):
            best = i
    if best is None:
        return Choice("", None, None)
    nulls = [span.no_answer_score for span in spans if span.no_answer_score is not None]
    return Choice(spans[best].text, passage_langs[best], min(nulls) - spans[best].score if nulls else None)


class RetrieveRead(Model):
    """An :class:`~harness.definitions.protocols.OpenDomainQA` model: (translate,) retrieve, read, (translate back)."""

    provides = frozenset({OpenDomainQA})

    def __init__(
        self,
        *,
        runtime: Runtime,
        corpus: Path,
        reader: ModelOption | None = None,
        generator: ModelOption | None = None,
        retriever: ModelOption = "bm25",
        top_k: int = 10,
        titles: bool = True,
        translator: ModelOption | None = None,
        answer_translator: ModelOption | None = None,
        target_lang: str = "en",
        label: str | None = None,
    ) -> None:
        """``corpus``: the passage file or folder; ``reader``: the reader model (``hf-reader:path=...``),
        or ``generator``: a generator prompted with the passages (one of the two);
        ``retriever``: a retriever or encoder model; ``top_k``: passages read per question;
        ``titles``: retrieve over (title, text) pairs (the reader always reads the text);
        ``translator``: translates questions into ``target_lang`` first; ``answer_translator``:
        translates answers from their passage's language into the language the task scores."""
        if top_k < 1:
            raise HarnessError(f"model {OWNER}: top_k must be at least 1")
        if (reader is None) == (generator is None):
            raise HarnessError(
                f"model {OWNER}: give a reader (reader=hf-reader:path=...) or a generator "
                "(generator=hf-generator:path=...), one of the two"
            )
        self.files = corpus_files(corpus)  # a missing or empty location fails before any weights load
        self.corpus, self.top_k, self.titles, self.target_lang, self.label = corpus, top_k, titles, target_lang, label
        self.retriever_model, self.retriever = load_model(retriever, runtime, needs=Retriever, owner=OWNER)
        self.reader_model: Model | None
        self.reader: Reader | None
        self.reader_model, self.reader = (
            (None, None) if reader is None else load_model(reader, runtime, needs=Reader, owner=OWNER)
        )
        self.generator_model: Model | None
        generator_capability: Generator | None
        self.generator_model, generator_capability = (
            (None, None) if generator is None else load_model(generator, runtime, needs=Generator, owner=OWNER)
        )
        self.target = (
            None
            if generator_capability is None
            else PromptTarget(generation_service(generator_capability), retrieve=self.passages_for)
        )
        self.translator_model: Model | None
        self.translator: Translator | None
        self.translator_model, self.translator = (
            (None, None) if translator is None else load_model(translator, runtime, needs=Translator, owner=OWNER)
        )
        self.answer_translator_model: Model | None
        self.answer_translator: Translator | None
        self.answer_translator_model, self.answer_translator = (
            (None, None)
            if answer_translator is None
            else load_model(answer_translator, runtime, needs=Translator, owner=OWNER)
        )
        self._searchable: tuple[Passages, SearchIndex] | None = None

    @cached_property
    def corpus_hashes(self) -> dict[str, str]:
        """SHA-256 of each corpus file, by file name (the passages decide the answers)."""
        return {path.name: f"sha256:{sha256_file(path)}" for path, _ in self.files}

    def identity(self) -> ModelIdentity:
        answerer = "reader" if self.reader_model is not None else "generator"
        answerer_model = self.reader_model or self.generator_model
        assert answerer_model is not None  # __init__ refuses neither
        answerer_part = identity_part(answerer_model)
        parts = {
            "retriever": identity_part(self.retriever_model),
            answerer: answerer_part,
            "translator": None if self.translator_model is None else identity_part(self.translator_model),
            "answer_translator": None
            if self.answer_translator_model is None
            else identity_part(self.answer_translator_model),
        }
        chain = [
            part["label"]
            for name in ("translator", "retriever", answerer, "answer_translator")
            if (part := parts[name]) is not None
        ]
        return ModelIdentity(
            name=self.name or OWNER,
            label=self.label or f"{OWNER}({' -> '.join(chain)}, top {self.top_k})",
            weights=answerer_part["weights"],
            options={
                **parts,
                "top_k": self.top_k,
                "titles": self.titles,
                "target_lang": self.target_lang,
                "corpus": self.corpus_hashes,
            },
            details={"corpus": str(self.corpus), "corpus_languages": [lang for _, lang in self.files]},
        )

    def searchable(self) -> tuple[Passages, SearchIndex]:
        """The passages and their index, built on first use and kept."""
        if self._searchable is None:
            passages = read_passages(self.corpus)
            self._searchable = passages, self.retriever.index(passages.as_corpus(self.titles))
        return self._searchable

    @property
    def generation_stats(self) -> GenerationStats | None:
        """What the generator's service did, for the run's execution record (None with a reader)."""
        return None if self.target is None else self.target.generator.stats

    @property
    def encoding_stats(self) -> EncodingStats | None:
        """The retriever's corpus encoding, where it reports one (a ``dense`` retriever)."""
        return self.retriever_model.encoding_stats if isinstance(self.retriever_model, ReportsEncoding) else None

    def prompt_target(self) -> PromptTarget | None:
        """The generator and this pipeline's retrieval, which a task prompts (None with a reader)."""
        return self.target

    def retrieve(self, questions: Sequence[OpenQuestion]) -> tuple[Passages, list[str], list[str], Ranking]:
        """The top-k passages of each question (translated first, with a translator), with the
        texts and languages retrieved with."""
        passages, index = self.searchable()
        texts, langs = [q.text for q in questions], [q.lang for q in questions]
        if self.translator is not None:
            texts = translate_each(self.translator, texts, langs, [self.target_lang] * len(texts))
            langs = [self.target_lang] * len(texts)
        return passages, texts, langs, index.search(texts, langs=langs, k=self.top_k)

    def passages_for(self, questions: Sequence[OpenQuestion]) -> list[list[Passage]]:
        """Each question's top-k passages, best first, as a prompt shows them."""
        if not questions:
            return []
        passages, _, _, ranking = self.retrieve(questions)
        return [
            [Passage(passages.ids[p], passages.titles[p], passages.texts[p], passages.langs[p]) for p in row]
            for row in ranking.indices
        ]

    def answer(self, questions: Sequence[OpenQuestion]) -> list[OpenAnswer]:
        if not questions:
            return []
        if self.target is not None:
            with Progress(len(questions), OWNER, enabled=False) as bar:
                generated = ask_open(self.target, PromptChoice(load_template("rag")), questions, lambda _: (), bar)
            return [OpenAnswer(g.answer.answer) for g in generated]
        assert self.reader is not None
        passages, texts, langs, ranking = self.retrieve(questions)
        examples = [
            ReadingExample(f"{q.id}#{passages.ids[p]}", text, passages.texts[p], lang, passages.langs[p])
            for q, text, lang, row in zip(questions, texts, langs, ranking.indices)
            for p in row
        ]
        spans = self.reader.read(examples)
        if len(spans) != len(examples):
            raise HarnessError(f"model {OWNER}: the reader returned {len(spans)} answers for {len(examples)} passages")
        k = ranking.indices.shape[1]
        choices = [
            choose(spans[i * k : (i + 1) * k], [passages.langs[p] for p in row])
            for i, row in enumerate(ranking.indices)
        ]
        texts = self._in_answer_language(questions, choices)
        return [OpenAnswer(text, choice.no_answer_score) for choice, text in zip(choices, texts)]

    def _in_answer_language(self, questions: Sequence[OpenQuestion], choices: Sequence[Choice]) -> list[str]:
        """Each chosen text, translated where its passage's language is not the one the task
        scores and an answer translator is given."""
        texts = [c.text for c in choices]
        if self.answer_translator is None:
            return texts
        pending = [i for i, (q, c) in enumerate(zip(questions, choices)) if c.text and q.answer_lang is not None]
        translated = translate_each(
            self.answer_translator,
            [texts[i] for i in pending],
            [str(choices[i].passage_lang) for i in pending],
            [str(questions[i].answer_lang) for i in pending],
        )
        for i, text in zip(pending, translated):
            texts[i] = text
        return texts
