"""xlqa-harness: score models on cross-lingual QA benchmarks exactly as the official scripts do.

The core (this package) knows no benchmark: tasks and models arrive as plugins through the
``harness.plugins`` entry-point group, first-party ones included.
"""

__version__ = "0.1.0"
