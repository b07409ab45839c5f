"""A test plugin whose run stalls at a chosen point, so a test can ``kill -9`` it exactly there.

Loaded in a ``harness run`` subprocess with ``--plugin tests.stall_plugin``. ``$HARNESS_TEST_STALL``
names the point; when the run reaches it, the process creates the file ``$HARNESS_TEST_STALL_MARKER``
and waits forever (until the test kills it):

* ``search:LANG``: the ``stall-overlap`` retriever is asked to rank the pool for questions in LANG
  (a unit being predicted);
* ``write:PREFIX``: an atomic write (:func:`harness.files.io.write_atomic`) of a temporary file whose
  name starts with PREFIX (``.result.json.``) has written every byte and is about to ``fsync`` it:
  the temporary is on disk, the target not yet replaced. ``os.fsync`` is wrapped for that, so every
  writer is caught whatever name it imported ``write_atomic`` under; Linux only (``/proc/self/fd``).

Without ``$HARNESS_TEST_STALL`` the model is a plain word-overlap retriever and nothing is wrapped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.definitions.hookspecs import hookimpl
from harness.definitions.model import Model, ModelIdentity, Runtime
from harness.definitions.protocols import Corpus, Ranking, Retriever
from harness.definitions.specs import ModelSpec

STALL_ENV = "HARNESS_TEST_STALL"
MARKER_ENV = "HARNESS_TEST_STALL_MARKER"


def _stall() -> None:
    Path(os.environ[MARKER_ENV]).write_text(os.environ[STALL_ENV], encoding="utf-8")
    while True:
        time.sleep(60)


class OverlapIndex:
    """Ranks a pool by the number of words a passage shares with the query (ties: pool order)."""

    def __init__(self, corpus: Corpus) -> None:
        self.documents = [set(text.split()) for text in corpus.texts]

    def search(self, queries: Sequence[str], *, langs: Sequence[str] | None = None, k: int | None = None) -> Ranking:
        if os.environ.get(STALL_ENV, "").startswith("search:") and os.environ[STALL_ENV][7:] in (langs or ()):
            _stall()
        scores = np.array([[len(set(q.split()) & d) for d in self.documents] for q in queries], dtype=np.float32)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return Ranking(order, np.take_along_axis(scores, order, axis=1))


class StallOverlap(Model):
    """A retriever that stalls where ``$HARNESS_TEST_STALL`` says (see the module docstring)."""

    provides = frozenset({Retriever})

    def __init__(self, *, runtime: Runtime) -> None:
        pass

    def identity(self) -> ModelIdentity:
        return ModelIdentity(name="stall-overlap", label="stall-overlap")

    def index(self, corpus: Corpus) -> OverlapIndex:
        return OverlapIndex(corpus)


def _fsync_stalling_at(prefix: str) -> None:
    fsync = os.fsync

    def stalling_fsync(fd: int) -> None:
        if Path(os.readlink(f"/proc/self/fd/{fd}")).name.startswith(prefix):
            _stall()
        fsync(fd)

    os.fsync = stalling_fsync


if os.environ.get(STALL_ENV, "").startswith("write:"):
    _fsync_stalling_at(os.environ[STALL_ENV][6:])


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [ModelSpec("stall-overlap", f"{__name__}:StallOverlap", "word overlap that stalls where a test says")]
