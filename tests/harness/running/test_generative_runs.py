"""Generative runs end to end with a deterministic fake generator (tests/harness/fake_generator.py):
hand-computed EM/F1, MKQA's No-Answer probability and best-threshold F1, XOR-Full closed-book and
retrieval-augmented, reasoning traces kept in the records but never scored, shots, and the prompt
in the options and the scorer signature. Every run is scored again from its predictions file by
``harness score``, which must give the same numbers."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.definitions.model import Runtime
from harness.definitions.task import RunContext
from harness.demo import parallel_qa_dir
from harness.models.prompting import GenerativeQA, load_template
from harness.running.planning import load_data
from harness.running.settings import DataOptions
from harness.scoring.span_file import read_span_file
from harness_squad.xquad import XQuAD as XQuADTask
from tests.harness.fake_generator import FakeGenerator, question_of
from tests.torchrun import environment, harness_run

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture(autouse=True)
def _fake_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_PLUGINS", "tests.harness.fake_generator")


def write_replies(path: Path, replies: dict[str, tuple[str, float]]) -> Path:
    path.write_text(
        json.dumps({q: {"text": t, "logprob": lp} for q, (t, lp) in replies.items()}, ensure_ascii=False),
        encoding="utf-8",
    )
    return path


def result_of(tmp_path: Path, task: str) -> tuple[dict[str, Any], Path]:
    (path,) = [p for p in tmp_path.glob(f"results/{task}/**/result.json")]
    return json.loads(path.read_text(encoding="utf-8")), path.parent


def rows(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    return {row["subset"]: row["metrics"] for row in result["rows"]}


def scored_again(harness_cli: Cli, task: str, predictions: Path, *extra: str) -> dict[str, dict[str, float]]:
    code, out, err = harness_cli("score", task, "--predictions", predictions, "--no-leaderboard", "--json", *extra)
    assert code == 0, err
    return rows(json.loads(out)["results"][0]["result"])


def test_xquad_answers_are_scored_as_extracted_ones_and_traces_are_kept(harness_cli: Cli, tmp_path: Path) -> None:
    questions = read_span_file(parallel_qa_dir() / "en.json")
    # even questions: the gold answer after a reasoning trace (and text past the stop string);
    # odd ones: a wrong answer sharing no token with any gold answer
    replies = {
        q.question: (f"<think>Let me see.\nYes.</think> {q.answers[0]}\nExtra words" if i % 2 == 0 else "zzz qqq", -1.0)
        for i, q in enumerate(questions)
    }
    path = write_replies(tmp_path / "replies.json", replies)
    code, _, err = harness_cli("run", "xquad:prompt=qa", f"fake-generator:replies={path}", "--langs", "en", "--quiet")
    assert code == 0, err
    result, run_dir = result_of(tmp_path, "xquad")
    half = 100.0 * sum(1 for i in range(len(questions)) if i % 2 == 0) / len(questions)
    assert rows(result)["en"] == {"f1": half, "exact_match": half}
    assert result["task"]["options"] == {
        "prompt": "qa@1",
        "prompt_digest": load_template("qa").digest,
        "shots": 0,
        "shot_seed": 0,
    }
    assert result["task"]["scorer_signature"] == (
        f"squad-v1.1|norm:ascii-english|em+f1|avg:mean|prompt:qa@1#{load_template('qa').digest}|shots:0@0"
    )
    written = json.loads((run_dir / "predictions" / "en.json").read_text(encoding="utf-8"))
    assert written[questions[0].id] == questions[0].answers[0] and written[questions[1].id] == "zzz qqq"
    first = json.loads((run_dir / "instances.jsonl").read_text(encoding="utf-8").splitlines()[0])
    prompt = (
        f"Answer the question with a short span copied from the context.\n\nContext: {questions[0].context}\n"
        f"Question: {questions[0].question}\nAnswer:"
    )  # the qa template, rendered by hand
    assert first["prediction"] == {
        "answer": questions[0].answers[0],
        "reasoning": "Let me see.\nYes.",
        "ended": "stop",
        "prompt_sha256": hashlib.sha256(prompt.encode()).hexdigest(),
    }
    assert 'Generated with prompt qa@1, 0 shot(s); greedy, 32 new tokens, stop at "\\n".' in result["notes"]
    assert scored_again(harness_cli, "xquad", run_dir / "predictions", "--langs", "en") == rows(result)


def test_shots_come_from_the_pool_never_the_question_and_are_seeded() -> None:
    from harness_squad.xquad import XQuAD

    task = XQuAD(prompt="qa", shots=2, shot_seed=7)
    data = load_data(task, DataOptions(languages=("en",), limit=5))
    generator = FakeGenerator(runtime=Runtime(device_request="cpu"), replies=parallel_qa_dir() / "en.json")
    generator.replies = {}
    context = RunContext(Runtime(device_request="cpu"), show_progress=False)
    task.predict(GenerativeQA(generator), data, "en", context)
    prompts = {question_of(p): p for p in generator.prompts}  # generated longest first
    assert len(generator.prompts) == 5 and len(prompts) == 5
    for question in data.units["en"].questions:
        prompt = prompts[question.question]
        assert prompt.count("Question: ") == 3
        shots = prompt.split("Question: ")[1:3]
        assert not any(s.startswith(question.question + "\n") for s in shots)  # never the scored question
    # the pool is the whole file (--limit aside): 24 questions, so shots reach beyond the first 5
    pool_questions = {q.question for q in read_span_file(parallel_qa_dir() / "en.json")[5:]}
    assert any(s.split("\n")[0] in pool_questions for p in generator.prompts for s in p.split("Question: ")[1:3])
    again = FakeGenerator(runtime=Runtime(device_request="cpu"), replies=parallel_qa_dir() / "en.json")
    again.replies = {}
    task.predict(GenerativeQA(again), data, "en", RunContext(Runtime(device_request="cpu"), show_progress=False))
    assert again.prompts == generator.prompts  # same seed, same shots (a new service: nothing cached)
    other = XQuAD(prompt="qa", shots=2, shot_seed=8)
    assert other.scorer_signature() != task.scorer_signature()


def test_mkqa_no_answer_probability_comes_from_the_model(harness_cli: Cli, tmp_path: Path) -> None:
    from harness_mkqa.task import MKQA

    task = MKQA()
    data = load_data(task, DataOptions(languages=("en",)))
    annotations = data.annotations["en"]
    answerable = [i for i, a in enumerate(annotations) if a.answerable]
    wrong = answerable[0]
    replies = {}
    for i, (query, annotation) in enumerate(zip(data.queries["en"], annotations)):
        if not annotation.answerable:
            replies[query] = ("Unanswerable.", math.log(0.8))  # abstains: no_answer_prob = P(reply) = 0.8
        elif i == wrong:
            replies[query] = ("zzz", math.log(0.5))  # a wrong answer: 1 - 0.5
        else:
            replies[query] = (annotation.reference, math.log(0.9))  # right: 1 - 0.9
    path = write_replies(tmp_path / "replies.json", replies)
    code, _, err = harness_cli(
        "run", "mkqa:prompt=closed-book", f"fake-generator:replies={path}", "--langs", "en", "--quiet"
    )
    assert code == 0, err
    result, run_dir = result_of(tmp_path, "mkqa")
    lines = [json.loads(line) for line in (run_dir / "predictions" / "en.jsonl").read_text().splitlines()]
    expected = [0.8 if not a.answerable else 0.5 if i == wrong else 1 - 0.9 for i, a in enumerate(annotations)]
    assert [line["no_answer_prob"] for line in lines] == pytest.approx(expected)
    assert [line["prediction"] for line in lines if line["no_answer_prob"] == pytest.approx(0.8)] == [""] * (
        len(annotations) - len(answerable)
    )
    # every question right but the wrong one, whatever the threshold: best F1 = (n - 1) / n
    assert rows(result)["en"]["best_f1"] == round(100 * (len(annotations) - 1) / len(annotations), 2)
    assert scored_again(harness_cli, "mkqa", run_dir / "predictions", "--langs", "en") == rows(result)


XOR_QUESTIONS = [
    {"id": "1", "question": "Missä Eiffel-torni sijaitsee?", "answers": ["Paris"], "lang": "fi"},
    {"id": "2", "question": "Milloin Titanic upposi?", "answers": ["1912"], "lang": "fi"},
    {"id": "3", "question": "日本の首都は？", "answers": ["東京"], "lang": "ja"},
    {"id": "4", "question": "Является ли Москва столицей?", "answers": ["yes"], "lang": "ru"},
]


@pytest.fixture
def xor_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "xor"
    folder.mkdir()
    lines = [json.dumps({**q, "split": "dev"}, ensure_ascii=False) for q in XOR_QUESTIONS]
    (folder / "xor_dev_full_v1_1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_xor_full_closed_book_and_retrieval_augmented(harness_cli: Cli, xor_dir: Path, tmp_path: Path) -> None:
    replies = {
        "Missä Eiffel-torni sijaitsee?": ("Paris", 0.0),
        "Milloin Titanic upposi?": ("1912", 0.0),
        "日本の首都は？": ("大阪", 0.0),
        "Является ли Москва столицей?": ("yes", 0.0),
    }
    path = write_replies(tmp_path / "replies.json", replies)
    code, _, err = harness_cli(
        "run",
        "xor-full:prompt=closed-book",
        f"fake-generator:replies={path}",
        "--data-dir",
        xor_dir,
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 0, err
    result, run_dir = result_of(tmp_path, "xor-full")
    got = rows(result)
    # F1: fi 2/2, ja 0/1, ru 1/1; all = (1 + 0 + 1) / 7 * 100 (the official divisor)
    assert (got["fi"]["f1"], got["ja"]["f1"], got["ru"]["f1"]) == (100.0, 0.0, 100.0)
    assert got["all"]["f1"] == pytest.approx(200 / 7)
    assert scored_again(harness_cli, "xor-full", run_dir / "predictions.json", "--data-dir", xor_dir) == got

    corpus = tmp_path / "psgs.tsv"
    corpus.write_text(
        "id\ttext\ttitle\np0\tThe Eiffel Tower stands in Paris.\tParis\np1\tThe Titanic sank in 1912.\tTitanic\n",
        encoding="utf-8",
    )
    args = json.dumps({"corpus": str(corpus), "generator": f"fake-generator:replies={path}", "top_k": 1})
    code, _, err = harness_cli(
        "run",
        "xor-full",
        "retrieve-read",
        "--model-args",
        args,
        "--data-dir",
        xor_dir,
        "--quiet",
        "--no-leaderboard",
        "--output-dir",
        tmp_path / "rag",
    )
    assert code == 0, err
    (rag_result,) = (tmp_path / "rag").glob("**/result.json")
    records = [json.loads(line) for line in (rag_result.parent / "instances.jsonl").read_text().splitlines()]
    assert all(len(r["prediction"]["passages"]) == 1 for r in records)  # the passage in each prompt, kept
    assert rows(json.loads(rag_result.read_text()))["fi"]["f1"] == 100.0
    assert json.loads(rag_result.read_text())["task"]["options"]["prompt"] == "rag@1"  # the default with passages
    # the inner generator's work is in the execution record, one prompt a question
    generation = json.loads(rag_result.read_text())["provenance"]["execution"]["generation"]
    assert generation["requested"] == generation["generated"] == len(records) == 4
    code, _, err = harness_cli(
        "run",
        "xor-full:prompt=closed-book",
        "retrieve-read",
        "--model-args",
        args,
        "--data-dir",
        xor_dir,
        "--quiet",
        "--no-leaderboard",
    )
    assert code == 2 and "does not show them (prompt=rag)" in err


def test_prompts_and_models_that_do_not_go_together_are_one_line(harness_cli: Cli, tmp_path: Path) -> None:
    replies = write_replies(tmp_path / "replies.json", {})
    bad = tmp_path / "bad.json"
    template = json.loads(load_template("qa").path.read_text(encoding="utf-8"))
    bad.write_text(json.dumps({**template, "example": "Context: {context}\nAnswer:"}), encoding="utf-8")
    code, _, err = harness_cli("run", f"xquad:prompt={bad}", f"fake-generator:replies={replies}", "--quiet")
    assert code == 2 and err.strip().splitlines()[-1] == (
        f"error: {bad}: field 'example': task xquad fills in {{question}}, which the example does not show"
    )
    del template["stop"]
    bad.write_text(json.dumps(template), encoding="utf-8")
    code, _, err = harness_cli("run", f"xquad:prompt={bad}", f"fake-generator:replies={replies}", "--quiet")
    assert code == 2 and err.strip().splitlines()[-1] == f"error: {bad}: field 'stop': missing"


def test_a_prompt_change_changes_the_scorer_signature(tmp_path: Path) -> None:
    from harness_mlqa.task import MLQA

    assert MLQA().scorer_signature() == "mlqa|norm:mlqa-context|em+f1|avg:mean"  # extractive runs: unchanged
    assert MLQA().options() == {"mode": "xlt"}
    edited = tmp_path / "qa.json"
    template = json.loads(load_template("qa").path.read_text(encoding="utf-8"))
    edited.write_text(json.dumps({**template, "instruction": {"en": "Answer briefly."}}), encoding="utf-8")
    signatures = {
        MLQA(prompt="qa").scorer_signature(),
        MLQA(prompt=str(edited)).scorer_signature(),
        MLQA(prompt="qa", shots=1).scorer_signature(),
    }
    assert len(signatures) == 3  # same name and version, other text: still another signature


def test_a_suite_shares_one_generation_service_and_a_rerun_reads_its_cache(harness_cli: Cli, tmp_path: Path) -> None:
    """The runner puts one generation service in front of the loaded generator, as it puts the
    encoding queue in front of an encoder: its statistics reach every result, and a second run
    with the same cache folder generates nothing."""
    questions = read_span_file(parallel_qa_dir() / "en.json")
    path = write_replies(tmp_path / "replies.json", {q.question: (q.answers[0], -1.0) for q in questions})
    args = (
        "run",
        "xquad:prompt=qa",
        f"fake-generator:replies={path}",
        "--langs",
        "en",
        "--quiet",
        "--json",
        "--cache-dir",
        tmp_path / "cache",
        "--bootstrap",
        "0",
    )

    def generation() -> dict[str, Any]:
        code, out, err = harness_cli(*args)
        assert code == 0, err
        return json.loads(out)["results"][0]["result"]["provenance"]["execution"]["generation"]

    first, second = generation(), generation()
    assert first["unique"] == len(questions) and first["generated"] == len(questions) and first["cache_hits"] == 0
    assert second["cache_hits"] == len(questions) and second["generated"] == 0


@pytest.mark.slow
def test_two_gloo_ranks_share_the_generation_and_give_the_single_process_scores(tmp_path: Path) -> None:
    """Under torchrun each rank generates its batches and the completions are gathered: the ranks'
    shares add up to every question once (each rank generating all would be twice), the scores
    are one process's, and the cache written by rank 0 holds every completion."""
    questions = read_span_file(parallel_qa_dir() / "en.json")
    replies = {q.question: (q.answers[0] if i % 3 else "zzz", -1.0) for i, q in enumerate(questions)}
    path = write_replies(tmp_path / "replies.json", replies)
    args = [
        "xquad:prompt=qa",
        f"fake-generator:replies={path}",
        "--langs",
        "en",
        "--quiet",
        "--batch-size",
        "3",
        "--bootstrap",
        "0",
    ]
    env = environment()
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
    shares = [rank["generation"]["generated"] for rank in execution["ranks"]]
    assert min(shares) > 0 and sum(shares) == execution["all_ranks"]["generation"]["generated"] == len(questions)
    cached = [
        json.loads(line)["key"]
        for shard in (tmp_path / "cache").rglob("*.jsonl")
        for line in shard.read_text(encoding="utf-8").splitlines()
    ]
    assert len(cached) == len(set(cached)) == len(questions)


