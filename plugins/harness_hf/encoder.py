"""The ``hf-encoder`` model: any local transformers checkpoint as a dual encoder.

Each batch is tokenised, padded to its longest text, pooled (first token or attention-masked
mean) and optionally L2-normalised. The runner's encoding service hands it batches of similar
length (see :mod:`harness.models.encoding`), so padding stays small; ``token_lengths`` tells the service
how long each text is, and the features it computed for that are kept for the encode that
follows, so every text is tokenised once (on XQuAD-R's 26,034 texts a second pass cost ~25 s).
Prefixes (e5's ``query: ``/``passage: ``) and maximum lengths are per role.

Precision: ``auto`` is bfloat16 (float16 where bf16 is unsupported) on a GPU and float32 on a
CPU; ``precision=bfloat16`` on a CPU with native bf16 (AVX512-BF16, AMX) runs the linear layers
about 5x faster than float32 (``benchmarks/bench_encoder_backends.py``). On a GPU batches travel
through pinned memory with non-blocking copies. ``engine=openvino`` runs a CPU's forward on
OpenVINO instead of torch (:mod:`harness_hf.openvino_engine`); with ``static_step=N`` each batch is
padded to a multiple of N tokens and OpenVINO compiles a static-shape graph per length (an
experiment for AMX, whose tile products OpenVINO's attention kernels use only at static sizes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from harness.plugin import Encoder, HarnessError, ModelIdentity, Role, Runtime, default_threads
from harness_hf.checkpoint import CheckpointModel, Precision
from harness_hf.openvino_engine import OpenVinoForward
from harness_hf.packed import PackedBert, matmul_parameters
from harness_hf.sources import EncoderSettings, Pooling, encoder_defaults, resolve_source
from harness_hf.tokens import TokenizerFile

Text = str | tuple[str, str]
#: What runs the forward pass: torch (packed on a CPU), or OpenVINO on a CPU.
Engine = Literal["torch", "openvino"]
#: Feature arrays a batch is padded from; ``input_ids`` pads with the tokenizer's pad id.
FEATURES = ("input_ids", "attention_mask", "token_type_ids")
#: Texts per tokeniser call. A fast tokeniser's answer holds about 50 KB of Python and Rust objects
#: per 100-word passage until its ids are copied out; 4,096 passages at once took 200 MB, and the
#: freed blocks left the heap of a long corpus encoding growing by about 20 MB a minute.
TOKENIZE_CHUNK = 256


def encoder_flops(
    lengths: Sequence[int], *, matmul_parameters: int, layers: int, hidden: int, window: int | None = None
) -> float:
    """FLOPs of a transformer encoder on texts of these (real) token lengths: 2 x the
    non-embedding matrix parameters per token, plus attention's two products, 4 x (attended
    length) x hidden per token and layer; ``window`` caps the attended length (windowed engines)."""
    tokens = np.asarray(lengths, dtype=np.float64)
    attended = tokens if window is None else np.minimum(tokens, window)
    return float(2 * matmul_parameters * tokens.sum() + 4 * layers * hidden * (tokens * attended).sum())


class HFEncoder(CheckpointModel):
    """An :class:`~harness.definitions.protocols.Encoder` over a checkpoint folder's encoder and tokenizer."""

    provides = frozenset({Encoder})
    #: Measured on an H200 (``benchmarks/bench_encoder_peak.py``, e5-small's shape, 4,096 XQuAD-R
    #: candidates, bf16): batches of 32 encoded 82k tokens/s, 4.8% of the matmul peak, the GPU
    #: waiting on each small launch; batches of 256 encoded 777k tokens/s, 37%. Memory is no
    #: bound at this size (256 x 512 tokens), and a batch too large halves itself (AdaptiveBatcher).
    gpu_batch_size = 256

    def __init__(
        self,
        *,
        runtime: Runtime,
        path: Path,
        pooling: Pooling | None = None,
        normalize: bool | None = None,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        query_max_length: int | None = None,
        passage_max_length: int | None = None,
        precision: Precision = "auto",
        engine: Engine = "torch",
        static_step: int | None = None,
        label: str | None = None,
        cpu_auto: str = "float32",
    ) -> None:
        """Options left unset take the sentence-transformers folder's settings where ``path`` is
        one (its pooling, Normalize module, prompts and max_seq_length: the model is used as it
        was trained), else mean pooling, normalised, no prefixes, 512 tokens. ``engine``: torch
        (the packed forward on a CPU, transformers' on a GPU), or openvino (a CPU's, fused:
        :mod:`harness_hf.openvino_engine`); ``static_step`` (openvino only): pad batches to
        multiples of this many tokens, one static-shape graph per length."""
        if static_step is not None and (engine != "openvino" or static_step < 1):
            raise HarnessError(
                f"model {self.name or 'hf-encoder'}: static_step needs engine=openvino and a positive "
                f"number of tokens, not static_step={static_step} with engine={engine}"
            )
        self.engine_name, self.static_step = engine, static_step
        settings = encoder_defaults(resolve_source(path, f"model {self.name or 'hf-encoder'}"))
        default = settings or EncoderSettings(
            folder=Path(path), pooling="mean", normalize=True, max_length=None, query_prefix="", passage_prefix=""
        )
        super().__init__(runtime=runtime, path=path, precision=precision, label=label, cpu_auto=cpu_auto)
        self.pooling = pooling if pooling is not None else default.pooling
        self.normalizes = normalize if normalize is not None else default.normalize
        self.prefix = {
            "query": query_prefix if query_prefix is not None else default.query_prefix,
            "passage": passage_prefix if passage_prefix is not None else default.passage_prefix,
        }
        length = default.max_length or 512
        self.max_length = {"query": query_max_length or length, "passage": passage_max_length or length}
        self.pad_id = int(self.tokenizer.pad_token_id or 0)
        #: Features of the texts of the last ``token_lengths`` call, for the encode that follows.
        self._tokenised: dict[tuple[Role, Text], dict[str, np.ndarray]] = {}
        if self.packed is not None:
            self._layers, self._hidden = len(self.packed.layers), self.packed.hidden
            self._matmul_parameters = self.packed.matmul_parameters
        elif self.openvino is None:  # (OpenVINO's converted model was counted as it loaded)
            self._count_flops_of(self.model)

    def load_tokenizer(self) -> Any:
        """``tokenizer.json`` read directly where that is what transformers would do
        (:mod:`harness_hf.tokens`), else ``AutoTokenizer``."""
        return TokenizerFile(self.path) if TokenizerFile.applies(self.path) else super().load_tokenizer()

    def load_model(self) -> Any:
        """On a CPU, for architectures it reproduces, the packed forward (:mod:`harness_hf.packed`),
        straight from the safetensors file when there is one: then transformers' model is not
        loaded at all (None) unless :meth:`use_transformers_forward` asks for it."""
        #: The packed forward, or None where transformers' padded forward runs.
        self.packed: PackedBert | None = None
        #: OpenVINO's forward (``engine=openvino``), or None.
        self.openvino: OpenVinoForward | None = None
        if self.engine_name == "openvino":
            if self.device != "cpu":
                raise HarnessError(
                    f"{self.owner}: engine=openvino runs on a CPU, not {self.device} (engine=torch does)"
                )
            model = self.load_weights(self._torch.float32)  # OpenVINO converts the float32 graph
            self._count_flops_of(model)
            self.openvino = OpenVinoForward(
                model,
                self._example(),
                precision=self.precision,
                threads=self.runtime.threads or default_threads(),
                owner=self.owner,
                static=self.static_step is not None,
            )
            return None  # OpenVINO holds its own weights
        if self.device == "cpu":
            self.packed = PackedBert.from_folder(self.path, self.dtype)
            if self.packed is not None:
                return None
        model = super().load_model()
        if self.device == "cpu" and PackedBert.supports(model.config.to_dict()):
            self.packed = PackedBert(model.config.to_dict(), model.state_dict())
        return model

    def use_transformers_forward(self) -> None:
        """Encode through transformers' padded forward from now on (benchmarks and tests compare
        the forwards)."""
        if self.model is None:
            self.model = super().load_model()
        self.packed = self.openvino = None

    def _count_flops_of(self, model: Any) -> None:
        """The shape :meth:`flop_count` counts with, from a transformers model."""
        config = model.config
        self._layers, self._hidden = int(config.num_hidden_layers), int(config.hidden_size)
        self._matmul_parameters = matmul_parameters(model.named_parameters())

    def _example(self) -> dict[str, Any]:
        """A one-pair batch with every input the tokenizer gives (OpenVINO's conversion traces it)."""
        features: list[dict[str, np.ndarray]] = [{}]
        self._keep(features, [0], self.tokenizer(["a"], ["b"], truncation=True, max_length=8))
        return {key: self._torch.from_numpy(value[None, :]) for key, value in features[0].items()}

    def identity(self) -> ModelIdentity:
        identity = self.checkpoint_identity(
            "hf-encoder",
            {
                "pooling": self.pooling,
                "normalize": self.normalizes,
                "query_prefix": self.prefix["query"],
                "passage_prefix": self.prefix["passage"],
                "query_max_length": self.max_length["query"],
                "passage_max_length": self.max_length["passage"],
                **({"engine": self.engine_name} if self.engine_name != "torch" else {}),
                **({"static_step": self.static_step} if self.static_step is not None else {}),
            },
        )
        identity.details["forward"] = (
            f"openvino {self.openvino.version}"
            if self.openvino is not None
            else "packed (harness_hf.packed)"
            if self.packed is not None
            else "transformers"
        )
        return identity

    # -- tokenising ---------------------------------------------------------------------------

    def _tokenize(self, texts: Sequence[Text], role: Role) -> list[dict[str, np.ndarray]]:
        """Features of each text; (sentence, paragraph) pairs become two segments. A suite's shared
        queue may mix single texts and pairs, so each kind is tokenised on its own."""
        prefix, kwargs = self.prefix[role], {"truncation": True, "max_length": self.max_length[role]}
        features: list[dict[str, np.ndarray]] = [{} for _ in texts]
        single_texts = {i: t for i, t in enumerate(texts) if isinstance(t, str)}
        singles = list(single_texts)
        pairs = [i for i, t in enumerate(texts) if not isinstance(t, str)]
        for start in range(0, len(singles), TOKENIZE_CHUNK):
            part = singles[start : start + TOKENIZE_CHUNK]
            self._keep(features, part, self.tokenizer([prefix + single_texts[i] for i in part], **kwargs))
        for start in range(0, len(pairs), TOKENIZE_CHUNK):
            part = pairs[start : start + TOKENIZE_CHUNK]
            self._keep(
                features,
                part,
                self.tokenizer([prefix + texts[i][0] for i in part], [texts[i][1] for i in part], **kwargs),
            )
        return features

    @staticmethod
    def _keep(features: list[dict[str, np.ndarray]], positions: list[int], encoded: Any) -> None:
        """The model's inputs of a tokeniser call as arrays (the call's Python objects are dropped)."""
        keys = [k for k in FEATURES if k in encoded]
        for row, position in enumerate(positions):
            features[position] = {k: np.asarray(encoded[k][row], dtype=np.int64) for k in keys}

    def token_lengths(self, texts: Sequence[Text], *, role: Role) -> list[int]:
        """Real (truncated) token counts; the features are kept for the :meth:`encode` that follows."""
        features = self._tokenize(texts, role)
        self._tokenised = {(role, text): f for text, f in zip(texts, features)}
        return [len(f["input_ids"]) for f in features]

    def _features(self, texts: Sequence[Text], role: Role) -> list[dict[str, np.ndarray]]:
        """Features from the last :meth:`token_lengths` call where it covered the text (taken out,
        so they are held only until encoded), else fresh."""
        known = [self._tokenised.pop((role, text), None) for text in texts]
        missing = [texts[i] for i, f in enumerate(known) if f is None]
        fresh = iter(self._tokenize(missing, role) if missing else [])
        return [f if f is not None else next(fresh) for f in known]

    def _pad(self, features: Sequence[dict[str, np.ndarray]]) -> dict[str, Any]:
        """One batch as tensors, right-padded to its longest text (numpy, no per-token Python), or
        with ``static_step`` to the next multiple of it (at most the longest length allowed)."""
        torch = self._torch
        width = max(len(f["input_ids"]) for f in features)
        if self.static_step is not None:
            width = min(-(-width // self.static_step) * self.static_step, max(self.max_length.values()))
        batch = {}
        for key in features[0]:
            block = np.full((len(features), width), self.pad_id if key == "input_ids" else 0, dtype=np.int64)
            for row, f in enumerate(features):
                block[row, : len(f[key])] = f[key]
            batch[key] = torch.from_numpy(block)
        return self.to_device(batch)

    # -- encoding -----------------------------------------------------------------------------

    @property
    def compute_dtype(self) -> str:
        """The precision the matrix products run in (for the share of the machine's peak)."""
        return self.precision

    def flop_count(self, lengths: Sequence[int]) -> float:
        """FLOPs to encode texts of these (real) token lengths (see :func:`encoder_flops`)."""
        return encoder_flops(
            lengths, matmul_parameters=self._matmul_parameters, layers=self._layers, hidden=self._hidden
        )

    def _hidden_states(self, features: Sequence[dict[str, np.ndarray]]) -> tuple[Any, np.ndarray]:
        """The last hidden states of a batch's tokens end to end (``[tokens, hidden]``, float32)
        and each text's start offset (one more at the end): packed on a CPU where the
        architecture allows it (:mod:`harness_hf.packed`), else a padded forward, OpenVINO's or
        transformers'."""
        if self.packed is not None:
            return self.packed(features)
        batch = self._pad(features)
        mask = batch["attention_mask"].bool()
        hidden = (
            self._torch.from_numpy(self.openvino(batch))
            if self.openvino is not None
            else self.model(**batch).last_hidden_state.float()
        )
        states = hidden[mask]  # right-padded: texts stay contiguous
        lengths = mask.sum(dim=1).cpu().numpy()
        return states, np.concatenate([[0], np.cumsum(lengths)])

    def encode(self, texts: Sequence[Text], *, role: Role, langs: Sequence[str] | None = None) -> np.ndarray:
        torch = self._torch
        features = self._features(texts, role)
        out = np.zeros((len(features), self._hidden), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(features), self.batch_size):
                states, offsets = self._hidden_states(features[start : start + self.batch_size])
                starts = torch.from_numpy(offsets[:-1])
                if self.pooling == "cls":
                    pooled = states[starts]
                else:
                    lengths = torch.from_numpy(np.diff(offsets))
                    text_of_token = torch.repeat_interleave(torch.arange(len(lengths)), lengths).to(states.device)
                    sums = torch.zeros(len(lengths), states.shape[1], device=states.device).index_add_(
                        0, text_of_token, states
                    )
                    pooled = sums / lengths.to(states.device).clamp(min=1).unsqueeze(1)
                if self.normalizes:
                    pooled = torch.nn.functional.normalize(pooled, dim=-1)
                out[start : start + len(pooled)] = pooled.cpu().numpy()
        return out
