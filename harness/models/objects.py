"""Model objects from Python: whatever a researcher has in memory, run as a harness model.

The library API (:func:`harness.evaluate`) takes, besides a registered name, any object that
satisfies a capability by duck typing, as MTEB takes any object with ``encode``:

- an object with ``encode(texts)``: an :class:`~harness.definitions.protocols.Encoder`. A
  ``sentence_transformers.SentenceTransformer`` works as it is: its ``encode_query`` /
  ``encode_document`` are used when it has them, else its ``prompts`` named ``query`` and
  ``passage`` (or ``document``) are passed as ``prompt_name``; an ``encode`` that takes the
  harness's ``role=`` gets it;
- an object with the methods of another capability (``read``, ``index``, ``answer``,
  ``translate``, ...), called as the protocol says;
- an object with ``generate(requests)``: a :class:`~harness.definitions.protocols.Generator`. Each
  completion it returns (the raw text, or a :class:`~harness.definitions.protocols.Generation` whose
  ``reasoning`` is None) is finished as every engine's is (:func:`harness.models.generation.finish`):
  a ``<think>`` trace split off and kept, the answer cut at the request's stop strings after it;
- a plain callable ``reader(question=..., context=...)`` returning the answer text, a
  :class:`~harness.definitions.protocols.SpanAnswer`, or a mapping with ``answer`` (and ``start``, ``score``)
  as a transformers question-answering pipeline returns: a :class:`~harness.definitions.protocols.Reader`.

An object's identity is honest about what is known: its class, the user's label, and a
fingerprint of its weights where it has any (a torch module, or an object holding one as
``.model``). An object with nothing to fingerprint is not reproducible from its identity alone:
its result says so, its run id and leaderboard key are its own, and the on-disk embedding cache
is not used for it, so two different in-memory models never share vectors.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from harness.definitions.model import Model, ModelIdentity
from harness.definitions.protocols import (
    CAPABILITIES,
    Encoder,
    Generation,
    GenerationRequest,
    Generator,
    Reader,
    ReadingExample,
    Role,
    SpanAnswer,
    protocol_methods,
)
from harness.definitions.specs import PluginInfo
from harness.errors import HarnessError
from harness.models.capabilities import declared
from harness.models.generation import Completion, finish

#: The plugin a result names for a model object handed to the API.
PYTHON_OBJECT = PluginInfo("python-object")

#: Attributes of an encoder object that change its vectors without changing its weights.
_ENCODING_SETTINGS = ("max_seq_length", "prompts", "default_prompt_name", "similarity_fn_name", "truncate_dim")

#: The prompt names a SentenceTransformer may give each role.
_PROMPT_NAMES: dict[str, tuple[str, ...]] = {"query": ("query",), "passage": ("passage", "document", "corpus")}


def as_model(obj: object, label: str | None = None) -> Model:
    """``obj`` as a harness model: a :class:`~harness.definitions.model.Model` as it is, anything else wrapped
    by the capabilities its methods provide (see the module docstring)."""
    if isinstance(obj, Model):
        if label is not None:
            raise HarnessError(
                f"label: a harness model ({type(obj).__name__}) gives its own label; label names plain objects"
            )
        return obj
    capabilities = declared(obj)
    if not capabilities:
        if not callable(obj):
            methods = ", ".join(sorted({f"{m}()" for c in CAPABILITIES for m in protocol_methods(c)}))
            raise HarnessError(
                f"model object of type {type(obj).__name__} provides no capability (methods: "
                f"{methods}) and is not a callable reader"
            )
        return CallableReader(obj, label)
    return _model_class(capabilities)(obj, label)


class ObjectModel(Model):
    """A model object wrapped for the runner: the object's capability methods, and its identity."""

    def __init__(self, obj: Any, label: str | None) -> None:
        self.obj = obj
        self.label = label or getattr(obj, "__name__", None) or type(obj).__name__
        self.weights = fingerprint(obj)
        #: A fingerprint or nothing: without one, the run's identity is its own (see the module docstring).
        self.reproducible = self.weights is not None
        self._instance = None if self.reproducible else uuid.uuid4().hex
        self.name = "python-object"

    def identity(self) -> ModelIdentity:
        cls = type(self.obj)
        options: dict[str, Any] = {"class": f"{cls.__module__}.{cls.__qualname__}"}
        if self._instance is not None:
            options["instance"] = self._instance
        return ModelIdentity(
            name=self.name,
            label=self.label,
            weights=self.weights,
            options=options,
            details={"reproducible": self.reproducible},
        )


