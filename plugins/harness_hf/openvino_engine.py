"""An encoder's forward pass on OpenVINO's CPU plugin (``hf-encoder:engine=openvino``).

torch's eager forward runs each operator on its own: on a CPU whose matrix products are fast
(AVX512-BF16, and AMX still more), the softmax, norms, activations and copies between them take a
third of the time (``benchmarks/profile_encoder.py``). OpenVINO converts the checkpoint's float32
graph once, as the model loads (a few seconds, dynamic batch and length), and runs it with those
operators fused into its kernels, in the precision asked (its ``INFERENCE_PRECISION_HINT``).
Measured on the real XQuAD-R pool (``benchmarks/bench_encoder_backends.py --only
packed-bfloat16,openvino-bfloat16``, AMD EPYC with AVX512-BF16, 2 threads, 384 texts, 5 rounds
alternated, quiet): bf16 at 5,433 tokens/s against the packed torch forward's 5,188 (medians;
best 5,582 and 5,499), 59.9% of the bf16 matmul peak against 57.2%, its vectors closer to
float32's (cosine mean 0.99999, min 1.0000 to four places, against 0.99997 and 0.9999). Small
here, but a whole cold LAReQA run is 1.23x faster on it; on a CPU with AMX, where the products are
3.5x faster and torch's unfused rest holds the packed forward to 28-29% of the peak, it encoded
1.40x and 1.47x faster alternated with torch (6,273 and 7,112 tokens/s, e5-small's shape, 2
threads; ``benchmarks/profile_encoder.py``).
An optional extra: ``pip install ".[openvino]"``.

``static=True`` (``hf-encoder:engine=openvino,static_step=N``) compiles one graph per padded
length instead of one dynamic graph: OpenVINO's generated attention kernels (its "snippets")
take AMX's tile products only where the products' sizes are static (openvinotoolkit/openvino
PR #25495, ``jit_brgemm_utils``; read, not yet measured on AMX), and on AMX its dynamic
attention reported AVX-512 code for a third of the time. On this AVX-512 machine it does not pay
(``bench_encoder_peak.py``, e5-small, 1,024 XQuAD-R candidates, 2 threads, alternated twice,
quiet): ``static_step=64`` 5,542 and 5,698 tokens/s against the dynamic graph's 5,839 and 6,199,
the steps' padding counted as work not done (1.4-1.6 s of compiling in it). Each length costs a
compile (0.7 s at 64 tokens to 3.1 s at 512 for e5-small, with a first batch) and its buffers
(120 to 370 MB), so only the two lengths used last are kept (length-sorted batches reach each
length once a pass).
"""

from __future__ import annotations

import time
import warnings
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.plugin import HarnessError


def positional_encoder(model: Any, inputs: Sequence[str]) -> Any:
    """``model`` (a transformers encoder) as a torch module that takes the tensors named
    ``inputs`` by position and returns the last hidden states: the form graph exporters trace
    (OpenVINO's here, ONNX's in ``benchmarks/bench_encoder_backends.py``)."""
    import torch

    class Positional(torch.nn.Module):
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.encoder(**dict(zip(inputs, tensors))).last_hidden_state  # type: ignore[no-any-return]

    return Positional(model)


#: OpenVINO's name for each precision the harness's ``precision=`` option gives.
HINTS = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}
#: The CPU plugin's ``OPTIMIZATION_CAPABILITIES`` entry each precision needs. Where it is missing
#: the plugin computes in f32 without a word (seen on an AMD EPYC with AVX2 only: a bf16 hint ran
#: f32, vectors equal to float32's, so a run would be labelled and cached as bfloat16 and its peak
#: share taken against torch's emulated bf16 rate, 67x too high); so such a precision is refused.
CAPABILITIES = {"float32": "FP32", "bfloat16": "BF16", "float16": "FP16"}
#: Static-shape graphs kept compiled at once (``static=True``): the current length and the last.
STATIC_KEPT = 2


