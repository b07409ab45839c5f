"""Span QA in SQuAD v1.1 format: the official normalisers, the scoring loop, a task base, XQuAD.

Public API for other plugins (stable): :func:`harness_squad.normalize.squad_v1` and
:func:`harness_squad.normalize.mlqa` (normalisers), :func:`harness_squad.data.read_squad_file`,
:func:`harness_squad.scoring.score_questions`, and :class:`harness_squad.task.SpanQATask`.
"""
