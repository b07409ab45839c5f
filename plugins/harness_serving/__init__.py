"""Generators served by other engines: a local OpenAI-compatible server, and vLLM in process."""
