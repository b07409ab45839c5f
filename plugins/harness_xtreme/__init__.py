"""XTREME and XTREME-R (google-research/xtreme): TyDiQA-GoldP and Tatoeba as tasks a model runs,
and ``xtreme``, which scores a whole submission folder exactly as XTREME's ``evaluate.py``."""
