"""Results: the result file and what sits beside it, and comparing two results.

* :mod:`~harness.results.result` -- the run result as typed records, read at any version;
* :mod:`~harness.results.instances` -- the per-question records file beside it;
* :mod:`~harness.results.layout` -- where results sit below a folder;
* :mod:`~harness.results.provenance` -- what a result records of where it came from;
* :mod:`~harness.results.compare` -- ``harness compare``: two runs on the same questions.
"""