def test_a_python_generator_object_gets_its_trace_stripped_and_its_answer_cut() -> None:
    """Issue 33: ``generate`` returning "<think>...</think> Volga" scored F1 0.286 as it was; the
    harness finishes an object's completions as every engine's (trace off, cut at "\\n" after it)."""
    import harness
    from harness.definitions.protocols import Generation

    questions = {q.question: q.answers[0] for q in read_span_file(parallel_qa_dir() / "en.json")}

    class Reasoner:
        def generate(self, requests):
            out = []
            for i, request in enumerate(requests):
                gold = questions[question_of(request.prompt)]
                raw = f"<think>The context says\n{gold}.</think>\n\n{gold}\nmore words"
                out.append(raw if i % 2 else Generation(raw))  # a text or an unfinished Generation
            return out

    (outcome,) = harness.evaluate("xquad:prompt=qa", Reasoner(), langs="en", progress=False, bootstrap=0)
    assert outcome.result.rows[1].metrics == {"f1": 100.0, "exact_match": 100.0}
    first = outcome.instances[0].prediction
    assert first["answer"] == first["reasoning"].split("\n")[1].rstrip(".")


def test_a_generator_runs_with_the_tasks_default_prompt_named_in_the_result(harness_cli: Cli, tmp_path: Path) -> None:
    questions = read_span_file(parallel_qa_dir() / "en.json")
    path = write_replies(tmp_path / "replies.json", {q.question: (q.answers[0], 0.0) for q in questions})
    code, _, err = harness_cli("run", "xquad", f"fake-generator:replies={path}", "--langs", "en", "--quiet")
    assert code == 0, err
    result, _ = result_of(tmp_path, "xquad")
    explicit = XQuADTask(prompt="qa")
    assert result["task"]["options"] == explicit.options() and result["task"]["options"]["prompt"] == "qa@1"
    assert result["task"]["scorer_signature"] == explicit.scorer_signature()  # the default is named, as if chosen
    assert any(
        note.startswith("Generated with prompt qa@1 (xquad's default; prompt=NAME chooses another)")
        for note in result["notes"]
    )
    assert rows(result)["en"]["f1"] == 100.0


