"""The generation service and the finishing of completions: reasoning traces, stop strings,
the answer's log-probability, deduplication, the on-disk cache and the padding share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.definitions.protocols import Generation, GenerationOptions, GenerationRequest
from harness.models.generation import Completion, GenerationCache, GenerationService, finish, split_reasoning

STOP = GenerationOptions(max_new_tokens=8, stop=("\n",), logprobs=True)


def test_a_reasoning_trace_is_split_off_before_the_answer_is_cut_at_a_stop_string() -> None:
    raw = "<think>first\nthen</think> Paris\nand more"
    generation = finish(Completion(raw, 3, 5), GenerationOptions(stop=("\n",)))
    assert (generation.text, generation.reasoning) == ("Paris", "first\nthen")
    assert split_reasoning("no trace at all") == (None, "no trace at all")
    assert split_reasoning("<think>still thinking") == ("still thinking", "")  # never closed: no answer
    assert split_reasoning("a[END]b", "[END]") == ("a", "b")  # a configured end marker


def test_a_stop_string_never_fires_inside_a_trace_nor_in_the_blank_lines_right_after_it() -> None:
    newline = GenerationOptions(stop=("\n",))
    # the server case of issue 33: "\n" right after </think> used to leave the answer ""
    volga = finish(Completion("<think>ok</think>\n\nVolga", 3, 6, ended="eos"), newline)
    assert (volga.text, volga.reasoning, volga.ended, volga.trace_open) == ("Volga", "ok", "eos", False)
    cut = finish(Completion("<think>a\nb</think>\n Volga\nMore", 3, 9, ended="length"), newline)
    assert (cut.text, cut.reasoning, cut.ended) == ("Volga", "a\nb", "stop")  # the stop string ended the answer
    still = finish(Completion("<think>a\nb and on", 3, 32, ended="length"), newline)
    assert (still.text, still.reasoning, still.ended, still.trace_open) == ("", "a\nb and on", "length", True)
    plain = finish(Completion("\nVolga", 3, 2), newline)  # no trace: the completion's own first line, as ever
    assert (plain.text, plain.ended, plain.trace_open) == ("", "stop", False)


def test_a_trace_the_prompt_opened_is_a_trace_until_it_closes() -> None:
    # a chat template ending in "<think>" (Qwen3, DeepSeek-R1): the completion starts inside the trace
    newline = GenerationOptions(stop=("\n",))
    closed = finish(Completion("Let me see.\nYes.</think>\n\nVolga\nMore", 3, 9, opened=True), newline)
    assert (closed.text, closed.reasoning, closed.trace_open) == ("Volga", "Let me see.\nYes.", False)
    still = finish(Completion("Let me see.\nand", 3, 32, ended="length", opened=True), newline)
    assert (still.text, still.reasoning, still.trace_open) == ("", "Let me see.\nand", True)


def test_cache_keys_of_requests_made_before_the_sampling_options_are_unchanged() -> None:
    import json

    from harness.files.io import sha256_text
    from harness.models.generation import request_key

    old = sha256_text("Q?", json.dumps({"max_new_tokens": 16, "stop": ["\n"], "logprobs": False}, sort_keys=True))
    assert request_key(GenerationRequest("Q?", GenerationOptions(16, ("\n",)))) == old
    sampled = GenerationRequest("Q?", GenerationOptions(16, ("\n",), temperature=0.7, seed=1))
    assert request_key(sampled) != old
    assert request_key(sampled) != request_key(
        GenerationRequest("Q?", GenerationOptions(16, ("\n",), temperature=0.7, seed=2))
    )


def test_the_answer_logprob_sums_its_tokens_and_the_stop_token_only() -> None:
    # tokens: the trace (-1), " Par" (-2), "is" (-3), "\n" (-4: the decision to stop), "x" (-5)
    pieces = ["<think>hm</think>", " Par", "is", "\n", "x"]
    generation = finish(Completion("".join(pieces), 4, 5, pieces, [-1.0, -2.0, -3.0, -4.0, -5.0]), STOP)
    assert generation.text == "Paris" and generation.logprob == -9.0
    # no stop string: every answer token and the end-of-sequence token (which decodes to nothing)
    eos = finish(Completion(" Paris", 4, 2, [" Paris", ""], [-0.5, -0.25]), STOP)
    assert eos.logprob == -0.75
    assert finish(Completion("Paris", 1, 1), STOP).logprob is None  # the engine gave none: not made up


class CountingGenerator:
    """Replies with the prompt reversed; prompt tokens = characters, one new token; counts calls."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.calls.append([r.prompt for r in requests])
        return [Generation(r.prompt[::-1], None, None, len(r.prompt), 1) for r in requests]


