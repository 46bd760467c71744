#!/bin/bash
cd REPO
for op in gelu layer_norm conv2d mlp_block; do
  build/kope optimize $op --policy llm --llm-provider replay \
    --llm-replay docs/data/llm-sessions/$op-2026-12-04-be0a9f3-nomemory.jsonl.gz \
    --budget-evals 8 --db /tmp/s5/source.db --json > /tmp/s5/src-$op.json 2> /tmp/s5/src-$op.err
  echo "$op rc=$?" >> /tmp/s5/mksource.log
done
echo done >> /tmp/s5/mksource.log
