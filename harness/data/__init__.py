"""The benchmarks' data: where it lives, how it is fetched, and the collections tasks read.

* :mod:`~harness.data.home` -- the data home: each plugin's data manifest, fetching and checking
  a benchmark's official files, finding a task's folder (``harness run`` without ``--data-dir``);
* :mod:`~harness.data.command` -- ``harness data`` (list, get, verify, where);
* :mod:`~harness.data.passages` -- passage collections for open retrieval;
* :mod:`~harness.data.sentences` -- splitting contexts into sentences.
"""