def test_generation_options_from_the_command_line_are_recorded_and_the_prompts_logged(
    harness_cli: Cli, tmp_path: Path
) -> None:
    from harness.errors import HarnessError

    questions = read_span_file(parallel_qa_dir() / "en.json")
    path = write_replies(tmp_path / "replies.json", {q.question: (f"{q.answers[0]}. More", 0.0) for q in questions})
    code, _, err = harness_cli(
        "run",
        "xquad",
        f"fake-generator:replies={path}",
        "--langs",
        "en",
        "--quiet",
        "--gen-kwargs",
        "max_new_tokens=8,stop=.,stop=\\n",
        "--system-prompt",
        "Be brief.",
        "--log-samples",
    )
    assert code == 0, err
    result, run_dir = result_of(tmp_path, "xquad")
    assert result["task"]["options"]["generation"] == {"max_new_tokens": 8, "stop": [".", "\n"], "system": "Be brief."}
    from harness.files.io import sha256_text

    # the signature names the system prompt by a digest of its text
    assert result["task"]["scorer_signature"].endswith(
        f'|gen:max_new_tokens=8,stop=[".", "\\n"],system="{sha256_text("Be brief.")[:12]}"'
    )
    assert rows(result)["en"]["f1"] == 100.0  # cut at the "." the options added
    first = json.loads((run_dir / "instances.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["prediction"]["prompt"].endswith(f"Question: {questions[0].question}\nAnswer:")
    assert first["prediction"]["prompt_sha256"] == hashlib.sha256(first["prediction"]["prompt"].encode()).hexdigest()
    code, _, err = harness_cli("run", "xquad", f"fake-generator:replies={path}", "--gen-kwargs", "temp=1", "--quiet")
    assert code == 2 and "unknown option 'temp'" in err
    # the task is made again from the result's options (prompt label and digest, generation options)
    code, out, err = harness_cli("validate", run_dir / "result.json", "--rescore")
    assert code == 0 and "are what its predictions score" in out, err
    from harness_squad.xquad import XQuAD

    with pytest.raises(HarnessError, match="the template changed"):
        XQuAD(prompt="qa@1", prompt_digest="0" * 12)
    with pytest.raises(HarnessError, match="the installed qa is version 1"):
        XQuAD(prompt="qa@7")


def test_several_samples_report_the_spread_of_the_main_score() -> None:
    import harness

    questions = {q.question: q.answers[0] for q in read_span_file(parallel_qa_dir() / "en.json")}

    class Sampler:  # right with an even seed, wrong with an odd one
        def generate(self, requests):
            return [questions[question_of(r.prompt)] if r.options.seed % 2 == 0 else "zzz" for r in requests]

    (outcome,) = harness.evaluate(
        "xquad", Sampler(), langs="en", progress=False, bootstrap=0, gen_kwargs={"temperature": 0.7, "samples": 3}
    )
    samples = outcome.result.diagnostics["generation"]["samples"]
    assert samples["main_scores"] == [100.0, 0.0, 100.0]  # seeds 0, 1, 2
    assert samples["std"] == pytest.approx(57.735, abs=1e-3) and samples["mean"] == pytest.approx(200 / 3)
    assert any(note.startswith("Main score over 3 samples: mean 66.6667, std 57.735") for note in outcome.result.notes)
    assert outcome.instances[0].prediction["samples"] == ["zzz", questions[next(iter(questions))]]


def test_a_shot_never_comes_from_the_scored_questions_own_article() -> None:
    from harness_squad.xquad import XQuAD

    questions = read_span_file(parallel_qa_dir() / "en.json")
    article = {q.question: q.article for q in questions}
    assert len(set(article.values())) > 1  # the demo file has several articles to draw from
    task = XQuAD(prompt="qa", shots=3, shot_seed=1)
    data = load_data(task, DataOptions(languages=("en",)))
    generator = FakeGenerator(runtime=Runtime(device_request="cpu"), replies=parallel_qa_dir() / "en.json")
    generator.replies = {}
    task.predict(GenerativeQA(generator), data, "en", RunContext(Runtime(device_request="cpu"), show_progress=False))
    assert len(generator.prompts) == len(questions)
    for prompt in generator.prompts:
        asked, *shots = reversed([part.split("\n")[0] for part in prompt.split("Question: ")[1:]])
        assert len(shots) == 3 and all(article[shot] != article[asked] for shot in shots)
    assert task.shot_source(data).startswith("the scored file itself (xquad has no dev split)")


def test_a_dry_run_of_a_generator_shows_a_prompt_its_tokens_the_budget_and_a_time(
    harness_cli: Cli, tmp_path: Path
) -> None:
    questions = read_span_file(parallel_qa_dir() / "en.json")
    path = write_replies(tmp_path / "replies.json", {})
    code, out, err = harness_cli(
        "run",
        "xquad",
        f"fake-generator:replies={path}",
        "--langs",
        "en",
        "--dry-run",
        "--gen-kwargs",
        "reasoning_tokens=64,max_new_tokens=16",
    )
    assert code == 0, err
    rendered = [
        f"Answer the question with a short span copied from the context.\n\nContext: {q.context}\n"
        f"Question: {q.question}\nAnswer:"
        for q in questions
    ]  # the qa template, by hand
    words = sum(len(prompt.split()) for prompt in rendered)  # the fake model's tokens are words
    assert (
        f"generation (xquad): {len(questions)} requests, {len(questions)} unique, 0 in the cache, "
        f"{len(questions)} to generate ({words:,} prompt tokens); up to 16 new tokens a request after a trace "
        "of up to 64"
    ) in out
    assert "estimated generation time: " in out and "for a batch of 4 sample prompt(s)" in out
    shown = "\n".join(f"  | {line}" for line in rendered[0].splitlines())  # the first question's prompt
    assert f"one rendered prompt:\n{shown}\n" in out
    assert not list(tmp_path.glob("results/**/result.json"))  # nothing run, nothing written


def test_answers_in_another_script_are_said_under_the_table(harness_cli: Cli, xor_dir: Path, tmp_path: Path) -> None:
    """Issue 31 item 5: a model answering Japanese questions in English scores low F1 for a reason
    the table now says; yes/no labels and digits are no evidence either way."""
    replies = {
        "Missä Eiffel-torni sijaitsee?": ("Pariisi", 0.0),
        "Milloin Titanic upposi?": ("1912", 0.0),
        "日本の首都は？": ("Tokyo", 0.0),
        "Является ли Москва столицей?": ("yes", 0.0),
    }
    path = write_replies(tmp_path / "replies.json", replies)
    code, out, err = harness_cli(
        "run", "xor-full", f"fake-generator:replies={path}", "--data-dir", xor_dir, "--no-leaderboard"
    )
    assert code == 0, err
    result, _ = result_of(tmp_path, "xor-full")
    assert result["diagnostics"]["answer_script"] == {"fi": 1.0, "ja": 0.0, "ru": None}
    note = (
        "Few answers are written in the script of the language scored: ja 0% of the answers with letters "
        "(diagnostics.answer_script): the model may answer in another language."
    )
    assert note in result["notes"] and note in out


def test_generation_options_for_a_model_that_does_not_generate_are_one_line() -> None:
    import harness
    from harness.errors import HarnessError

    def reader(question: str, context: str) -> str:
        return context.split()[0]

    with pytest.raises(
        HarnessError,
        match=r"task xquad: generation options \(gen_kwargs, system_prompt\) are for "
        "generative models; CallableReader does not generate",
    ):
        harness.evaluate("xquad", reader, langs="en", progress=False, gen_kwargs="max_new_tokens=5")
    (outcome,) = harness.evaluate("xquad", reader, langs="en", progress=False, bootstrap=0)
    assert outcome.result.task.options == {} and "generation" not in outcome.result.diagnostics  # as ever


def test_the_spread_of_several_samples_is_printed_beside_the_main_score(harness_cli: Cli, tmp_path: Path) -> None:
    questions = read_span_file(parallel_qa_dir() / "en.json")
    path = write_replies(tmp_path / "replies.json", {q.question: (q.answers[0], 0.0) for q in questions})
    code, out, err = harness_cli(
        "run",
        "xquad",
        f"fake-generator:replies={path}",
        "--langs",
        "en",
        "--bootstrap",
        "0",
        "--gen-kwargs",
        "temperature=0.5,samples=2",
    )
    assert code == 0, err
    # the fake model answers alike whatever the seed: both samples score 100, their spread 0
    assert "main score: f1 (%) = 100  (over 2 samples: mean 100, std 0)" in out


def test_a_python_generator_objects_unclosed_traces_are_counted_not_silent() -> None:
    import harness

    questions = read_span_file(parallel_qa_dir() / "en.json")
    gold = {q.question: q.answers[0] for q in questions}

    rambles = set(sorted(gold)[::3])  # every third question (in text order): a trace that never closes

    class Rambler:
        def generate(self, requests):
            return [
                f"<think>{'hmm ' * 50}"
                if question_of(r.prompt) in rambles
                else f"<think>ok</think> {gold[question_of(r.prompt)]}"
                for r in requests
            ]

    (outcome,) = harness.evaluate("xquad", Rambler(), langs="en", progress=False, bootstrap=0)
    unclosed = len(rambles)
    counts = outcome.result.diagnostics["generation"]["answers"]["en"]
    assert (counts["answers"], counts["empty"], counts["trace_open"]) == (len(gold), unclosed, unclosed)
    assert (
        f"{unclosed} of {len(gold)} answers empty: trace not closed within 32 tokens: give the trace a budget "
        "of its own (--gen-kwargs reasoning_tokens=N)"
    ) in outcome.result.notes
    assert outcome.result.rows[1].metrics["exact_match"] == 100 * (len(gold) - unclosed) / len(gold)
