"""What ``harness run`` and ``harness score`` print: each result's table and a summary, or the
plan of a dry run (tasks, texts, tokens, the time it would take)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.parsing import width as _width
from harness.display.tables import format_score, format_table, unit_label

if TYPE_CHECKING:
    from harness.running.recording import Outcome


def report_all(outcomes: Sequence[Outcome], leaderboard_path: Path | None, args: argparse.Namespace) -> None:
    """Each result's table, then, for several tasks, one summary table of their main scores; or
    with ``--json`` one JSON object for scripts."""
    if args.json:
        print(
            json.dumps(
                {
                    "results": [
                        {"result_path": str(o.result_path), "result": o.result.to_dict()}
                        for o in outcomes
                        if o.result is not None
                    ],
                    "leaderboard": None if leaderboard_path is None else str(leaderboard_path),
                },
                indent=1,
                ensure_ascii=False,
            )
        )
        return
    width = _width(args)
    for number, outcome in enumerate(outcomes):
        if number:
            print()
        _report(outcome, leaderboard_path, width)
    if len(outcomes) > 1:
        print("\nSummary:")
        print(
            format_table(
                ["task", "options", "model", "main metric", "score"],
                [
                    [
                        r.task.name,
                        ",".join(f"{k}={v}" for k, v in r.task.options.items()) or "-",
                        r.model.label,
                        unit_label(r.main_score.metric, r.task.unit(r.main_score.metric)),
                        format_score(r.main_score.value),
                    ]
                    for r in (o.result for o in outcomes)
                    if r is not None
                ],
                width,
            )
        )


def _report(outcome: Outcome, leaderboard_path: Path | None, width: int | None) -> None:
    result = outcome.result
    assert result is not None  # callers skip the outcomes of ranks other than 0
    data = result.data
    scope = "built-in demo data" if data.demo else data.source
    print(f"{result.task.name} / {result.model.label}  ({scope}, split {data.split})")
    metrics = list(dict.fromkeys(name for row in result.rows for name in row.metrics))
    print(
        format_table(
            ["subset", *(unit_label(m, result.task.unit(m)) for m in metrics), "count"],
            [[row.subset, *(format_score(row.metrics.get(m)) for m in metrics), str(row.count)] for row in result.rows],
            width,
        )
    )
    samples = (result.diagnostics.get("generation") or {}).get("samples")
    spread = (
        f"  (over {len(samples['main_scores'])} samples: mean {format_score(samples['mean'])}, std "
        f"{format_score(samples['std'])})"
        if samples
        else ""
    )
    print(
        f"main score: {unit_label(result.main_score.metric, result.task.unit(result.main_score.metric))} = "
        f"{format_score(result.main_score.value, result.main_score.interval)}{spread}"
    )
    for note in result.notes:
        print(f"note: {note}")
    if outcome.resumed_units:
        print(f"resumed units: {', '.join(outcome.resumed_units)}")
    print(f"result: {outcome.result_path}")
    print(f"predictions: {result.predictions.path}")
    if leaderboard_path is not None:
        print(f"leaderboard: {leaderboard_path}")


def print_plan(plan: Any) -> None:
    print(f"model: {plan.model}  device: {plan.device}  precision: {plan.precision}  world size: {plan.world_size}")
    print(
        format_table(
            ["task", "data", "split", "units", "questions"],
            [
                [t["task"], t["source"], t["split"], ",".join(t["units"]), str(t["statistics"].get("questions", "-"))]
                for t in plan.tasks
            ],
        )
    )
    for task in plan.tasks:
        if task.get("generation") is not None:
            _print_generation_plan(task["task"], task["generation"])
    if plan.encoding is None:
        if not any(task.get("generation") is not None for task in plan.tasks):
            print("encoding: none (the model is not an encoder)")
        return
    e = plan.encoding
    tokens = (
        f"{e.estimated_tokens} tokens" if e.tokens_exact else f"~{e.estimated_tokens} tokens, estimated from a sample"
    )
    print(
        f"encoding: {e.texts_requested} texts requested, {e.unique_texts} unique, {e.cache_hits} in the cache, "
        f"{e.to_encode} to encode ({tokens})"
    )
    seconds = "unknown" if e.estimated_seconds is None else _duration(e.estimated_seconds)
    print(f"estimated encoding time: {seconds} ({e.calibration})")


def _print_generation_plan(task: str, g: Any) -> None:
    """A generative task's plan: requests, prompt tokens, the budget, the time, one rendered prompt."""
    tokens = (
        "prompt tokens unknown: the model cannot count them"
        if g.prompt_tokens is None
        else f"{g.prompt_tokens:,} prompt tokens"
        if g.tokens_exact
        else f"~{g.prompt_tokens:,} prompt tokens, estimated from a seeded sample"
    )
    trace = f" after a trace of up to {g.reasoning_tokens:,}" if g.reasoning_tokens else ""
    print(
        f"generation ({task}): {g.requests:,} requests, {g.unique:,} unique, {g.cache_hits:,} in the cache, "
        f"{g.to_generate:,} to generate ({tokens}); up to {g.max_new_tokens:,} new tokens a request{trace}"
    )
    seconds = "unknown" if g.estimated_seconds is None else _duration(g.estimated_seconds)
    print(f"estimated generation time: {seconds} ({g.calibration})")
    print("one rendered prompt:")
    print("\n".join(f"  | {line}" for line in g.example_prompt.splitlines()))


def _duration(seconds: float) -> str:
    """``3 h 05 min``, ``4 min 10 s``, ``12.5 s``: the precision an estimate deserves."""
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{seconds:.1f} s"
