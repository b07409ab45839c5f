"""Models and their services: turning what the user names into a model, and running it well.

* choosing and building a model: :mod:`~harness.models.compose` (a name with options, or a model
  object, into a model; composite models' inner models), :mod:`~harness.models.objects` (any
  Python object with the right methods as a model), :mod:`~harness.models.capabilities` (what a
  model can do, and adapting one capability into another);
* the services a run puts in front of a model: :mod:`~harness.models.encoding`,
  :mod:`~harness.models.generation`, :mod:`~harness.models.loglikelihood` (batched, resumable,
  cached by :mod:`~harness.models.cache`), with :mod:`~harness.models.batching`,
  :mod:`~harness.models.distributed` and :mod:`~harness.models.peak` (measured FLOP/s);
* asking a model: :mod:`~harness.models.prompting` (prompt templates, in ``prompts/``),
  :mod:`~harness.models.open_domain`, :mod:`~harness.models.search` (exact top-k search).
"""
