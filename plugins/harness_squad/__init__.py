"""XQuAD: extractive QA in 12 languages, scored with SQuAD v1.1's scorer as XTREME does.

The span-QA machinery it uses (normalisers, scorer, SQuAD-format reader, task base) is the
core's :mod:`harness.qa`, shared with MLQA, TyDiQA-GoldP and XOR-EnglishSpan.
"""
