"""Benchmark-independent metrics shared by task plugins."""
