"""What a task, a model, a capability and a plugin are, and how plugins are found.

The base classes and records the rest of the harness (and, through :mod:`harness.plugin`, every
plugin) is written against. Inside this room the arrows run one way, in this order:

* :mod:`~harness.definitions.specs` -- the declarations a plugin hands over (:class:`TaskSpec`,
  :class:`ModelSpec`, :class:`SuiteSpec`, :class:`BenchmarkRef`) and the checks that refuse a
  wrong one as the plugin loads;
* :mod:`~harness.definitions.protocols` -- the capabilities a task asks for (:class:`Encoder`,
  :class:`Retriever`, :class:`Reader`, :class:`Generator`...), as small protocols;
* :mod:`~harness.definitions.model` -- the model base, its identity and its runtime;
* :mod:`~harness.definitions.task` -- the task base and the records it passes;
* :mod:`~harness.definitions.hookspecs` -- the hooks a plugin implements;
* :mod:`~harness.definitions.registry` -- discovering plugins through entry points;
* :mod:`~harness.definitions.validation` -- checking a document against a core or plugin schema.
"""
