"""Span-QA task bases as a library: what several benchmark plugins' tasks share.

* :mod:`harness.qa.task` -- the span-QA task bases (one unit per language file, scored by the
  official scorer of :mod:`harness.scoring.spans`);
* :mod:`harness.qa.translate` -- translating texts of mixed languages (translate-test).
"""
