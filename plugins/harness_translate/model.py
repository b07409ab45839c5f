"""The ``translate-test`` model: a Translator in front of any English retriever or reader.

``translate-test:translator=translations:file=q.jsonl,model=bm25`` translates every question
that is not already in ``target_lang`` and hands the English text to the inner model, tagged as
English (so BM25 tokenises it as English). With ``candidates=true`` the retrieval candidates are
translated too, by id (LAReQA's Translate-Test baseline: everything into English); with
``contexts=true`` reading contexts too, the answer projected back (MLQA's translate-test). A model with options of its own inside needs ``--model-args``
JSON, e.g. ``{"translator": "hf-translator:path=/m/opus-mt-mul-en,num_beams=4", "model": "bm25:k1=0.9"}``.
The result's identity records both parts (name, weights and options of each).

A machine translator's translations are kept in the run's cache folder
(:class:`~harness_translate.cache.TranslationCache`), so later runs reuse them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.plugin import (
    Corpus,
    HarnessError,
    Model,
    ModelIdentity,
    ModelOption,
    Ranking,
    Reader,
    ReadingExample,
    Retriever,
    Runtime,
    SearchIndex,
    SpanAnswer,
    Translator,
)
from harness.plugin.services import identity_part, load_model, provide
from harness.plugin.tasks import KeyedTranslator, translate_each
from harness_translate.cache import TranslationCache
from harness_translate.contexts import TranslatedContext, join_translation, project, sentence_texts


class TranslateTest(Model):
    """Translate the question, then retrieve or read in ``target_lang``."""

    provides = frozenset({Retriever, Reader})

    def __init__(
        self,
        *,
        runtime: Runtime,
        translator: ModelOption,
        model: ModelOption,
        target_lang: str = "en",
        candidates: bool = False,
        contexts: bool = False,
    ) -> None:
        """``translator``: a translator model (``translations:file=...`` or ``hf-translator:path=...``);
        ``model``: the retriever, encoder or reader that works in ``target_lang``; ``candidates``:
        translate the retrieval candidates too; ``contexts``: translate reading contexts too, the
        answer projected back onto the original context (:mod:`harness_translate.contexts`)."""
        self.translator_model, self.translator = load_model(
            translator, runtime, needs=Translator, owner="translate-test"
        )
        self.inner, _ = load_model(model, runtime, needs=None, owner="translate-test")
        self.target_lang = target_lang
        self.candidates = candidates
        self.contexts = contexts
        if (
            runtime.cache_dir is not None
            and self.translator_model.reproducible
            and not isinstance(self.translator, KeyedTranslator)
        ):
            self.translator = CachedTranslator(
                self.translator, TranslationCache(runtime.cache_dir, identity_part(self.translator_model))
            )

    def identity(self) -> ModelIdentity:
        translator, inner = identity_part(self.translator_model), identity_part(self.inner)
        return ModelIdentity(
            name=self.name or "translate-test",
            label=f"translate-test({translator['label']} -> {inner['label']})",
            weights=inner["weights"],
            options={
                "translator": translator,
                "model": inner,
                "target_lang": self.target_lang,
                **({"candidates": True} if self.candidates else {}),
                **({"contexts": True} if self.contexts else {}),
            },
        )

    def to_target(
        self, texts: Sequence[str], langs: Sequence[str] | None, ids: Sequence[str] | None = None
    ) -> list[str]:
        """``texts`` in ``target_lang``: each language's texts translated in one call (looked up by
        ``ids`` where the translator is keyed by id)."""
        if langs is None:
            raise HarnessError("translate-test needs the language of every text it translates")
        return translate_each(self.translator, texts, langs, [self.target_lang] * len(texts), ids)

    def translate_corpus(self, corpus: Corpus) -> Corpus:
        """The candidates in ``target_lang``, tagged as such; a (sentence, paragraph) pair is
        translated part by part (ids ``{id}/0``, ``{id}/1``)."""
        texts: list[Any] = list(corpus.texts)
        if not any(isinstance(t, tuple) for t in texts):
            return Corpus(corpus.ids, self.to_target(texts, corpus.langs, corpus.ids), [self.target_lang] * len(corpus))
        parts = [
            (f"{cid}/{k}", part, lang)
            for cid, text, lang in zip(corpus.ids, texts, corpus.langs)
            for k, part in enumerate(text)
        ]
        translated = iter(self.to_target([p[1] for p in parts], [p[2] for p in parts], [p[0] for p in parts]))
        # pairs stay pairs: Corpus.texts is typed as strings, its texts are an encoder's (a string or a pair)
        pairs: list[Any] = [tuple(next(translated) for _ in text) for text in texts]
        return Corpus(corpus.ids, pairs, [self.target_lang] * len(corpus))

    def index(self, corpus: Corpus) -> SearchIndex:
        retriever = provide(self.inner, Retriever, model_name=self.inner.name, task_name="translate-test")
        return TranslatedQueries(self, retriever.index(self.translate_corpus(corpus) if self.candidates else corpus))

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        reader: Reader = provide(self.inner, Reader, model_name=self.inner.name, task_name="translate-test")
        questions = self.to_target(
            [e.question for e in examples], [e.question_lang for e in examples], [e.id for e in examples]
        )
        if not self.contexts:
            return reader.read(
                [
                    ReadingExample(e.id, q, e.context, self.target_lang, e.context_lang)
                    for e, q in zip(examples, questions)
                ]
            )
        contexts = self.translate_contexts(examples)
        answers = reader.read(
            [
                ReadingExample(e.id, q, c.english, self.target_lang, self.target_lang)
                for e, q, c in zip(examples, questions, contexts)
            ]
        )
        return [
            project(a, c) if e.context_lang != self.target_lang else a for e, a, c in zip(examples, answers, contexts)
        ]

    def translate_contexts(self, examples: Sequence[ReadingExample]) -> list[TranslatedContext]:
        """Each context translated sentence by sentence (sentence ``k`` of example ``id`` keyed
        ``{id}/{k}``), all in one call per language."""
        foreign = [e.context_lang != self.target_lang for e in examples]
        split = [sentence_texts(e.context, e.context_lang) if f else ([], []) for e, f in zip(examples, foreign)]
        parts = [
            (f"{e.id}/{k}", text, e.context_lang)
            for e, (_, texts) in zip(examples, split)
            for k, text in enumerate(texts)
        ]
        translated = iter(self.to_target([p[1] for p in parts], [p[2] for p in parts], [p[0] for p in parts]))
        return [
            join_translation(e.context, spans, [next(translated) for _ in texts])
            if f
            else TranslatedContext(e.context, [], e.context, [])  # read as it is
            for e, f, (spans, texts) in zip(examples, foreign, split)
        ]


class TranslatedQueries:
    """A search index whose queries are translated first (a :class:`KeyedSearchIndex`)."""

    def __init__(self, owner: TranslateTest, index: SearchIndex) -> None:
        self.owner = owner
        self.index = index

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        return self.search_ids(queries, None, langs=langs, k=k)

    def search_ids(
        self,
        queries: Sequence[str],
        ids: Sequence[str] | None,
        *,
        langs: Sequence[str] | None = None,
        k: int | None = None,
    ) -> Ranking:
        """Queries translated (by id where given and the translator is keyed by id), then searched."""
        translated = self.owner.to_target(queries, langs, ids)
        return self.index.search(translated, langs=[self.owner.target_lang] * len(queries), k=k)


class CachedTranslator:
    """A machine translator behind the on-disk :class:`TranslationCache`."""

    def __init__(self, translator: Translator, cache: TranslationCache) -> None:
        self.translator = translator
        self.cache = cache

    def translate(self, texts: Sequence[str], *, source_lang: str, target_lang: str) -> list[str]:
        return self.cache.translate(
            texts,
            source_lang,
            target_lang,
            lambda missing: self.translator.translate(missing, source_lang=source_lang, target_lang=target_lang),
        )
