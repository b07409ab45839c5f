"""retrieve-read built from Python objects: a reader object in place of a registered reader."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import harness
from harness.definitions.protocols import ReadingExample, SpanAnswer
from tests.plugins.harness_opendomain.world import NO_SPAN, SPANS, StubReader


class ReaderObject:
    """Not a harness model: a plain object with the Reader protocol's ``read``, answering as the
    registered stub reader does."""

    def read(self, examples: Sequence[ReadingExample]) -> list[SpanAnswer]:
        return [SPANS.get((e.question, e.context), SpanAnswer("", -1, NO_SPAN, None)) for e in examples]


def test_a_reader_object_reads_as_its_registered_twin(
    stub_reader: type[StubReader], corpus: Path, xor_dir: Path
) -> None:
    def run(reader: object) -> harness.Outcome:
        return harness.evaluate(
            "xor-engspan",
            "retrieve-read",
            model_args={"corpus": str(corpus), "reader": reader, "top_k": 2},
            data_dir=xor_dir,
            progress=False,
            bootstrap=0,
        )[0]

    registered, given = run("stub-reader"), run(ReaderObject())
    assert given.predictions == registered.predictions and given.result.rows == registered.result.rows
    assert given.result.model.identity.options["reader"]["label"] == "ReaderObject"
