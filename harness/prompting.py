"""Prompt templates (data, versioned) and the prompts the QA tasks build with them.

A template is a JSON file (the built-in ones are in ``harness/prompts/``; a task option
``prompt=NAME`` picks one, ``prompt=FILE.json`` reads the user's):

* ``name``, ``version``: how results name it (``qa@1``); the task records them and a digest of the
  whole file in its options and its scorer signature, so results of two prompts (or of an edited
  file) are never ranked together;
* ``instruction``: the instruction by language (the question's; ``en`` is required and the
  fallback), ``{language}`` standing for the English name of the language the answer is scored in;
* ``example``: one question, with ``{context}`` and ``{question}`` (reading comprehension),
  ``{question}`` (closed-book) or ``{passages}`` and ``{question}`` (retrieval-augmented);
* ``answer``: appended to an example to make a shot (``{answer}``); ``separator`` between parts;
* ``passage``: how one passage shows in ``{passages}`` (``{id}``, ``{title}``, ``{text}``);
* ``stop``, ``max_new_tokens``: the decoding options; ``no_answer``: the reply that abstains.

A k-shot prompt is the instruction, k solved examples and the question. The k examples are drawn
for each question from the task's pool (its dev split where it has one), seeded by the task's
``shot_seed`` and the question's id, never the question itself.
"""

from __future__ import annotations

import json
import math
import random
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, InputError
from harness.generation import GeneratedAnswer, PromptTarget, generation_service
from harness.qa.passages import Passage
from harness.io import read_json, sha256_text
from harness.progress import Progress
from harness.protocols import (
    Generation, GenerationOptions, GenerationRequest, Generator, OpenAnswer, OpenQuestion, ReadingExample, SpanAnswer,
)

TEMPLATES = Path(__file__).resolve().parent / "prompts"
#: The fields a template's ``example`` may use, and where their values come from.
FIELDS = frozenset({"context", "question", "passages", "language"})
PASSAGE_FIELDS = frozenset({"id", "title", "text"})
#: The fields an open-domain task fills in (``passages`` for a retrieval-augmented model).
OPEN_FIELDS = frozenset({"question", "passages", "language"})
#: The template keys every file must have, and their JSON types.
REQUIRED_KEYS: dict[str, type] = {"name": str, "version": int, "instruction": dict, "example": str, "answer": str,
                                  "separator": str, "stop": list, "max_new_tokens": int}
OPTIONAL_KEYS: dict[str, type] = {"description": str, "passage": str, "no_answer": str}


