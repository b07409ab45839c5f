"""Models that need no inference: replay a predictions file, or the gold / empty answers of a task."""
