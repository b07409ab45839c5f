"""What a person sees: progress bars, text tables, and errors worded in the user's own terms.

* :mod:`~harness.display.progress` -- the progress bar of a long step (off in tests and pipes);
* :mod:`~harness.display.tables` -- plain-text tables of scores, with each number's scale;
* :mod:`~harness.display.wording` -- an error naming an option as the user wrote it (``--data-dir``
  on the command line, ``data_dir`` in the library API).
"""
