"""Span QA as a library: what several benchmark plugins share, so that none imports another.

* :mod:`harness.qa.normalize` -- the official answer normalisers (SQuAD v1.1's English one and
  MLQA's multilingual one), named for what they do;
* :mod:`harness.qa.span_file` -- reading SQuAD v1.1-format files;
* :mod:`harness.qa.scoring` -- the official exact-match/F1 loop over one file;
* :mod:`harness.qa.task` -- the span-QA task bases (one unit per file);
* :mod:`harness.qa.answer_language` -- telling answers made for another language;
* :mod:`harness.qa.passages` -- passage collections for open retrieval;
* :mod:`harness.qa.translate` -- translating texts of mixed languages.
"""
