"""MLQA: cross-lingual extractive QA in 7 languages (Lewis et al., ACL 2020), XLT and G-XLT,
scored as ``facebookresearch/MLQA:mlqa_evaluation_v1.py`` does."""
