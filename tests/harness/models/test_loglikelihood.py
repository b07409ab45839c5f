"""The log-likelihood service: requests deduplicated, sorted by length into batches, halved on
out-of-memory, kept on disk beside the generation cache (damaged lines scored again), counted in
the execution record, and shared between two torchrun ranks; the choice among continuations by
the sum, per character and per UTF-8 byte, worked out by hand."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.protocols import Loglikelihood, LoglikelihoodRequest
from harness.models.loglikelihood import (
    ChoiceQuestion,
    LikelihoodChoice,
    LoglikelihoodCache,
    LoglikelihoodService,
    choice_target,
    choose,
    decide,
)
from tests.plugins.harness_xtreme.test_xcopa import write_xcopa
from tests.torchrun import environment, harness_run

Cli = Callable[..., tuple[int, str, str]]


class LengthScorer:
    """Scores a continuation -len(continuation) (a known figure) and keeps every batch it got."""

    def __init__(self, fail_over: int | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail_over = fail_over

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        if self.fail_over is not None and len(requests) > self.fail_over:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        self.calls.append([r.context + r.continuation for r in requests])
        return [Loglikelihood(-float(len(r.continuation)), len(r.continuation), True) for r in requests]


def asked(*pairs: tuple[str, str]) -> list[LoglikelihoodRequest]:
    return [LoglikelihoodRequest(context, continuation) for context, continuation in pairs]


def test_the_service_deduplicates_sorts_by_length_and_measures_the_padding() -> None:
    scorer = LengthScorer()
    service = LoglikelihoodService(scorer, batch_size=2)
    out = service.loglikelihood(asked(("a", "b"), ("ab", "cd"), ("abc", "defg"), ("ab", "cd")))
    assert [score.logprob for score in out] == [-1.0, -2.0, -4.0, -2.0]
    assert scorer.calls == [["abcdefg", "abcd"], ["ab"]]  # longest first, the repeated request once
    # lengths in characters (the scorer counts no tokens): batches (7, 4) and (2): slots 2 x 7 + 2 = 16, real 13
    stats = service.stats
    assert (stats.requested, stats.unique, stats.scored, stats.batches) == (4, 3, 3, 2)
    assert stats.padded_tokens == 16 and stats.tokens == 13 and stats.length_unit == "characters"
    assert math.isclose(stats.padding_share, 3 / 16)
    assert stats.continuation_tokens == 1 + 2 + 4
    service.loglikelihood(asked(("ab", "cd")))
    assert len(scorer.calls) == 2  # already in memory
    # the system prompt is part of the request: another system, another score
    service.loglikelihood([LoglikelihoodRequest("ab", "cd", system="be brief")])
    assert len(scorer.calls) == 3


def test_a_batch_out_of_memory_is_halved() -> None:
    scorer = LengthScorer(fail_over=1)
    service = LoglikelihoodService(scorer, batch_size=4)
    out = service.loglikelihood(asked(("x", "1"), ("x", "22"), ("x", "333")))
    assert [score.logprob for score in out] == [-1.0, -2.0, -3.0]
    assert all(len(call) == 1 for call in scorer.calls) and service.stats.oom_halvings >= 2
    assert service.stats.batch_size == 1


def test_the_disk_cache_serves_a_new_service_and_damaged_lines_are_scored_again(tmp_path: Path) -> None:
    identity = {"name": "m", "label": "m", "weights": "w", "options": {}}
    LoglikelihoodService(LengthScorer(), cache=LoglikelihoodCache(tmp_path, identity)).loglikelihood(
        asked(("c", "one"), ("c", "three"))
    )
    second = LengthScorer()
    service = LoglikelihoodService(second, cache=LoglikelihoodCache(tmp_path, identity))
    assert [s.logprob for s in service.loglikelihood(asked(("c", "three"), ("c", "one")))] == [-5.0, -3.0]
    assert second.calls == [] and service.stats.cache_hits == 2
    (shard,) = (tmp_path / "loglikelihoods").glob("*/*.jsonl")
    assert (shard.parent / "model.json").is_file()
    lines = shard.read_text(encoding="utf-8").splitlines()
    shard.write_text(lines[0] + "\n{broken\n", encoding="utf-8")
    third = LengthScorer()
    with pytest.warns(RuntimeWarning, match="damaged"):
        cache = LoglikelihoodCache(tmp_path, identity)
    LoglikelihoodService(third, cache=cache).loglikelihood(asked(("c", "one"), ("c", "three")))
    assert sum(len(call) for call in third.calls) == 1
    other = LengthScorer()  # another model identity never reads these
    LoglikelihoodService(other, cache=LoglikelihoodCache(tmp_path, {**identity, "weights": "v"})).loglikelihood(
        asked(("c", "one"))
    )
    assert other.calls == [["cone"]]


def test_the_choice_by_sum_per_character_and_per_byte() -> None:
    # options: 4 characters / 4 bytes, 2 characters / 6 bytes ("日本"), 8 characters / 8 bytes
    question = ChoiceQuestion("ctx", (" abc", "日本", " abcdefg"))
    scores = [Loglikelihood(-4.0, 1, False), Loglikelihood(-3.0, 1, False), Loglikelihood(-6.0, 1, False)]
    decision = choose(question, scores)
    # sum: -4, -3, -6 -> 1; per character: -1, -1.5, -0.75 -> 2; per byte: -1, -0.5, -0.75 -> 1
    assert decision.chosen == {"sum": 1, "chars": 2, "bytes": 1}
    tie = choose(ChoiceQuestion("c", (" a", " b")), [Loglikelihood(-1.0, 1, False)] * 2)
    assert tie.chosen == {"sum": 0, "chars": 0, "bytes": 0}  # the first of equals, as numpy.argmax
    service = LoglikelihoodService(LengthScorer())
    [made] = decide(service, [ChoiceQuestion("c", (" long option", " short"))])
    assert made.loglikelihoods == (-12.0, -6.0) and made.chosen["sum"] == 1


def test_the_adapter_chooses_the_most_likely_candidate_after_a_space() -> None:
    scorer = LengthScorer()
    chooser = LikelihoodChoice(scorer)
    assert chooser.choose([("Text", ["long one", "short"]), ("Other", ["ab", "abc"])]) == [1, 0]
    assert scorer.calls == [["Text long one", "Text short", "Other abc", "Other ab"]]  # one length-sorted batch
    assert choice_target(chooser) is chooser.service and choice_target(scorer) is None


def _execution(harness_cli: Cli, *args: Any) -> dict[str, Any]:
    code, out, err = harness_cli(
        "--plugin",
        "tests.harness.fake_scorer",
        "run",
        *args,
        "--quiet",
        "--json",
        "--bootstrap",
        "0",
        "--no-leaderboard",
    )
    assert code == 0, err
    return json.loads(out)["results"][0]["result"]["provenance"]["execution"]


def test_a_run_counts_its_scores_and_a_second_run_reads_them_from_the_cache(tmp_path: Path, harness_cli: Cli) -> None:
    write_xcopa(tmp_path / "xcopa", "val", "it", [0, 1, 1, 0, 1])
    args = (
        "xcopa",
        "fake-scorer",
        "--data-dir",
        tmp_path / "xcopa",
        "--split",
        "dev",
        "--langs",
        "it",
        "--cache-dir",
        tmp_path / "cache",
        "--output-dir",
        tmp_path / "out",
    )
    first = _execution(harness_cli, *args)["loglikelihood"]
    assert (first["requested"], first["unique"], first["scored"], first["cache_hits"]) == (10, 10, 10, 0)
    assert first["length_unit"] == "characters" and first["requests_per_s"] is not None
    second = _execution(harness_cli, *args)["loglikelihood"]
    assert second["cache_hits"] == 10 and second["scored"] == 0
    assert len(list((tmp_path / "cache" / "loglikelihoods").glob("*/*.jsonl"))) == 1


@pytest.mark.slow
def test_two_gloo_ranks_share_the_scoring_and_give_the_single_process_scores(tmp_path: Path) -> None:
    """Under torchrun each rank scores its batches and the scores are gathered: the ranks' shares
    add up to every request once, the rows are one process's, rank 0's cache holds every score."""
    write_xcopa(tmp_path / "xcopa", "val", "it", [n % 2 for n in range(12)])
    args = [
        "xcopa",
        "fake-scorer",
        "--data-dir",
        "xcopa",
        "--split",
        "dev",
        "--langs",
        "it",
        "--quiet",
        "--batch-size",
        "3",
        "--bootstrap",
        "0",
    ]
    env = environment("tests.harness.fake_scorer")
    harness_run(tmp_path, [*args, "--output-dir", "single", "--no-cache", "--leaderboard", "single.json"], env)
    harness_run(
        tmp_path, [*args, "--output-dir", "dist", "--cache-dir", "cache", "--leaderboard", "dist.json"], env, ranks=2
    )
    (one,), (two,) = (
        json.loads((tmp_path / name).read_text(encoding="utf-8"))["entries"] for name in ("single.json", "dist.json")
    )
    assert two["rows"] == one["rows"]
    (result,) = (tmp_path / "dist").rglob("result.json")
    execution = json.loads(result.read_text(encoding="utf-8"))["provenance"]["execution"]
    shares = [rank["loglikelihood"]["scored"] for rank in execution["ranks"]]
    assert min(shares) > 0 and sum(shares) == execution["all_ranks"]["loglikelihood"]["scored"] == 24
    cached = [
        json.loads(line)["key"]
        for shard in (tmp_path / "cache").rglob("*.jsonl")
        for line in shard.read_text(encoding="utf-8").splitlines()
    ]
    assert len(cached) == len(set(cached)) == 24
