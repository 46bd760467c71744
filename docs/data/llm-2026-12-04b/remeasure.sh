#!/bin/bash
# Side-by-side re-measurement of the sessions' final kernels with kope HEAD,
# --realtime (judge SCHED_FIFO 20, workers 19) and machine-wide timing turns.
K=/tmp/build-me/kope; OPS=/tmp/meas/ops; out=/tmp/s3/remeasure; mkdir -p $out
for op in ${OPS_LIST:-gelu layer_norm conv2d mlp_block}; do
  for spec in "seed:$OPS/$op/seed.c" "llm+memory:/tmp/s3/benchW.json.d/llm+memory/r0/$op.c" \
              "tuner+memory:/tmp/s3/benchW.json.d/tuner+memory/r0/$op.c" \
              "llm-nomemory:/tmp/s3/benchC.json.d/llm-nomemory/r0/$op.c" \
              "llm-passive:/tmp/s3/benchP.json.d/llm-passive/r0/$op.c" \
              "llm+tuner:/tmp/s3/benchT.json.d/llm+tuner/r0/$op.c" "llm+tuner:/tmp/s3/benchT2.json.d/llm+tuner/r0/$op.c"; do
    cfg=${spec%%:*}; f=${spec#*:}; [ -f "$f" ] || continue
    echo "$(date +%T) $(cut -d' ' -f1 /proc/loadavg) $op $cfg" >&2
    $K eval $op "$f" --ops-dir $OPS --seeds 2 --budget 0.1 --realtime --json > "$out/$op-$cfg.json" 2>"$out/$op-$cfg.err"
  done
done
