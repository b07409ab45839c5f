"""Dense retrieval over large corpora: passage vectors in on-disk shards, exact or faiss search."""
