"""JSON Schemas of every file the harness reads or writes (installed as ``harness.schemas``)."""
