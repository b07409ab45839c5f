"""BM25 with language-aware tokenisation: the lexical baseline for every retrieval task."""
