#!/usr/bin/env python3
"""The layering check: every source file includes only the modules its
layer may use, so the architecture cannot drift silently.

The modules, lowest first (README, Layout):

    core hw op target eval mem queue ctx llm policy agent bench tool

A file of module M is src/M/** (M's internal headers and sources) or
include/kope/M.h (M's public header). It may include

  - its own module's headers ("M/x.h", "kope/M.h" or a plain "x.h" beside
    it), and
  - the headers of a module below it ("kope/N.h", "N/x.h"),

with two stricter rules: a public header includes only public headers
(kope/N.h), and src/tool (the CLI) includes only public headers. A folder
of src/ or a header of include/kope/ that is not in the list is an error
too: a new module takes its place in the order here and in the README.
System headers (<...>) are not checked, except <kope/...>.

EXCEPTIONS lists the known violations that are accepted for now, each with
its reason; an exception that no longer occurs is reported as an error, so
the list shrinks when the code is fixed.

Usage: check-layers.py [ROOT]   (ROOT: the source tree, default: the
parent of this script's folder). Prints one line per violation; exit 0
when there is none, 1 otherwise, 2 for a bad ROOT.
"""
import os
import re
import sys

ORDER = ["core", "hw", "op", "target", "eval", "mem", "queue", "ctx", "llm", "policy",
         "agent", "bench", "tool"]
RANK = {m: i for i, m in enumerate(ORDER)}
PUBLIC_ONLY = {"tool"}

# (file, included header): reason. Remove an entry when the include goes.
EXCEPTIONS = {
    ("src/target/target.c", "eval/sandbox.h"):
        "the cpu target's compile sandbox uses the evaluator's sandbox "
        "layers (issue 16, class 1); they belong below both",
}

INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(kope/[^>]+)>)')
SOURCE = re.compile(r"\.(c|h|cu|cl)$")


def module_of(rel):
    """(module, is_public) of a file relative to ROOT, or (None, _)."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1], False
    if parts[:2] == ["include", "kope"] and len(parts) == 3:
        return parts[2][:-2] if parts[2].endswith(".h") else None, True
    return None, False


def target_of(header):
    """(module, is_public) an included header belongs to; (None, _) for a
    plain file name beside the includer."""
    if header.startswith("kope/"):
        name = header[5:]
        return (name[:-2] if name.endswith(".h") else name), True
    if "/" in header:
        return header.split("/", 1)[0], False
    return None, False


def check_include(rel, mod, public, header):
    """The violation of one include line, or None."""
    tmod, tpublic = target_of(header)
    if tmod is None:
        return None
    if tmod not in RANK:
        return "includes %s of unknown module '%s'" % (header, tmod)
    if public and not tpublic:
        return "public header includes internal header %s" % header
    if mod in PUBLIC_ONLY and not tpublic:
        return "%s uses the public API only, includes %s" % (mod, header)
    if RANK[tmod] > RANK[mod]:
        return "%s (layer %d) includes %s of %s (layer %d, above it)" % (
            mod, RANK[mod], header, tmod, RANK[tmod])
    return None


def files(root):
    for top in ("src", "include/kope"):
        for dirpath, _dirs, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if SOURCE.search(name):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def check_file(rel, path, seen):
    mod, public = module_of(rel)
    if mod is None:
        return []
    if mod not in RANK:
        return ["%s: module '%s' is not in the layer order" % (rel, mod)]
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for no, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(1) or m.group(2)
            why = check_include(rel, mod, public, header)
            if why and (rel, header) in EXCEPTIONS:
                seen.add((rel, header))
            elif why:
                out.append("%s:%d: %s" % (rel, no, why))
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(os.path.join(root, "src")):
        print("check-layers: %s has no src/ folder" % root, file=sys.stderr)
        return 2
    seen, bad, n = set(), [], 0
    for rel, path in files(root):
        n += 1
        bad += check_file(rel, path, seen)
    for (rel, header), _reason in sorted(EXCEPTIONS.items()):
        if (rel, header) not in seen:
            bad.append("%s: listed exception for %s no longer occurs: remove it "
                       "from EXCEPTIONS" % (rel, header))
    for line in bad:
        print(line)
    print("check-layers: %d files, %d violations, %d accepted exceptions" %
          (n, len(bad), len(seen)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
