"""Running a plan: from task and model names to scored, recorded results.

* :mod:`~harness.running.planning` -- names, suites and options into a checked plan;
* :mod:`~harness.running.settings` -- the settings of one run;
* :mod:`~harness.running.runner` -- runs a plan (``harness run``) or scores predictions
  (``harness score``);
* :mod:`~harness.running.execution` -- loading the run's model and predicting a task's units;
* :mod:`~harness.running.recording` -- writing the result, predictions and instances, and the
  leaderboard entry;
* :mod:`~harness.running.family` -- a model family (one fine-tuned model per task);
* :mod:`~harness.running.intake` -- ``harness submit``: results made elsewhere onto the leaderboard;
* :mod:`~harness.running.timing` -- the phases of a run, timed.
"""