class ObjectEncoder(ObjectModel):
    """An object with ``encode``, called the way it understands (see the module docstring)."""

    provides = frozenset({Encoder})

    def __init__(self, obj: Any, label: str | None) -> None:
        super().__init__(obj, label)
        self.by_role: dict[str, Callable[..., Any]] = {}
        if callable(getattr(obj, "encode_query", None)) and callable(getattr(obj, "encode_document", None)):
            self.by_role = {"query": obj.encode_query, "passage": obj.encode_document}
        parameters = _parameters(obj.encode)
        self.takes_role = "role" in parameters
        self.takes_langs = "langs" in parameters
        prompts = getattr(obj, "prompts", None)
        names = prompts if isinstance(prompts, Mapping) else {}
        self.prompt_names = {
            role: next((n for n in candidates if n in names), None) for role, candidates in _PROMPT_NAMES.items()
        }

    def encode(self, texts: Sequence[str], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        texts = list(texts)
        if self.takes_role:
            vectors = self.obj.encode(texts, role=role, **({"langs": langs} if self.takes_langs else {}))
        elif role in self.by_role:
            vectors = self.by_role[role](texts)
        elif self.prompt_names.get(role) is not None:
            vectors = self.obj.encode(texts, prompt_name=self.prompt_names[role])
        else:
            vectors = self.obj.encode(texts)
        return _as_matrix(vectors, len(texts), self.label)


class ObjectGenerator(ObjectModel):
    """An object with ``generate``: its completions finished by the harness (see the module docstring)."""

    provides = frozenset({Generator})

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        requests = list(requests)
        out = list(self.obj.generate(requests))
        if len(out) != len(requests):
            raise HarnessError(f"generator {self.label} returned {len(out)} completions for {len(requests)} prompts")
        return [self._finish(request, completion) for request, completion in zip(requests, out)]

    def _finish(self, request: GenerationRequest, completion: object) -> Generation:
        if isinstance(completion, str):
            return finish(Completion(completion, 0, 0), request.options)
        if not isinstance(completion, Generation):
            raise HarnessError(
                f"generator {self.label} returned {type(completion).__name__}: expected the "
                "completion's text or a harness.definitions.protocols.Generation"
            )
        if completion.reasoning is not None:  # finished already: its trace split off by the object itself
            return completion
        raw = Completion(completion.text, completion.prompt_tokens, completion.new_tokens, ended=completion.ended)
        if request.options.logprobs and completion.logprob is not None:  # one figure for the whole text
            raw = Completion(raw.text, raw.prompt_tokens, raw.new_tokens, [raw.text], [completion.logprob], raw.ended)
        return finish(raw, request.options)


class CallableReader(ObjectModel):
    """A callable ``reader(question=..., context=...)`` as a :class:`~harness.definitions.protocols.Reader`."""

    provides = frozenset({Reader})

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        return [
            self._answer(example, self.obj(question=example.question, context=example.context)) for example in examples
        ]

    def _answer(self, example: ReadingExample, out: Any) -> SpanAnswer:
        if isinstance(out, SpanAnswer):
            return out
        if isinstance(out, str):
            return SpanAnswer(out, example.context.find(out), 0.0)
        if isinstance(out, Mapping) and isinstance(out.get("answer"), str):
            text = out["answer"]
            return SpanAnswer(text, int(out.get("start", example.context.find(text))), float(out.get("score", 0.0)))
        raise HarnessError(
            f"reader {self.label} returned {type(out).__name__} for question {example.id}: expected "
            "the answer text, a SpanAnswer, or a mapping with 'answer' (as a question-answering "
            "pipeline returns)"
        )


@cache
def _model_class(capabilities: frozenset[type]) -> type[ObjectModel]:
    """The wrapper class of an object with these capabilities: the encoder or reader wrapper
    where one applies, and the object's own methods for the rest of the protocol methods."""
    base: type[ObjectModel] = (
        ObjectEncoder if Encoder in capabilities else ObjectGenerator if Generator in capabilities else ObjectModel
    )
    methods = {
        name: _delegate(name) for capability in capabilities - base.provides for name in protocol_methods(capability)
    }
    if not methods:
        return base
    names = ",".join(sorted(c.__name__ for c in capabilities))
    return type(f"ObjectModel[{names}]", (base,), {"provides": capabilities, **methods})


def _delegate(name: str) -> Callable[..., Any]:
    def method(self: ObjectModel, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.obj, name)(*args, **kwargs)

    method.__name__ = name
    return method


def _parameters(fn: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return {}


def _as_matrix(vectors: Any, count: int, label: str) -> np.ndarray:
    """What an encoder object returned (numpy, a torch tensor, lists) as float32 rows, checked."""
    if hasattr(vectors, "detach"):  # a torch tensor, on any device and in any dtype
        vectors = vectors.detach().float().cpu().numpy()
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or len(matrix) != count:
        raise HarnessError(
            f"encoder {label} returned an array of shape {matrix.shape} for {count} texts "
            f"(expected {count} rows of one vector each)"
        )
    return matrix


def fingerprint(obj: object) -> str | None:
    """A digest of the weights of ``obj`` (a torch module, or an object holding one as
    ``.model``, as pipelines do) and of its encoding settings; None when it has none."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    module = obj if isinstance(obj, torch.nn.Module) else getattr(obj, "model", None)
    if not isinstance(module, torch.nn.Module):
        return None
    digest = hashlib.sha256(f"{type(obj).__module__}.{type(obj).__qualname__}".encode())
    for name, tensor in sorted(module.state_dict().items()):
        flat = tensor.detach().reshape(-1).contiguous().cpu()
        digest.update(f"{name}|{flat.dtype}|{tuple(tensor.shape)}".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    for setting in _ENCODING_SETTINGS:
        if hasattr(obj, setting):
            digest.update(f"{setting}={getattr(obj, setting)!r}".encode())
    return f"sha256:{digest.hexdigest()}"
