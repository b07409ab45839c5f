"""The plugin contract's files: reading and writing what a plugin reads and writes (light to import).

Atomic writes and folders, JSON and JSONL with line-numbered errors, digests, SQuAD v1.1-format
span files, sentence splitting and package versions. See :mod:`harness.plugin`.
"""

from __future__ import annotations

from harness.data.sentences import split_sentences, splitter_version
from harness.files.io import (
    atomic_folder,
    check_known_ids,
    dump_json,
    iter_jsonl,
    json_bytes,
    parse_json,
    read_json,
    remove_temporaries,
    sha256_file,
    sha256_path,
    sha256_text,
    write_atomic,
    write_folder_atomic,
)
from harness.results.provenance import package_version
from harness.scoring.span_file import SpanQuestion, read_span_file

__all__ = [
    "SpanQuestion",
    "atomic_folder",
    "check_known_ids",
    "dump_json",
    "iter_jsonl",
    "json_bytes",
    "package_version",
    "parse_json",
    "read_json",
    "read_span_file",
    "remove_temporaries",
    "sha256_file",
    "sha256_path",
    "sha256_text",
    "split_sentences",
    "splitter_version",
    "write_atomic",
    "write_folder_atomic",
]
