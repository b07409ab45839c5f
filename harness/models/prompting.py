"""Prompt templates (data, versioned) and the prompts the QA tasks build with them.

A template is a JSON file (the built-in ones are in ``harness/models/prompts/``; a task option
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
for each question from the task's pool (its dev split where it has one, else the scored file
itself: the result says which), seeded by the task's ``shot_seed`` and the question's id, never
the question itself nor another question of its article (a shot's context would give the answer
away).

Every task that prompts has a default template (its canonical one: ``qa`` for reading
comprehension, ``closed-book`` for open-domain questions, ``rag`` for a retrieval-augmented
model), so a generator runs without ``prompt=``; the result and the scorer signature name it.
The run's generation options (:class:`~harness.models.generation.GenerationSettings`: ``--gen-kwargs``,
``--system-prompt``) are laid over the template's and recorded beside it.
"""

from __future__ import annotations

import json
import math
import random
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from harness.data.passages import Passage
from harness.definitions.protocols import (
    Generation,
    GenerationOptions,
    GenerationRequest,
    Generator,
    OpenAnswer,
    OpenQuestion,
    ReadingExample,
    SpanAnswer,
)
from harness.display.progress import Progress
from harness.errors import HarnessError, InputError
from harness.files.io import read_json, sha256_text
from harness.models.generation import (
    GeneratedAnswer,
    GenerationService,
    GenerationSettings,
    PromptTarget,
    generation_service,
    prompt_target,
)

TEMPLATES = Path(__file__).resolve().parent / "prompts"
#: The fields a template's ``example`` may use, and where their values come from.
FIELDS = frozenset({"context", "question", "passages", "language"})
PASSAGE_FIELDS = frozenset({"id", "title", "text"})
#: The fields an open-domain task fills in (``passages`` for a retrieval-augmented model).
OPEN_FIELDS = frozenset({"question", "passages", "language"})
#: The template keys every file must have, and their JSON types.
REQUIRED_KEYS: dict[str, type] = {
    "name": str,
    "version": int,
    "instruction": dict,
    "example": str,
    "answer": str,
    "separator": str,
    "stop": list,
    "max_new_tokens": int,
}
OPTIONAL_KEYS: dict[str, type] = {"description": str, "passage": str, "no_answer": str}


def _fields(text: str, path: Path, key: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as error:
        raise InputError(
            f"not a valid template text ({error}); write a literal brace as {{{{ or }}}}", file=path, field=key
        ) from None


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
            raise InputError(
                f"{owner} fills in {{{missing[0]}}}, which the example does not show", file=self.path, field="example"
            )
        extra = sorted(self.fields - allowed)
        if extra:
            raise InputError(
                f"{{{extra[0]}}} is not a field {owner} fills in (it fills in "
                f"{', '.join('{' + f + '}' for f in sorted(allowed))})",
                file=self.path,
                field="example",
            )

    def render(self, values: Mapping[str, str], lang: str, shots: Sequence[Shot] = ()) -> str:
        """The prompt for one question: instruction, solved shots, then the question."""
        instruction = self.instruction.get(lang, self.instruction["en"])
        parts = [instruction.format(**values)] if instruction else []
        parts += [
            self.example.format(**{**values, **shot.values}) + self.answer.format(answer=shot.answer) for shot in shots
        ]
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
    """A built-in template by name (or by its label, ``qa@1``, as results record it: the version
    must be the one installed), or a template file; bad files are one line naming the field."""
    path = Path(spec).expanduser()
    if not spec.endswith(".json"):
        name, _, version = spec.partition("@")
        path = TEMPLATES / f"{name}.json"
        if not path.is_file():
            raise HarnessError(
                f"unknown prompt template '{spec}' (built-in: {', '.join(builtin_templates())}; or give a .json file)"
            )
        template = _read_template(path.resolve())
        if version and version != str(template.version):
            raise HarnessError(f"prompt template {spec}: the installed {name} is version {template.version}")
        return template
    if not path.is_file():
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
        name=raw["name"],
        version=raw["version"],
        path=path,
        digest=sha256_text(json.dumps(raw, sort_keys=True, ensure_ascii=False))[:12],
        instruction=dict(instruction),
        example=raw["example"],
        answer=raw["answer"],
        separator=raw["separator"],
        stop=tuple(raw["stop"]),
        max_new_tokens=raw["max_new_tokens"],
        passage=raw.get("passage"),
        no_answer=raw.get("no_answer"),
    )
    template.check(frozenset(), FIELDS, "a task")
    return template


