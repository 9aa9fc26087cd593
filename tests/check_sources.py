#!/usr/bin/env python3
"""Source checks (ctest 'sources'): every function declared in a public header has a doc
comment at its definition (STYLE.md: purpose, collective or not, parameters); no library
function is longer than MAX_LINES lines; the layers include only downwards (problems/ and
costate/ nothing of PETSc, MPI or bvp/; mpi/ nothing of bvp/).

Usage: check_sources.py SOURCE_DIR"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
HEADERS = ["problems/hsproblem.h", "problems/hsmechanical.h", "problems/hsocp.h", "problems/hsexpr.h",
           "costate/hscostate.h", "costate/hsmarch.h", "mpi/hsmpi.h", "bvp/hsbvp.h"]
LIB_DIRS = ["problems", "costate", "mpi", "bvp", "bvp/impls"]
MAX_LINES = 100
fails = []


def sources():
    for d in LIB_DIRS:
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".c"):
                yield os.path.join(d, f)


def declared():
    names = set()
    for h in HEADERS:
        p = os.path.join(ROOT, h)
        if not os.path.exists(p):
            continue
        text = re.sub(r"/\*.*?\*/", "", open(p).read(), flags=re.S)
        text = re.sub(r"static inline[^{]*\{.*?\n\}", "", text, flags=re.S)  # inline helpers are defined there
        for m in re.finditer(r"^[A-Za-z_][\w \*]*?\b(Hs\w+)\s*\(", text, flags=re.M):
            if "typedef" not in text[text.rfind("\n", 0, m.start()) + 1:m.start() + 1]:
                names.add(m.group(1))
    return names


def definitions():
    """name -> (file, line of the signature, the lines before it, body length)."""
    out = {}
    for f in sources():
        lines = open(os.path.join(ROOT, f)).read().split("\n")
        for i, line in enumerate(lines):
            one = re.match(r"[A-Za-z][^;]*?\b(Hs\w+)\s*\([^;]*\)\s*\{.*\}\s*$", line)
            if one:  # a definition on one line
                out.setdefault(one.group(1), []).append((f, i + 1, lines[max(0, i - 40):i], 1))
                continue
            if line != "{" or i == 0:
                continue
            j = i - 1
            while j > 0 and not re.match(r"[A-Za-z]", lines[j]):
                j -= 1
            m = re.search(r"\b(\w+)\s*\(", lines[j])
            if not m:
                continue
            k = i
            while k < len(lines) and lines[k] != "}":
                k += 1
            out.setdefault(m.group(1), []).append((f, j + 1, lines[max(0, j - 40):j], k - i + 1))
    return out


defs = definitions()
for name in sorted(declared()):
    if name not in defs:
        continue  # declared for a file another stage of the build provides, or a macro
    for f, line, before, _ in defs[name]:
        if not before or not before[-1].rstrip().endswith("*/"):
            fails.append("%s:%d: %s has no doc comment at its definition" % (f, line, name))
for name, ds in sorted(defs.items()):
    for f, line, _, n in ds:
        if n > MAX_LINES:
            fails.append("%s:%d: %s is %d lines long (at most %d)" % (f, line, name, n, MAX_LINES))
for f in sources():
    layer = f.split("/")[0]
    for m in re.finditer(r'#include\s*[<"]([^>"]+)[>"]', open(os.path.join(ROOT, f)).read()):
        inc = m.group(1)
        if layer in ("problems", "costate") and (inc.startswith("petsc") or inc.startswith("mpi") or "bvp/" in inc
                                                 or "mpi/" in inc):
            fails.append("%s: includes %s (serial layers use no PETSc, MPI or bvp/)" % (f, inc))
        if layer == "mpi" and "bvp/" in inc:
            fails.append("%s: includes %s (mpi/ includes nothing of bvp/)" % (f, inc))
for h in HEADERS:
    if h.startswith(("problems", "costate")) and os.path.exists(os.path.join(ROOT, h)):
        for m in re.finditer(r'#include\s*[<"]([^>"]+)[>"]', open(os.path.join(ROOT, h)).read()):
            if m.group(1).startswith(("petsc", "mpi")):
                fails.append("%s: includes %s" % (h, m.group(1)))
for x in fails:
    print("FAIL:", x)
print("%d public functions, %d definitions, the includes of %d files checked: %d passed, %d failed"
      % (len(declared()), sum(len(v) for v in defs.values()), len(list(sources())), 0 if fails else 1, len(fails)))
sys.exit(1 if fails else 0)
