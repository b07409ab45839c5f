"""Per-question evidence and statistics: per-instance records, bootstrap intervals, paired tests.

A task's official number is a function of per-question values (a mean of F1s, a mean of means,
a threshold sweep). :mod:`harness.stats.records` keeps those values, one :class:`Instance` per
question, next to the result; :mod:`harness.stats.statistics` says how a row's number is
computed from them (declared once per task, by :meth:`harness.definitions.task.Task.statistics`);
:mod:`harness.stats.bootstrap` resamples questions within each unit and recomputes the row to
give a percentile interval; :mod:`harness.stats.paired` compares two runs on the same questions.
"""

#: Bootstrap resamples behind a 95% interval when none are asked for. Declared here, in the
#: package's numpy-free front, so the command line's parser (read by every command, ``harness
#: list`` too) takes it without importing the bootstrap.
DEFAULT_RESAMPLES = 1000