@cache
def language_name(code: str) -> str:
    """The English name of a language code (``{language}`` in templates); the code if unknown."""
    name: str = read_json(TEMPLATES / "languages.json")["names"].get(code, code)
    return name


# -- shots --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shot:
    """A solved example: its id, the template fields it fills in, and its answer; ``group`` the
    article (or paragraph) it comes from, where questions share one."""

    id: str
    values: Mapping[str, str]
    answer: str
    #: For a retrieval-augmented prompt, the question to retrieve the shot's passages for.
    question: OpenQuestion | None = None
    group: str | None = None


#: The way shots are drawn (:func:`draw_shots`), named in the scorer signature of few-shot runs.
SHOT_DRAW = "draw2"


def draw_shots(pool: Sequence[Shot], k: int, seed: int, question_id: str, group: str | None = None) -> list[Shot]:
    """``k`` shots for one question, drawn from ``pool`` by a generator seeded with ``seed`` and the
    question's id (so a question gets the same shots in every run), never the question itself nor
    a question of its ``group`` (its article)."""
    if k == 0:
        return []
    rng = random.Random(sha256_text(str(seed), question_id))
    eligible = [shot for shot in pool if shot.id != question_id and (group is None or shot.group != group)]
    if len(eligible) < k:
        raise HarnessError(
            f"{k} shot(s) asked for, but only {len(eligible)} example(s) outside question "
            f"{question_id}{' and its article' if group is not None else ''} are there to draw them "
            "from: ask for fewer shots"
        )
    return rng.sample(eligible, k)


# -- the choice a task makes --------------------------------------------------------------------


