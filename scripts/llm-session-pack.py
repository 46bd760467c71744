#!/usr/bin/env python3
"""Pack a file-handoff directory (scripts/llm-handoff.sh) into one recorded
session: gzip'd JSON Lines, a header object first, then one object per call
in call order (docs/llm.md, "Recorded sessions"):

  {"kope_llm_session": 1, "model": M, "answerer": A, "op": OP, "notes": N}
  {"call": 1, "request": {...req-0001.json...}, "reply": "...reply-0001.md..."}
  ...

A reply file that is one JSON object (content + usage, the command
provider's JSON form) is kept as its text; `kope --llm-provider replay`
reads it the same way the command provider does. Calls stop at the first
request without a reply (a session still waiting, or stopped).

  scripts/llm-session-pack.py DIR OUT.jsonl.gz --model M --answerer A --op OP [--notes N]
      [--first I] [--last J] [--skip-unanswered]
"""
import argparse
import gzip
import json
import os
import re
import sys


def calls(d, first=1, last=None, skip_unanswered=False):
    reqs = sorted(f for f in os.listdir(d) if re.fullmatch(r"req-\d{4}\.json", f))
    k = 0
    for i, name in enumerate(reqs, 1):
        if name != "req-%04d.json" % i:
            sys.exit("llm-session-pack: %s: calls are not numbered 1..n (%s)" % (d, name))
        if i < first or (last is not None and i > last):
            continue
        reply = os.path.join(d, "reply-%04d.md" % i)
        if not os.path.isfile(reply):
            if skip_unanswered:
                print("llm-session-pack: request %d has no reply (timed out); left out" % i,
                      file=sys.stderr)
                continue
            print("llm-session-pack: call %d has no reply; stopping there" % i, file=sys.stderr)
            return
        with open(os.path.join(d, name), encoding="utf-8") as f:
            try:
                request = json.load(f)
            except ValueError as e:
                sys.exit("llm-session-pack: %s: %s" % (name, e))
        with open(reply, encoding="utf-8") as f:
            k += 1
            yield {"call": k, "handoff_request": i, "request": request, "reply": f.read()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--model", required=True, help="the model that answered")
    ap.add_argument("--answerer", required=True, help="who relayed the replies (a person, a runner)")
    ap.add_argument("--op", required=True, help="the operator optimized")
    ap.add_argument("--notes", default="", help="free text: commit, settings, anything to know")
    ap.add_argument("--first", type=int, default=1,
                    help="first request number of the session (a bench's handoff directory "
                         "holds several sessions in call order)")
    ap.add_argument("--last", type=int, default=None, help="last request number of the session")
    ap.add_argument("--skip-unanswered", action="store_true",
                    help="leave out requests that never got a reply (timed out) instead of "
                         "stopping there; calls are renumbered 1..n")
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        sys.exit("llm-session-pack: %s is not a directory" % a.dir)
    header = {"kope_llm_session": 1, "model": a.model, "answerer": a.answerer,
              "op": a.op, "notes": a.notes}
    n = 0
    tmp = a.out + ".tmp"
    with gzip.open(tmp, "wt", encoding="utf-8") as f:
        f.write(json.dumps(header) + "\n")
        for c in calls(a.dir, a.first, a.last, a.skip_unanswered):
            f.write(json.dumps(c) + "\n")
            n += 1
    os.replace(tmp, a.out)
    print("llm-session-pack: %s: %d calls" % (a.out, n))
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
