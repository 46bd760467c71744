#!/bin/bash
# final side-by-side evaluations (kope eval: candidate, reference and vendor interleaved)
cd /tmp/m2
ev() { # op label file
  build/kope eval $1 "$3" --seeds 2 --budget 0.1 --json > /tmp/s2/fin/$1-$2.json 2>/tmp/s2/fin/$1-$2.err
  python3 - "$1" "$2" /tmp/s2/fin/$1-$2.json <<'P'
import json, sys
op, lab, f = sys.argv[1:4]
try:
    d = json.load(open(f)); r = d["reports"][0] if "reports" in d else d
    print(f"{op:<10} {lab:<22} verdict={r.get('verdict')} accepted={r.get('accepted')} vs_ref={r.get('speedup_ref',0):.2f}x vs_vendor={(r.get('speedup_vendor') or 0):.3f}x roofline={(r.get('roofline_fraction') or 0):.3f}")
except Exception as e:
    print(op, lab, "error", e)
P
}
ev relu seed ops/relu/seed.c
ev relu llm-step1-unpromoted /tmp/s2/fin/relu-llm-step1.c
ev relu tuner /tmp/s2/benchA.d/tuner+memory/r0/relu.c
ev matmul seed ops/matmul/seed.c
ev matmul llm-step8-unpromoted /tmp/s2/fin/matmul-llm-step8.c
ev matmul tuner /tmp/s2/benchA.d/tuner+memory/r0/matmul.c
[ -f /tmp/s2/benchA.d/llm+memory/r0/sdpa.c ] && { ev sdpa seed ops/sdpa/seed.c; ev sdpa llm /tmp/s2/benchA.d/llm+memory/r0/sdpa.c; }