@dataclass(frozen=True)
class PromptChoice:
    """A task's prompt options: the template (None: not chosen, or the task runs non-generative
    models only), the number of shots and their seed, from the task's ``prompt``, ``shots`` and
    ``shot_seed``; ``default`` the task's canonical template, used for a generator when no
    ``prompt`` is given; the run's generation options (``settings``) and whether the rendered
    prompts are kept whole (``log_samples``)."""

    template: PromptTemplate | None
    shots: int = 0
    seed: int = 0
    default: str | None = None
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    log_samples: bool = False
    #: The template is the task's default (said in the output).
    defaulted: bool = False

    @classmethod
    def of(
        cls,
        prompt: str | None,
        shots: int,
        seed: int,
        *,
        task: str,
        required: frozenset[str],
        allowed: frozenset[str],
        default: str | None = None,
    ) -> PromptChoice:
        if shots < 0:
            raise HarnessError(f"task {task}: shots must be 0 or more, not {shots}")
        if prompt is None:
            if shots and default is None:
                raise HarnessError(
                    f"task {task}: shots are examples in a prompt: choose a template too "
                    f"({task}:prompt=NAME,shots={shots})"
                )
            return cls(None, shots, seed, default)
        template = load_template(prompt)
        template.check(required, allowed, f"task {task}")
        return cls(template, shots, seed, default)

    def options(self) -> dict[str, Any]:
        """What the task records: nothing without a template (runs of extractive models keep their
        options), else the template's label and digest, the shots and their seed, and the run's
        generation options where they are not the defaults."""
        if self.template is None:
            return {}
        recorded = self.settings.recorded()
        return {
            "prompt": self.template.label,
            "prompt_digest": self.template.digest,
            "shots": self.shots,
            "shot_seed": self.seed,
            **({"generation": recorded} if recorded else {}),
        }

    def signature(self) -> str:
        """The part of the scorer signature that tells prompts apart ("" without a template)."""
        if self.template is None:
            return ""
        # shots drawn outside the question's article (since issue 33) are other shots than before: marked
        draw = f"@{self.seed}/{SHOT_DRAW}" if self.shots else f"@{self.seed}"
        return (
            f"|prompt:{self.template.label}#{self.template.digest}|shots:{self.shots}{draw}{self.settings.signature()}"
        )

    def for_model(self, capability: object, target: PromptTarget | None, task: str) -> PromptChoice:
        """This choice for ``capability``: as it is for a model that does not generate (which must
        not be given prompt options), with the template resolved for a generator (the task's
        default when none was chosen); a one-line error when model and options do not go together."""
        if target is None:
            asked = (
                "prompt=" + self.template.name
                if self.template is not None
                else f"shots={self.shots}"
                if self.shots
                else "generation options (gen_kwargs, system_prompt)"
                if self.settings != GenerationSettings()
                else None
            )
            if asked is not None:
                raise HarnessError(
                    f"task {task}: {asked} {'are' if asked.startswith('generation') else 'is'} for "
                    "generative models; "
                    f"{type(capability).__name__} does not generate"
                )
            return self
        template, defaulted = self.template, False
        if template is None:
            default = "rag" if target.retrieve is not None else self.default
            if default is None:
                raise HarnessError(
                    f"task {task}: a generative model needs a prompt template: {task}:prompt=NAME "
                    f"(built-in: {', '.join(builtin_templates())}), or prompt=FILE.json"
                )
            template, defaulted = load_template(default), True
        with_passages = "passages" in template.fields
        if target.retrieve is None and with_passages:
            raise HarnessError(
                f"task {task}: template {template.label} shows {{passages}}, but the model "
                "retrieves none (use retrieve-read:generator=...)"
            )
        if target.retrieve is not None and not with_passages:
            raise HarnessError(
                f"task {task}: the model retrieves passages, but template {template.label} "
                "does not show them (prompt=rag)"
            )
        return replace(self, template=template, defaulted=defaulted or self.defaulted)

    def draw(self, pool: Sequence[Shot], question_id: str, group: str | None = None) -> list[Shot]:
        """The shots of one question (see :func:`draw_shots`)."""
        return draw_shots(pool, self.shots, self.seed, question_id, group)

    def request_options(self, *, logprobs: bool = False, sample: int = 0) -> GenerationOptions:
        """The decoding options of a request: the template's, with the run's laid over them."""
        assert self.template is not None
        return self.settings.options(self.template.options, logprobs=logprobs, sample=sample)

    def describe(self, task: str) -> str:
        """One line for the output: the template (and whether it is the task's default), the shots."""
        assert self.template is not None
        default = f" ({task}'s default; prompt=NAME chooses another)" if self.defaulted else ""
        return f"prompt {self.template.label}{default}, {self.shots} shot(s)"


