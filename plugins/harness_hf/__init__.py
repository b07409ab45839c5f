"""Models loaded from local transformers checkpoint folders (``AutoModel`` and friends)."""
