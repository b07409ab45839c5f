"""Open-domain QA pipelines: retrieve passages from a user's corpus, read them, pick the best span."""
