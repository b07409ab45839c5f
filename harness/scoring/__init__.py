"""The shared official scorers and metrics: what several benchmark plugins score with, so none imports another.

* :mod:`~harness.scoring.normalize` -- the official answer normalisers (SQuAD v1.1's English one
  and MLQA's multilingual one), named for what they do;
* :mod:`~harness.scoring.span_file` -- reading SQuAD v1.1-format files;
* :mod:`~harness.scoring.spans` -- the official exact-match/F1 loop over one file;
* :mod:`~harness.scoring.answer_language` -- telling answers made for another language;
* :mod:`~harness.scoring.answers` -- token F1 of an answer against several golds;
* :mod:`~harness.scoring.ranking` -- ranking metrics (average precision, ranks);
* :mod:`~harness.scoring.bias` -- LAReQA's language-bias analyses of one pooled ranking;
* :mod:`~harness.scoring.probe` -- the language-ID probe on a model's vectors.
"""
