#!/bin/bash
# runT.sh OP W|C : one real-model session, warm (source memory) or cold
op=$1; k=$2
cd REPO
hd=/tmp/kope-handoff/s5-$op-$k
mkdir -p $hd
if [ "$k" = W ]; then cfg=llm+memory; dbarg="--db /tmp/s5/source.db"; else cfg=llm-nomemory; dbarg=""; fi
build/kope bench --ops $op --configs $cfg $dbarg --budget-evals 8 --realtime \
  --llm-provider command --llm-cmd "scripts/llm-handoff.sh $hd" --llm-model claude \
  --out /tmp/s5/bench-$op-$k.json > /tmp/s5/bench-$op-$k.log 2>&1
echo "rc=$?" >> /tmp/s5/bench-$op-$k.log
touch $hd/STOP