class PromptedTask:
    """A task's ``prompt``, ``shots`` and ``shot_seed`` options (list it before the task base):
    the :class:`PromptChoice` they make, in the task's options and its scorer signature.
    ``prompt_fields`` are the template fields the task always fills in, ``prompt_allowed`` all it
    can, ``default_prompt`` its canonical template (a generator's when ``prompt`` is not given)."""

    metadata: ClassVar[Any]
    prompt_fields: frozenset[str] = frozenset({"question"})
    prompt_allowed: frozenset[str] = OPEN_FIELDS
    default_prompt: str | None = "closed-book"

    def __init__(
        self,
        prompt: str | None = None,
        shots: int = 0,
        shot_seed: int = 0,
        prompt_digest: str | None = None,
        generation: Mapping[str, Any] | None = None,
    ) -> None:
        """``prompt``: the template a generative model is prompted with (a built-in name or a .json
        file; default: the task's canonical one); ``shots``: solved examples in each prompt;
        ``shot_seed``: their draw. ``prompt_digest`` and ``generation`` are what a result records
        (the template's digest, the run's generation options), so that the task is made again
        from its result's options (``harness validate --rescore``): a template changed since is
        refused."""
        name = self.metadata.name
        choice = PromptChoice.of(
            prompt,
            shots,
            shot_seed,
            task=name,
            required=self.prompt_fields,
            allowed=self.prompt_allowed,
            default=self.default_prompt,
        )
        if prompt_digest is not None and (choice.template is None or choice.template.digest != prompt_digest):
            raise HarnessError(
                f"task {name}: prompt_digest {prompt_digest} is not the digest of "
                f"{prompt or 'no template'}"
                + (f" ({choice.template.digest}): the template changed" if choice.template is not None else "")
            )
        if generation:
            recorded = dict(generation)
            choice = replace(choice, settings=GenerationSettings.parse(recorded, recorded.pop("system", None)))
        self.prompting = choice

    def prepare_prompting(self, capability: object, settings: GenerationSettings, log_samples: bool = False) -> None:
        """Fix the prompt before the run (so its options, run id and signature name it): the
        template for the model the task will ask (``capability``), and the run's generation options."""
        if settings == GenerationSettings():  # none given for the run: the task's own, if any
            settings = self.prompting.settings
        self.prompting = replace(self.prompting, settings=settings, log_samples=log_samples).for_model(
            capability, prompt_target(capability), self.metadata.name
        )

    def prompt_for(self, capability: object, target: PromptTarget | None) -> PromptTemplate | None:
        """The template to prompt ``capability`` with (None: it does not generate and answers as usual)."""
        self.prompting = self.prompting.for_model(capability, target, self.metadata.name)
        return self.prompting.template if target is not None else None

    def shot_source(self, data: Any) -> str:
        """Where the shots come from, in words (said in the output and the result)."""
        return "the questions scored (their own split)"

    def options(self) -> dict[str, Any]:
        return self.prompting.options()

    def scorer_signature(self) -> str:
        return super().scorer_signature() + self.prompting.signature()  # type: ignore[misc,no-any-return]


# -- asking ---------------------------------------------------------------------------------------


def complete(
    target: PromptTarget, choice: PromptChoice, prompts: Sequence[str], progress: Progress, *, logprobs: bool = False
) -> list[tuple[Generation, list[Generation]]]:
    """Each prompt's generation and, with several samples, the further ones (seeds ``seed + 1``, ...)."""
    samples = choice.settings.samples
    requests = [
        GenerationRequest(prompt, choice.request_options(logprobs=logprobs, sample=sample))
        for sample in range(samples)
        for prompt in prompts
    ]
    generations = target.generator.generate(requests, progress=progress if samples == 1 else None)
    if samples > 1:
        progress.update(len(prompts))
    n = len(prompts)
    return [(generations[i], [generations[i + n * sample] for sample in range(1, samples)]) for i in range(n)]


