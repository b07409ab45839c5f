"""The plugin contract: everything a task or model plugin imports from the harness.

A plugin, first-party or third-party, imports from this package and its sub-modules only (and
the library API, :mod:`harness.api`, should it run an evaluation); every other module under
``harness.*`` is the core's own and may be renamed, moved or changed without notice.
``tests/harness/plugin/test_plugin_contract.py`` holds the first-party plugins, the example in
``examples/third_party_plugin`` and the plugins' READMEs to that line. What is here is the stable
surface.

The contract is a package of six modules rather than one module of some 160 names because a
plugin's declarations must stay light: ``harness list`` imports every plugin module to read its
specs, so this module and :mod:`harness.plugin.io` import no heavy library (numpy, torch,
jsonschema); whatever needs one sits in a sub-module that only a task's or a model's own module
imports. The sub-modules are named for what a plugin does with them:

* :mod:`harness.plugin` (this module) -- declaring a plugin: :func:`hookimpl`, the specs
  (:class:`TaskSpec`, :class:`ModelSpec`, :class:`SuiteSpec`), the task base (:class:`Task`,
  :class:`TaskMetadata`, :class:`Edition` and the records a task passes: :class:`TaskData`,
  :class:`DataRequest`, :class:`RunContext`, :class:`ScoreRow`, :class:`Evaluation`, :class:`Clusters`), the model base
  (:class:`Model`, :class:`ModelIdentity`, :class:`Runtime`, :class:`ModelOption`), the
  capability protocols a task asks for (:class:`Encoder`, :class:`Retriever`, :class:`Reader`,
  :class:`Generator`... and the requests and answers they exchange), :class:`BenchmarkRef` (a
  task's official files) and the errors (:class:`HarnessError`, :class:`InputError`);
* :mod:`harness.plugin.io` -- reading and writing files (light): atomic writes and folders,
  JSON/JSONL with line-numbered errors, digests, SQuAD-format span files, sentence splitting,
  package versions;
* :mod:`harness.plugin.formats` -- checked records: validating a file against a registered JSON
  schema, reading result files and finding a task's results;
* :mod:`harness.plugin.scoring` -- the shared official scorers (SQuAD v1.1's and MLQA's exact
  match and F1 with their normalisers), ranking and bias metrics, top-k search, and the
  per-question records and statistics a task declares its numbers with;
* :mod:`harness.plugin.services` -- what a model adapter builds on: the batched, cached encoding,
  generation and log-likelihood services, capability adapters (:func:`provide`), loading a model
  by name (:func:`load_model`), the model cache, progress and the distributed world;
* :mod:`harness.plugin.tasks` -- task kits several benchmarks share: the span-QA task bases,
  passage collections, prompted generation, open-domain asking, translate-test and the
  parallel-QA demo data.
"""

from __future__ import annotations

from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import (
    Model,
    ModelIdentity,
    Runtime,
    constructor_defaults,
    default_threads,
    label_with_options,
)
from harness.definitions.protocols import (
    CAPABILITIES,
    Corpus,
    Encoder,
    Generation,
    GenerationOptions,
    GenerationRequest,
    Generator,
    KeyedSearchIndex,
    Loglikelihood,
    LoglikelihoodRequest,
    LoglikelihoodScorer,
    MultipleChoice,
    OpenAnswer,
    OpenDomainQA,
    OpenQuestion,
    PairClassifier,
    PredictionSource,
    Ranking,
    Reader,
    ReadingExample,
    Retriever,
    Role,
    ScoringIndex,
    SearchIndex,
    SpanAnswer,
    Text,
    TokenTagger,
    Translator,
)
from harness.definitions.specs import BenchmarkRef, Edition, ModelSpec, SuiteSpec, TaskSpec
from harness.definitions.task import (
    DataRequest,
    Evaluation,
    RunContext,
    ScoreRow,
    Task,
    TaskData,
    TaskMetadata,
)
from harness.errors import HarnessError, InputError
from harness.options import ModelOption
from harness.stats.clusters import Clusters

__all__ = [
    "CAPABILITIES",
    "BenchmarkRef",
    "Clusters",
    "Corpus",
    "DataRequest",
    "Edition",
    "Encoder",
    "Evaluation",
    "Generation",
    "GenerationOptions",
    "GenerationRequest",
    "Generator",
    "HarnessError",
    "InputError",
    "KeyedSearchIndex",
    "Loglikelihood",
    "LoglikelihoodRequest",
    "LoglikelihoodScorer",
    "Model",
    "ModelIdentity",
    "ModelOption",
    "ModelSpec",
    "MultipleChoice",
    "OpenAnswer",
    "OpenDomainQA",
    "OpenQuestion",
    "PairClassifier",
    "PredictionSource",
    "Ranking",
    "Reader",
    "ReadingExample",
    "Retriever",
    "Role",
    "RunContext",
    "Runtime",
    "ScoreRow",
    "ScoringIndex",
    "SearchIndex",
    "SpanAnswer",
    "SuiteSpec",
    "Task",
    "TaskData",
    "TaskMetadata",
    "TaskSpec",
    "Text",
    "TokenTagger",
    "Translator",
    "constructor_defaults",
    "default_threads",
    "hookimpl",
    "label_with_options",
]
