"""LAReQA: language-agnostic answer retrieval from a multilingual pool (Roy et al., EMNLP 2020).

The first-party plugin for XQuAD-R, scored as XTREME-R's official ``utils_lareqa.py`` does.
"""