def ask_reading(
    target: PromptTarget,
    choice: PromptChoice,
    examples: Sequence[ReadingExample],
    shots: Callable[[ReadingExample], Sequence[Shot]],
    progress: Progress,
) -> list[GeneratedAnswer]:
    """Generated answers to reading-comprehension examples (context and question in the prompt)."""
    template = choice.template
    assert template is not None
    prompts = [
        template.render(
            {"context": e.context, "question": e.question, "language": language_name(e.context_lang)},
            e.question_lang,
            shots(e),
        )
        for e in examples
    ]
    return [
        GeneratedAnswer.of(first, prompt, log_samples=choice.log_samples, samples=more)
        for prompt, (first, more) in zip(prompts, complete(target, choice, prompts, progress))
    ]


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
    :func:`harness.models.generation.finish`). A confident answer scores near 0, a hesitant one nearer
    1, and abstaining confidently near 1, so the best-threshold sweep over it is the model's
    own abstention rule, tuned. None when the generation carries no log-probability."""
    if generation.logprob is None:
        return None
    probability = math.exp(generation.logprob)
    if template.abstains(generation.text):
        return probability
    return 1.0 if not generation.text else 1.0 - probability


def ask_open(
    target: PromptTarget,
    choice: PromptChoice,
    questions: Sequence[OpenQuestion],
    shots: Callable[[OpenQuestion], Sequence[Shot]],
    progress: Progress,
    *,
    logprobs: bool = False,
) -> list[OpenGeneration]:
    """Generated answers to open-domain questions, closed-book or with the passages ``target``
    retrieves (for the shots too); ``logprobs``: also the No-Answer probability (of the first sample)."""
    template = choice.template
    assert template is not None
    chosen = [list(shots(q)) for q in questions]
    passages: dict[str, list[Passage]] = {}
    if target.retrieve is not None:
        asked = {q.id: q for q in questions}
        asked.update((s.id, s.question) for picked in chosen for s in picked if s.question is not None)
        passages = dict(zip(asked, target.retrieve(list(asked.values()))))

    def values(question: OpenQuestion) -> dict[str, str]:
        out = {"question": question.text, "language": language_name(question.answer_lang or question.lang)}
        if target.retrieve is not None:
            out["passages"] = template.show_passages(passages[question.id])
        return out

    prompts = []
    for question, picked in zip(questions, chosen):
        if target.retrieve is not None:  # a shot's prompt shows its own passages
            picked = [Shot(s.id, {**s.values, **values(s.question)}, s.answer) if s.question else s for s in picked]
        prompts.append(template.render(values(question), question.lang, picked))
    out = []
    for question, prompt, (first, more) in zip(
        questions, prompts, complete(target, choice, prompts, progress, logprobs=logprobs)
    ):
        answer = GeneratedAnswer.of(
            first,
            prompt,
            answer="" if template.abstains(first.text) else first.text,
            passages=[p.id for p in passages.get(question.id, ())],
            log_samples=choice.log_samples,
            samples=more,
        )
        if more:  # a further sample's abstention is no answer either
            answer = replace(answer, samples=tuple("" if template.abstains(g.text) else g.text for g in more))
        out.append(OpenGeneration(answer, no_answer_probability(first, template) if logprobs else None))
    return out


class PromptRecorder(GenerationService):
    """A generation service that keeps the requests it is asked, in the task's order, and answers
    nothing (with log-probability 0, so a task that needs one goes on): how a dry run learns a
    task's prompts without a model."""

    def __init__(self) -> None:
        super().__init__(self)
        self.requests: list[GenerationRequest] = []

    def generate(self, requests: Sequence[GenerationRequest], *, progress: Progress | None = None) -> list[Generation]:
        self.requests.extend(requests)
        if progress is not None:
            progress.update(len(requests))
        return [Generation("", logprob=0.0) for _ in requests]


def task_requests(task: Any, data: Any, context: Any) -> list[GenerationRequest]:
    """The requests ``task`` (a :class:`PromptedTask`) would send a generator on ``data``, every
    unit's, rendered as the run renders them (``context``: a :class:`~harness.definitions.task.RunContext`)."""
    recorder = PromptRecorder()
    model = GenerativeQA(recorder)
    for unit in task.units(data):
        task.predict(model, data, unit, context)
    return recorder.requests


class GenerativeQA:
    """A :class:`~harness.definitions.protocols.Reader` and :class:`~harness.definitions.protocols.OpenDomainQA` model made
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
            answers = ask_reading(self.target, PromptChoice(load_template("qa")), examples, lambda _: (), bar)
        return [
            SpanAnswer(a.answer, e.context.find(a.answer) if a.answer else -1, 0.0) for e, a in zip(examples, answers)
        ]

    def answer(self, questions: Sequence[OpenQuestion]) -> list[OpenAnswer]:
        with Progress(len(questions), "generating", enabled=False) as bar:
            answers = ask_open(self.target, PromptChoice(load_template("closed-book")), questions, lambda _: (), bar)
        return [OpenAnswer(a.answer.answer) for a in answers]
