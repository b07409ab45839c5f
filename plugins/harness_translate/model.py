"""The ``translate-test`` model: a Translator in front of any English retriever or reader.

``translate-test:translator=translations:file=q.jsonl,model=bm25`` translates every question
that is not already in ``target_lang`` and hands the English text to the inner model, tagged as
English (so BM25 tokenises it as English). Passages and contexts are left as they are. A model
with options of its own inside needs ``--model-args`` JSON, e.g.
``{"translator": "hf-translator:path=/m/opus-mt-mul-en,num_beams=4", "model": "bm25:k1=0.9"}``.
The result's identity records both parts (name, weights and options of each).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.capabilities import provide
from harness.compose import identity_part, load_model
from harness.errors import HarnessError
from harness.model import Model, ModelIdentity, Runtime
from harness.protocols import Corpus, Ranking, Reader, ReadingExample, Retriever, SearchIndex, SpanAnswer, Translator
from harness.qa.translate import translate_each


class TranslateTest(Model):
    """Translate the question, then retrieve or read in ``target_lang``."""
    provides = frozenset({Retriever, Reader})

    def __init__(self, *, runtime: Runtime, translator: str, model: str, target_lang: str = "en") -> None:
        """``translator``: a translator model (``translations:file=...`` or ``hf-translator:path=...``);
        ``model``: the retriever, encoder or reader that works in ``target_lang``."""
        self.translator_model, self.translator = load_model(translator, runtime, needs=Translator, owner="translate-test")
        self.inner, _ = load_model(model, runtime, needs=None, owner="translate-test")
        self.target_lang = target_lang

    def identity(self) -> ModelIdentity:
        translator, inner = identity_part(self.translator_model), identity_part(self.inner)
        return ModelIdentity(
            name=self.name or "translate-test",
            label=f"translate-test({translator['label']} -> {inner['label']})",
            weights=inner["weights"],
            options={"translator": translator, "model": inner, "target_lang": self.target_lang},
        )

    def to_target(self, texts: Sequence[str], langs: Sequence[str] | None) -> list[str]:
        """``texts`` in ``target_lang``: each language's texts translated in one call."""
        if langs is None:
            raise HarnessError("translate-test needs the language of every question")
        return translate_each(self.translator, texts, langs, [self.target_lang] * len(texts))

    def index(self, corpus: Corpus) -> SearchIndex:
        retriever = provide(self.inner, Retriever, model_name=self.inner.name, task_name="translate-test")
        return TranslatedQueries(self, retriever.index(corpus))

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        reader = provide(self.inner, Reader, model_name=self.inner.name, task_name="translate-test")
        questions = self.to_target([e.question for e in examples], [e.question_lang for e in examples])
        return reader.read([ReadingExample(e.id, q, e.context, self.target_lang, e.context_lang)
                            for e, q in zip(examples, questions)])


class TranslatedQueries:
    """A search index whose queries are translated first."""

    def __init__(self, owner: TranslateTest, index: SearchIndex) -> None:
        self.owner = owner
        self.index = index

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        translated = self.owner.to_target(queries, langs)
        return self.index.search(translated, langs=[self.owner.target_lang] * len(queries), k=k)
