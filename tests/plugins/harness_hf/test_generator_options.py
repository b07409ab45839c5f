"""hf-generator's decoding options and log-likelihood scoring on the tiny random checkpoints:
sampling against a token-by-token reference that draws from its own seeded stream, the system
prompt in the chat template, why each row ended, the trace and answer budgets of a reasoning
completion, and ``loglikelihood`` against one plain forward pass per request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.definitions.model import Runtime
from harness.definitions.protocols import GenerationOptions, GenerationRequest, LoglikelihoodRequest
from harness.errors import HarnessError
from tests.plugins.harness_hf.test_generator import PROMPTS, generator
from tests.tiny_models import build_tiny_causal_lm


@pytest.fixture(scope="module")
def chat_lm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-chat-lm"), chat=True)


def test_sampling_draws_each_row_from_its_own_seeded_stream(tiny_causal_lm_dir: Path) -> None:
    import torch

    model = generator(tiny_causal_lm_dir)
    options = [GenerationOptions(6, temperature=0.8, seed=seed) for seed in range(4)]
    prompt = PROMPTS[0]
    # reference: one token at a time, no cache, no padding, softmax(logits / T), one draw per step
    # from a generator seeded with the request's seed
    for option in options[:2]:
        stream = torch.Generator().manual_seed(option.seed)
        ids = model.tokenizer(prompt, return_tensors="pt")["input_ids"]
        new = []
        with torch.inference_mode():
            for _ in range(6):
                probs = (model.model(ids).logits[0, -1] / option.temperature).softmax(-1)
                token = int(torch.multinomial(probs, 1, generator=stream))
                new.append(token)
                ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
                if token == model.tokenizer.eos_token_id:
                    break
        (alone,) = model.generate([GenerationRequest(prompt, option)])
        assert alone.text == model.tokenizer.decode(new, skip_special_tokens=True).strip()
    batched = model.generate([GenerationRequest(p, o) for o in options for p in PROMPTS[:3]])
    again = model.generate([GenerationRequest(p, o) for o in reversed(options) for p in reversed(PROMPTS[:3])])
    assert [g.text for g in batched] == [g.text for g in reversed(again)]  # batch and order change nothing
    assert len({g.text for g in batched[::3]}) > 1  # the seeds draw different samples of one prompt
    greedy = model.generate([GenerationRequest(prompt, GenerationOptions(6))])[0]
    assert greedy.text == model.generate([GenerationRequest(prompt, GenerationOptions(6, seed=5))])[0].text


def test_top_p_keeps_only_the_nucleus(tiny_causal_lm_dir: Path) -> None:
    import torch

    from harness_hf.generator import _RowSampler

    scores = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05], [0.05, 0.9, 0.03, 0.02]]))
    sampler = _RowSampler(GenerationOptions(temperature=1.0, top_p=0.7, seed=3), rows=2)
    drawn = [sampler(None, scores).argmax(-1).tolist() for _ in range(200)]
    assert {row[0] for row in drawn} == {0, 1}  # 0.5 + 0.3 reaches 0.7: the nucleus is the first two
    assert {row[1] for row in drawn} == {1}


def test_the_system_prompt_goes_into_the_chat_template(chat_lm_dir: Path, tiny_causal_lm_dir: Path) -> None:
    chat = generator(chat_lm_dir)
    assert chat.model_input("hi", "Be brief.") == "<|system|>Be brief.<|end|><|user|>hi<|end|><|assistant|>"
    assert generator(tiny_causal_lm_dir).model_input("hi", "Be brief.") == "Be brief.\n\nhi"
    with_system = GenerationRequest("hi", GenerationOptions(4, system="Be brief."))
    plain = chat.generate([GenerationRequest("hi", GenerationOptions(4))])[0]
    assert chat.generate([with_system])[0].prompt_tokens > plain.prompt_tokens


def test_each_row_says_why_it_ended(tiny_causal_lm_dir: Path) -> None:
    model = generator(tiny_causal_lm_dir)
    free = model.generate([GenerationRequest(p, GenerationOptions(12)) for p in PROMPTS[:8]])
    assert {g.ended for g in free} <= {"eos", "length"}
    assert all(g.ended == "length" for g in free if g.new_tokens == 12 and not g.text.endswith("</s>"))
    prompt, full = next((p, g) for p, g in zip(PROMPTS, free) if len(g.text) > 4 and g.text[3] != g.text[:3])
    (cut,) = model.generate([GenerationRequest(prompt, GenerationOptions(12, (full.text[3],)))])
    assert cut.ended == "stop"
    (short,) = model.generate([GenerationRequest(prompt, GenerationOptions(2))])
    assert (short.new_tokens, short.ended) == (2, "length")


def _ends(model: Any, completion: str, options: GenerationOptions) -> tuple[int, str] | None:
    """Feed ``completion``'s tokens one at a time to the stopping criterion, as generate does;
    (tokens, reason) of the step it ends the row at, None if it never does."""
    import torch

    from harness_hf.generator import _RowEnds

    ids = model.tokenizer(completion, add_special_tokens=False)["input_ids"]
    prompt = [5, 6, 7]
    ends = _RowEnds(model.tokenizer, options, "</think>", len(prompt), 1)
    for k in range(1, len(ids) + 1):
        if bool(ends(torch.tensor([prompt + ids[:k]]), None)[0]):
            return ends.ends[0].tokens, ends.ends[0].reason
    return None


def test_budgets_of_the_trace_and_the_answer(tiny_causal_lm_dir: Path) -> None:
    model = generator(tiny_causal_lm_dir)
    text = "<think>the river is long and wide</think>\n\nthe Volga river\nnext"
    ids = model.tokenizer(text, add_special_tokens=False)["input_ids"]
    decoded = [model.tokenizer.decode(ids[:k]) for k in range(len(ids) + 1)]
    closed = next(k for k, t in enumerate(decoded) if "</think>" in t)  # tokens when the trace closed
    volga = next(k for k, t in enumerate(decoded) if "Volga" in t)
    newline = next(k for k, t in enumerate(decoded) if t.count("\n") == 3)  # the first "\n" of the answer
    assert closed + 2 < volga < newline
    stop = ("\n",)
    # the newlines right after </think> never stop it; the one after the answer does
    assert _ends(model, text, GenerationOptions(64, stop, reasoning_tokens=64)) == (newline, "stop")
    # the answer's own budget counts from where the trace closed
    assert _ends(model, text, GenerationOptions(2, stop, reasoning_tokens=64)) == (closed + 2, "length")
    # the trace's budget spent while it is open: the row ends there
    assert _ends(model, text, GenerationOptions(64, stop, reasoning_tokens=closed - 2)) == (closed - 2, "length")
    # without a trace budget, the trace shares the answer's
    assert _ends(model, text, GenerationOptions(closed - 1, stop)) == (closed - 1, "length")
    assert _ends(model, text, GenerationOptions(closed + 2, stop)) == (closed + 2, "length")
    # a completion that opens no trace: the answer's budget from its first token
    plain = "the Volga river is long\nnext"
    assert _ends(model, plain, GenerationOptions(3, stop, reasoning_tokens=64)) == (3, "length")


def _reference(model: Any, request: LoglikelihoodRequest) -> tuple[float, int, bool]:
    """lm-evaluation-harness's recipe, written out: white space at the end of the context moves to
    the continuation, continuation tokens = tokens of the whole after the context's, one forward
    pass over them, no padding."""
    import torch

    continuation = request.continuation
    if not request.context and request.system is None:  # the start token alone, chat template or not
        start = model.tokenizer.bos_token_id
        head = [model.tokenizer.eos_token_id if start is None else start]
        tail = model.tokenizer(continuation, add_special_tokens=False)["input_ids"]
    else:
        context = model.model_input(request.context, request.system)
        spaces = len(context) - len(context.rstrip())
        if spaces:
            context, continuation = context[:-spaces], context[-spaces:] + continuation
        add = not model.chat
        head = model.tokenizer(context, add_special_tokens=add)["input_ids"]
        tail = model.tokenizer(context + continuation, add_special_tokens=add)["input_ids"][len(head) :]
    with torch.inference_mode():
        logprobs = model.model(torch.tensor([head + tail])).logits[0].float().log_softmax(-1)
    scores = logprobs[len(head) - 1 : -1]
    target = torch.tensor(tail)
    return float(scores.gather(-1, target[:, None]).sum()), len(tail), bool((scores.argmax(-1) == target).all())


def _own_continuation(model: Any) -> tuple[str, str]:
    """A prompt and the text of the model's next two greedy tokens, where that text tokenises back
    into the same two tokens after the prompt (a random model's tokens may be pieces of a character,
    which decode to "\ufffd"; the chat model's are whole)."""
    import torch

    add = not model.chat
    for prompt in PROMPTS:
        ids = model.tokenizer(model.model_input(prompt), add_special_tokens=add)["input_ids"]
        with torch.inference_mode():
            out = model.model.generate(torch.tensor([ids]), max_new_tokens=2, do_sample=False, pad_token_id=0)
        new = out[0, len(ids) :].tolist()
        text = model.tokenizer.decode(new)
        if model.tokenizer(model.model_input(prompt) + text, add_special_tokens=add)["input_ids"][len(ids) :] == new:
            return prompt, text
    raise AssertionError("no prompt's greedy continuation tokenises back into its own tokens")


@pytest.mark.parametrize("chat", [False, True])
def test_loglikelihood_matches_one_forward_pass_per_request(
    chat: bool, tiny_causal_lm_dir: Path, chat_lm_dir: Path
) -> None:
    model = generator(chat_lm_dir if chat else tiny_causal_lm_dir)
    model.batch_size = 3  # several batches, of mixed lengths
    greedy_prompt, greedy = _own_continuation(generator(chat_lm_dir))
    requests = [LoglikelihoodRequest(p, c) for p in PROMPTS[:4] for c in (" Paris", " the river Volga")]
    requests += [
        LoglikelihoodRequest(PROMPTS[0] + " ", "Paris"),  # trailing white space moves over
        LoglikelihoodRequest(greedy_prompt, greedy),
        LoglikelihoodRequest("", "Paris is big"),  # no context: the start token, not an empty chat turn
        LoglikelihoodRequest(PROMPTS[2], " Paris", system="Answer briefly."),
    ]
    scores = model.loglikelihood(requests)
    expected = [_reference(model, r) for r in requests]
    assert [s.tokens for s in scores] == [e[1] for e in expected]
    assert [s.logprob for s in scores] == pytest.approx([e[0] for e in expected], abs=1e-4)
    assert [s.greedy for s in scores] == [e[2] for e in expected]
    assert all(s.logprob < 0 for s in scores) and scores[-1].logprob != scores[4].logprob
    assert scores[0].logprob != pytest.approx(scores[1].logprob)
    assert scores[-3].greedy or not chat  # the chat model's own greedy continuation


def test_a_gguf_file_of_an_architecture_transformers_cannot_read_is_one_line(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    import numpy as np

    path = tmp_path / "odd.gguf"
    writer = gguf.GGUFWriter(str(path), arch="oddformer")
    writer.add_name("odd")
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    from harness_hf.generator import HFGenerator

    with pytest.raises(HarnessError, match=r"cannot read .*odd\.gguf \(architecture oddformer\)") as error:
        HFGenerator(runtime=Runtime(device_request="cpu", cache_dir=tmp_path / "cache"), path=path)
    assert "\n" not in str(error.value)
    assert not list((tmp_path / "cache" / "models").glob("*float32"))  # nothing half-written
    (tmp_path / "two").mkdir()
    for name in ("a.gguf", "b.gguf"):
        (tmp_path / "two" / name).write_bytes(path.read_bytes())
    with pytest.raises(HarnessError, match="holds 2 GGUF files"):
        HFGenerator(runtime=Runtime(device_request="cpu", cache_dir=tmp_path / "cache"), path=tmp_path / "two")