def _fields(text: str, path: Path, key: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as error:
        raise InputError(f"not a valid template text ({error}); write a literal brace as {{{{ or }}}}",
                         file=path, field=key) from None


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt template (see the module docstring), checked when read."""

    name: str
    version: int
    path: Path
    digest: str
    instruction: Mapping[str, str]
    example: str
    answer: str
    separator: str
    stop: tuple[str, ...]
    max_new_tokens: int
    passage: str | None = None
    no_answer: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(_fields(self.example, self.path, "example"))

    @property
    def options(self) -> GenerationOptions:
        return GenerationOptions(max_new_tokens=self.max_new_tokens, stop=self.stop)

    def check(self, required: frozenset[str], allowed: frozenset[str], owner: str) -> None:
        """Refuse a template that lacks a field the task fills in, or uses one it cannot."""
        missing = sorted(required - self.fields)
        if missing:
            raise InputError(f"{owner} fills in {{{missing[0]}}}, which the example does not show",
                             file=self.path, field="example")
        extra = sorted(self.fields - allowed)
        if extra:
            raise InputError(f"{{{extra[0]}}} is not a field {owner} fills in (it fills in "
                             f"{', '.join('{' + f + '}' for f in sorted(allowed))})", file=self.path, field="example")

    def render(self, values: Mapping[str, str], lang: str, shots: Sequence[Shot] = ()) -> str:
        """The prompt for one question: instruction, solved shots, then the question."""
        instruction = self.instruction.get(lang, self.instruction["en"])
        parts = [instruction.format(**values)] if instruction else []
        parts += [self.example.format(**{**values, **shot.values}) + self.answer.format(answer=shot.answer)
                  for shot in shots]
        parts.append(self.example.format(**values))
        return self.separator.join(parts)

    def show_passages(self, passages: Sequence[Passage]) -> str:
        """``{passages}``: one line per passage, as ``passage`` shows it."""
        layout = self.passage or "[{id}] {text}"
        return "\n".join(layout.format(id=p.id, title=p.title, text=p.text) for p in passages)

    def abstains(self, text: str) -> bool:
        """Whether an answer is the template's abstention reply (case, quotes and end punctuation aside)."""
        return self.no_answer is not None and text.strip().strip("\"'.!。").lower() == self.no_answer.lower()


def load_template(spec: str) -> PromptTemplate:
    """A built-in template by name, or a template file; bad files are one line naming the field."""
    path = Path(spec).expanduser()
    if not spec.endswith(".json"):
        path = TEMPLATES / f"{spec}.json"
        if not path.is_file():
            raise HarnessError(f"unknown prompt template '{spec}' (built-in: {', '.join(builtin_templates())}; "
                               "or give a .json file)")
    elif not path.is_file():
        raise HarnessError(f"prompt template file {path} does not exist")
    return _read_template(path.resolve())


def builtin_templates() -> list[str]:
    return sorted(p.stem for p in TEMPLATES.glob("*.json") if p.stem != "languages")


def _read_template(path: Path) -> PromptTemplate:
    raw = read_json(path)
    if not isinstance(raw, dict):
        raise InputError("a prompt template is a JSON object", file=path)
    for key, kind in {**REQUIRED_KEYS, **OPTIONAL_KEYS}.items():
        if key not in raw:
            if key in REQUIRED_KEYS:
                raise InputError("missing", file=path, field=key)
            continue
        if not isinstance(raw[key], kind) or (kind is int and isinstance(raw[key], bool)):
            raise InputError(f"expected {'an integer' if kind is int else 'a ' + kind.__name__}", file=path, field=key)
    unknown = sorted(set(raw) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise InputError("not a template key", file=path, field=unknown[0])
    instruction = raw["instruction"]
    if "en" not in instruction or not all(isinstance(v, str) for v in instruction.values()):
        raise InputError("an object of texts by language, with 'en'", file=path, field="instruction")
    if not all(isinstance(s, str) and s for s in raw["stop"]):
        raise InputError("a list of non-empty strings", file=path, field="stop")
    if raw["max_new_tokens"] < 1:
        raise InputError("must be at least 1", file=path, field="max_new_tokens")
    for lang, text in instruction.items():
        if _fields(text, path, f"instruction.{lang}") - {"language"}:
            raise InputError("an instruction may use {language} only", file=path, field=f"instruction.{lang}")
    if _fields(raw["answer"], path, "answer") != {"answer"}:
        raise InputError("must show {answer} and nothing else", file=path, field="answer")
    if "passage" in raw and not _fields(raw["passage"], path, "passage") <= PASSAGE_FIELDS:
        raise InputError("may use {id}, {title} and {text}", file=path, field="passage")
    template = PromptTemplate(
        name=raw["name"], version=raw["version"], path=path,
        digest=sha256_text(json.dumps(raw, sort_keys=True, ensure_ascii=False))[:12],
        instruction=dict(instruction), example=raw["example"], answer=raw["answer"], separator=raw["separator"],
        stop=tuple(raw["stop"]), max_new_tokens=raw["max_new_tokens"], passage=raw.get("passage"),
        no_answer=raw.get("no_answer"))
    template.check(frozenset(), FIELDS, "a task")
    return template


@cache
def language_name(code: str) -> str:
    """The English name of a language code (``{language}`` in templates); the code if unknown."""
    return read_json(TEMPLATES / "languages.json")["names"].get(code, code)


# -- shots --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shot:
    """A solved example: its id, the template fields it fills in, and its answer."""

    id: str
    values: Mapping[str, str]
    answer: str
    #: For a retrieval-augmented prompt, the question to retrieve the shot's passages for.
    question: OpenQuestion | None = None


def draw_shots(pool: Sequence[Shot], k: int, seed: int, question_id: str) -> list[Shot]:
    """``k`` shots for one question, drawn from ``pool`` by a generator seeded with ``seed`` and the
    question's id (so a question gets the same shots in every run), never the question itself."""
    if k == 0:
        return []
    rng = random.Random(sha256_text(str(seed), question_id))
    if len(pool) - any(shot.id == question_id for shot in pool) < k:
        others = len(pool) - any(shot.id == question_id for shot in pool)
        raise HarnessError(f"{k} shot(s) asked for, but only {others} example(s) other than question {question_id} "
                           "are there to draw them from: ask for fewer shots")
    picked = [pool[i] for i in rng.sample(range(len(pool)), min(k + 1, len(pool)))]
    return [shot for shot in picked if shot.id != question_id][:k]


# -- the choice a task makes --------------------------------------------------------------------


@dataclass(frozen=True)
class PromptChoice:
    """A task's prompt options: the template (None: the task runs non-generative models only), the
    number of shots and their seed. Built from the task's ``prompt``, ``shots`` and ``shot_seed``."""

    template: PromptTemplate | None
    shots: int = 0
    seed: int = 0

    @classmethod
    def of(cls, prompt: str | None, shots: int, seed: int, *, task: str, required: frozenset[str],
           allowed: frozenset[str]) -> PromptChoice:
        if shots < 0:
            raise HarnessError(f"task {task}: shots must be 0 or more, not {shots}")
        if prompt is None:
            if shots:
                raise HarnessError(f"task {task}: shots are examples in a prompt: choose a template too "
                                   f"({task}:prompt=NAME,shots={shots})")
            return cls(None)
        template = load_template(prompt)
        template.check(required, allowed, f"task {task}")
        return cls(template, shots, seed)

    def options(self) -> dict[str, Any]:
        """What the task records: nothing without a template (runs of extractive models keep their
        options), else the template's label and digest, the shots and their seed."""
        if self.template is None:
            return {}
        return {"prompt": self.template.label, "prompt_digest": self.template.digest, "shots": self.shots,
                "shot_seed": self.seed}

    def signature(self) -> str:
        """The part of the scorer signature that tells prompts apart ("" without a template)."""
        if self.template is None:
            return ""
        return f"|prompt:{self.template.label}#{self.template.digest}|shots:{self.shots}@{self.seed}"

    def for_model(self, capability: object, target: PromptTarget | None, task: str) -> PromptTemplate | None:
        """The template to prompt ``capability`` with (None: it is not a generator and answers as
        usual), or a one-line error when model and options do not go together."""
        if target is None:
            if self.template is not None:
                raise HarnessError(f"task {task}: prompt={self.template.name} is for generative models; "
                                   f"{type(capability).__name__} does not generate")
            return None
        if self.template is None:
            raise HarnessError(f"task {task}: a generative model needs a prompt template: {task}:prompt=NAME "
                               f"(built-in: {', '.join(builtin_templates())}), or prompt=FILE.json")
        with_passages = "passages" in self.template.fields
        if target.retrieve is None and with_passages:
            raise HarnessError(f"task {task}: template {self.template.label} shows {{passages}}, but the model "
                               "retrieves none (use retrieve-read:generator=...)")
        if target.retrieve is not None and not with_passages:
            raise HarnessError(f"task {task}: the model retrieves passages, but template {self.template.label} "
                               "does not show them (prompt=rag)")
        return self.template


class PromptedTask:
    """A task's ``prompt``, ``shots`` and ``shot_seed`` options (list it before the task base):
    the :class:`PromptChoice` they make, in the task's options and its scorer signature.
    ``prompt_fields`` are the template fields the task always fills in, ``prompt_allowed`` all it can."""

    metadata: Any
    prompt_fields: frozenset[str] = frozenset({"question"})
    prompt_allowed: frozenset[str] = OPEN_FIELDS

    def __init__(self, prompt: str | None = None, shots: int = 0, shot_seed: int = 0) -> None:
        """``prompt``: the template a generative model is prompted with (a built-in name or a .json
        file); ``shots``: solved examples in each prompt; ``shot_seed``: their draw."""
        self.prompting = PromptChoice.of(prompt, shots, shot_seed, task=self.metadata.name,
                                         required=self.prompt_fields, allowed=self.prompt_allowed)

    def options(self) -> dict[str, Any]:
        return self.prompting.options()

    def scorer_signature(self) -> str:
        return super().scorer_signature() + self.prompting.signature()  # type: ignore[misc]


# -- asking ---------------------------------------------------------------------------------------


def ask_reading(target: PromptTarget, template: PromptTemplate, examples: Sequence[ReadingExample],
                shots: Callable[[ReadingExample], Sequence[Shot]], progress: Progress) -> list[Generation]:
    """Generations for reading-comprehension examples (context and question in the prompt)."""
    requests = [GenerationRequest(template.render(
        {"context": e.context, "question": e.question, "language": language_name(e.context_lang)},
        e.question_lang, shots(e)), template.options) for e in examples]
    return target.generator.generate(requests, progress=progress)


@dataclass(frozen=True)
class OpenGeneration:
    """A generated open-domain answer: the answer (``""`` when the model abstained), what the
    records keep, and the No-Answer probability (see :func:`no_answer_probability`)."""

    answer: GeneratedAnswer
    no_answer_prob: float | None


def no_answer_probability(generation: Generation, template: PromptTemplate) -> float | None:
    """The model's own probability that the question has no answer, along its greedy answer:
    P(the abstention reply) when it gave that reply, 1 - P(its answer) otherwise (1 for an empty
    answer); P is the product of the probabilities of the answer's tokens and its end (see
    :func:`harness.generation.finish`). A confident answer scores near 0, a hesitant one nearer
    1, and abstaining confidently near 1, so the best-threshold sweep over it is the model's
    own abstention rule, tuned. None when the generation carries no log-probability."""
    if generation.logprob is None:
        return None
    probability = math.exp(generation.logprob)
    if template.abstains(generation.text):
        return probability
    return 1.0 if not generation.text else 1.0 - probability


def ask_open(target: PromptTarget, template: PromptTemplate, questions: Sequence[OpenQuestion],
             shots: Callable[[OpenQuestion], Sequence[Shot]], progress: Progress, *,
             logprobs: bool = False) -> list[OpenGeneration]:
    """Generated answers to open-domain questions, closed-book or with the passages ``target``
    retrieves (for the shots too); ``logprobs``: also the No-Answer probability."""
    chosen = [list(shots(q)) for q in questions]
    passages: dict[str, list[Passage]] = {}
    if target.retrieve is not None:
        asked = {q.id: q for q in questions}
        asked.update((s.id, s.question) for picked in chosen for s in picked if s.question is not None)
        passages = dict(zip(asked, target.retrieve(list(asked.values()))))
    options = GenerationOptions(template.max_new_tokens, template.stop, logprobs)

    def values(question: OpenQuestion) -> dict[str, str]:
        out = {"question": question.text, "language": language_name(question.answer_lang or question.lang)}
        if target.retrieve is not None:
            out["passages"] = template.show_passages(passages[question.id])
        return out

    requests = []
    for question, picked in zip(questions, chosen):
        if target.retrieve is not None:  # a shot's prompt shows its own passages
            picked = [Shot(s.id, {**s.values, **values(s.question)}, s.answer) if s.question else s for s in picked]
        requests.append(GenerationRequest(template.render(values(question), question.lang, picked), options))
    generations = target.generator.generate(requests, progress=progress)
    return [OpenGeneration(
        GeneratedAnswer("" if template.abstains(g.text) else g.text, g.reasoning,
                        tuple(p.id for p in passages.get(q.id, ()))),
        no_answer_probability(g, template) if logprobs else None) for q, g in zip(questions, generations)]


class GenerativeQA:
    """A :class:`~harness.protocols.Reader` and :class:`~harness.protocols.OpenDomainQA` model made
    from a Generator, zero-shot with the built-in ``qa`` and ``closed-book`` templates. Tasks with
    a ``prompt`` option prompt the generator behind it themselves (:meth:`prompt_target`); this
    serves compositions that read or answer without one (``retrieve-read:reader=hf-generator:...``)."""

    def __init__(self, generator: Generator) -> None:
        self.target = PromptTarget(generation_service(generator))

    def prompt_target(self) -> PromptTarget:
        return self.target

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        """Each answer with its offset in the context (-1 when the model did not copy a span)."""
        with Progress(len(examples), "generating", enabled=False) as bar:
            generations = ask_reading(self.target, load_template("qa"), examples, lambda _: (), bar)
        return [SpanAnswer(g.text, e.context.find(g.text) if g.text else -1, 0.0)
                for e, g in zip(examples, generations)]

    def answer(self, questions: Sequence[OpenQuestion]) -> list[OpenAnswer]:
        template = load_template("closed-book")
        with Progress(len(questions), "generating", enabled=False) as bar:
            answers = ask_open(self.target, template, questions, lambda _: (), bar, logprobs=False)
        return [OpenAnswer(a.answer.answer) for a in answers]
