"""MKQA: multilingual open-domain question answering in 26 languages (Longpre et al., TACL 2021).

The first-party plugin for MKQA, scored as ``apple/ml-mkqa``'s official ``mkqa_eval.py`` does,
with the No-Answer baseline model.
"""