def requests(*prompts: str) -> list[GenerationRequest]:
    return [GenerationRequest(p, GenerationOptions()) for p in prompts]


def test_the_service_deduplicates_sorts_by_length_and_measures_the_padding() -> None:
    model = CountingGenerator()
    service = GenerationService(model, batch_size=2)
    out = service.generate(requests("a", "abc", "abcd", "abc"))
    assert [g.text for g in out] == ["a", "cba", "dcba", "cba"]
    assert model.calls == [["abcd", "abc"], ["a"]]  # longest first, the repeated prompt once
    # batches (4, 3) and (1): slots 2 x (4 + 1) + 1 x (1 + 1) = 12, real tokens 4+1 + 3+1 + 1+1 = 11
    assert service.stats.padded_tokens == 12 and math.isclose(service.stats.padding_share, 1 / 12)
    assert (service.stats.requested, service.stats.unique, service.stats.generated) == (4, 3, 3)
    service.generate(requests("abc"))
    assert len(model.calls) == 2  # already in memory


def test_options_are_part_of_the_key() -> None:
    model = CountingGenerator()
    service = GenerationService(model)
    service.generate(
        [
            GenerationRequest("q", GenerationOptions(max_new_tokens=4)),
            GenerationRequest("q", GenerationOptions(max_new_tokens=5)),
        ]
    )
    assert model.calls == [["q"], ["q"]]  # one batch per set of options


def test_the_disk_cache_serves_a_new_service_and_damaged_lines_are_generated_again(tmp_path: Path) -> None:
    identity = {"name": "m", "label": "m", "weights": "w", "options": {}}
    first = CountingGenerator()
    GenerationService(first, cache=GenerationCache(tmp_path, identity)).generate(requests("one", "two"))
    second = CountingGenerator()
    service = GenerationService(second, cache=GenerationCache(tmp_path, identity))
    assert [g.text for g in service.generate(requests("two", "one"))] == ["owt", "eno"]
    assert second.calls == [] and service.stats.cache_hits == 2
    (shard,) = (tmp_path / "generations").glob("*/*.jsonl")
    lines = shard.read_text(encoding="utf-8").splitlines()
    shard.write_text(lines[0] + "\n{broken\n", encoding="utf-8")
    third = CountingGenerator()
    with pytest.warns(RuntimeWarning, match="damaged"):
        cache = GenerationCache(tmp_path, identity)
    GenerationService(third, cache=cache).generate(requests("one", "two"))
    assert sum(len(call) for call in third.calls) == 1
    other = CountingGenerator()  # another model identity never reads these
    GenerationService(other, cache=GenerationCache(tmp_path, {**identity, "weights": "v"})).generate(requests("one"))
    assert other.calls == [["one"]]


def test_answer_counts_and_their_notes_by_hand() -> None:
    from harness.models.generation import answer_counts, answer_notes

    def record(answer: str, ended: str | None, trace_open: bool = False) -> dict[str, object]:
        return {
            "answer": answer,
            "ended": ended,
            "prompt_sha256": "0" * 64,
            **({"trace_open": True} if trace_open else {}),
        }

    counts = answer_counts(
        {
            "de": [record("", "length", True), record("", "eos", True), record("", "length"), record("Volga", "stop")],
            "ja": [record("", "eos"), record("Volga und", "length"), "an extracted answer", {"answer": "no digest"}],
        }
    )
    assert [(c.answers, c.empty, c.trace_open, c.empty_cut_by_budget, c.cut_by_budget) for c in counts.values()] == [
        (4, 3, 2, 1, 0),
        (2, 1, 0, 0, 1),
    ]
    assert answer_notes(counts, GenerationOptions(max_new_tokens=16, reasoning_tokens=496)) == [
        "2 of 6 answers empty: trace not closed within 512 tokens (de 2)",
        "1 of 6 answers empty: cut by the token budget (16 new tokens) (de 1)",
        "1 of 6 answers empty: the model answered nothing (ja 1)",
        "1 of 6 answers cut by the token budget (16 new tokens) before a stop string or the end of sequence (ja 1)",
    ]