class OpenVinoForward:
    """The last hidden states of padded batches, from ``model`` (a float32 transformers encoder)
    converted to OpenVINO and compiled for the CPU in ``precision`` with ``threads`` threads.

    ``profile=True`` (``benchmarks/profile_encoder.py``) has OpenVINO time each of its operators
    (``PERF_COUNT``), summed over the batches into :attr:`operator_seconds` by operator type and
    the kernel OpenVINO chose for it: torch's profiler cannot see inside OpenVINO's graph.
    ``static=True`` compiles a graph per input length (batch size left dynamic) as batches of
    that length come (see the module's docstring). ``settings``: more of the CPU plugin's
    settings, for experiments (``benchmarks/profile_encoder.py --openvino-setting``)."""

    def __init__(
        self,
        model: Any,
        example: dict[str, Any],
        *,
        precision: str,
        threads: int,
        owner: str,
        profile: bool = False,
        static: bool = False,
        settings: dict[str, Any] | None = None,
    ) -> None:
        try:
            import openvino
        except ImportError:
            raise HarnessError(f'{owner}: engine=openvino needs OpenVINO: pip install ".[openvino]"') from None
        self.core = openvino.Core()
        native = self.core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        if CAPABILITIES[precision] not in native:
            raise HarnessError(
                f"{owner}: engine=openvino computes in f32 on this CPU, not {precision} (OpenVINO's CPU "
                f"plugin lists {', '.join(native)}: {precision} needs native support, e.g. AVX512-BF16 or "
                "AMX for bfloat16); use precision=float32 or auto"
            )
        import torch

        #: The inputs in the order the converted graph takes them (those the tokenizer gives).
        self.inputs = tuple(example)
        # tracing warns about every Python branch on a shape (the graph keeps them dynamic): noise
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = openvino.convert_model(
                positional_encoder(model, self.inputs), example_input=tuple(example.values())
            )
        self.settings: dict[str, Any] = {
            "INFERENCE_PRECISION_HINT": HINTS[precision],
            "INFERENCE_NUM_THREADS": threads,
            **({"PERF_COUNT": True} if profile else {}),
            **(settings or {}),
        }
        #: The float32 graph each static length is reshaped from (None: one dynamic graph).
        self.graph = graph if static else None
        #: The compiled graphs' requests: one dynamic (key None), or by static length, oldest first.
        self.requests: OrderedDict[int | None, Any] = OrderedDict()
        #: Seconds spent compiling static lengths as batches came (inside the encoding time).
        self.compile_seconds = 0.0
        if not static:
            self.requests[None] = self.core.compile_model(graph, "CPU", self.settings).create_infer_request()
        self.version = openvino.__version__
        #: Seconds by (operator type, kernel) over every batch since loading, when profiled.
        self.operator_seconds: Counter[tuple[str, str]] | None = Counter() if profile else None

    def __call__(self, batch: dict[str, Any]) -> np.ndarray:
        """``[texts, length, hidden]`` float32 for a right-padded batch of torch tensors."""
        request = self.request(batch[self.inputs[0]].shape[1])
        # the inputs read in place, the output copied out of the request's memory (infer's default)
        hidden = request.infer([batch[name].numpy() for name in self.inputs], share_inputs=True)[0]
        if self.operator_seconds is not None:
            for info in request.profiling_info:
                self.operator_seconds[(info.node_type, info.exec_type)] += info.real_time.total_seconds()
        return np.asarray(hidden, dtype=np.float32)

    def request(self, length: int) -> Any:
        """The infer request for batches of ``length`` tokens: the dynamic graph's, or the static
        graph of that length, compiled on first use (the least recently used one dropped)."""
        if self.graph is None:
            return self.requests[None]
        if length not in self.requests:
            import openvino

            start = time.perf_counter()
            shaped = self.graph.clone()
            shaped.reshape({port.get_any_name(): openvino.PartialShape([-1, length]) for port in shaped.inputs})
            self.requests[length] = self.core.compile_model(shaped, "CPU", self.settings).create_infer_request()
            self.compile_seconds += time.perf_counter() - start
            while len(self.requests) > STATIC_KEPT:
                self.requests.popitem(last=False)
        self.requests.move_to_end(length)
        return self.requests[length]
