"""XOR-TyDi QA: cross-lingual open-retrieval QA (Asai et al., NAACL 2021).

XOR-Retrieve, XOR-EnglishSpan and XOR-Full, scored exactly as ``AkariAsai/XORQA``'s ``evals/``
scripts do, with a user-supplied passage corpus for running retrievers.
"""
