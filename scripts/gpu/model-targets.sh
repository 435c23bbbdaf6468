#!/usr/bin/env bash
# The model step-time targets: each target model's training and inference steps on the H200 through
# ocl against cuda in the same command, one precision part per device call (a part fits the 10-minute
# limit of one call), each model run's JSON in $OUT and a table of the part at the end, each row
# judged against its target ratio (ocltune_torch/bench/model_targets.py).
#
#   scripts/gpu/model-targets.sh fp32|defaults|fp16|bf16[,PART...]   (after `scripts/gpu/torch-backend.sh build`)
#
# fp32: TF32 off on both sides. defaults: PyTorch's defaults: cuDNN's TF32 on, which ocl's
# convolutions follow too (docs/decisions/0048: a tf32 configuration where its row is the faster).
# fp16 / bf16: the training steps under torch.autocast in that dtype. The batches are the targets':
# resnet50 32 (and 64 for inference), resnet18 64, mobilenet_v2 32, the encoder 8 x 512 (fused AdamW).
# On PoCL: BASELINE=cpu OCL=ocl:0 EXTRA="--size 32 --seq 16 --layers 2 --reps 1 --warmup 0" runs
# models.py directly against the CPU at toy sizes (the batches stay the targets').
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
parts=${1:?usage: $0 fp32|defaults|fp16|bf16[,PART...]}
out=${OUT:-/tmp/model-targets}
mkdir -p "$out"
extra=${EXTRA:-}
if [ -n "${BASELINE:-}" ]; then
  bench() { python3 ocltune_torch/bench/models.py --baseline "$BASELINE" --ocl "${OCL:-ocl:0}" "$@"; }
else
  bench() { scripts/gpu/torch-backend.sh bench -- "$@"; }
fi

# One part: its runs, then its table.
run_part() {
  local part=$1 precision common runs files run model modes batch json optimiser
  case $part in
    fp32 | defaults)
      precision=fp32
      [ "$part" = defaults ] && precision=default
      common=(--precision "$precision" --reps 5 --warmup 2)
      runs=("resnet50 training,inference 32" "resnet50 inference 64" "resnet18 training,inference 64"
            "mobilenet_v2 training,inference 32" "encoder training 8")
      ;;
    fp16 | bf16)
      common=(--precision default --autocast "$part" --reps 5 --warmup 2)
      runs=("resnet50 training 32" "resnet18 training 64" "mobilenet_v2 training 32" "encoder training 8")
      ;;
    *) echo "usage: $0 fp32|defaults|fp16|bf16[,PART...]" >&2; return 2 ;;
  esac

  files=()
  for run in "${runs[@]}"; do
    read -r model modes batch <<< "$run"
    json="$out/$part-$model-b$batch.json"
    optimiser=()
    [ "$model" = encoder ] && optimiser=(--fused-optimizer)
    # shellcheck disable=SC2086
    bench --models "$model" --modes "$modes" --batch "$batch" "${common[@]}" "${optimiser[@]}" --json "$json" $extra \
      | tail -n +3
    [ -f "$json" ] && files+=("$json")
  done
  python3 ocltune_torch/bench/model_targets.py --part "$part" "${files[@]}"
}

# Several parts in one call (each took 200-250 s on the H200, so two fit the 10-minute limit).
IFS=, read -r -a wanted <<< "$parts"
for part in "${wanted[@]}"; do run_part "$part" || exit $?; done
