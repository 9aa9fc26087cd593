#!/usr/bin/env python3
"""Source checks (ctest 'sources'): every function declared in a public header has a doc
comment at its definition (STYLE.md: purpose, collective or not, parameters); no library
function is longer than MAX_LINES lines; the layers include only downwards (problems/ and
costate/ nothing of PETSc, MPI or bvp/; mpi/ nothing of bvp/); and, given the built library,
the floors of bvp/ (docs/architecture.md):

  sys < petscext < interface < impls < drivers < register.c (the package's registry)

read from the library's symbols (nm): no object calls a function of a higher floor (the one
exception: HsInitializePackage, the registry's entry point that HsSolverCreate calls, as
PETSc's XXXCreate calls XXXInitializePackage); no circular dependency among bvp/ files; a
function that only its own file uses is static; interface/ names no driver (a function declared
in drivers/hsdrivers.h) and no PC type of petscext/, and includes no private PETSc header but
petscimpl.h (what PETSCHEADER needs); each floor has its one private header.

Usage: check_sources.py SOURCE_DIR [LIBHSBVP.a]"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
HEADERS = ["problems/hsproblem.h", "problems/hsmechanical.h", "problems/hsocp.h", "problems/hsbodies.h", "problems/hsexpr.h", "problems/hstrajcsv.h",
           "costate/hscostate.h", "costate/hsmarch.h", "mpi/hsmpi.h", "bvp/hsbvp.h"]
LIB_DIRS = ["problems", "costate", "mpi", "bvp", "bvp/sys", "bvp/petscext", "bvp/interface", "bvp/impls", "bvp/drivers"]
FLOORS = ["bvp/sys", "bvp/petscext", "bvp/interface", "bvp/impls", "bvp/drivers", "bvp/register.c"]
FLOOR_HEADERS = {"bvp/sys": "hssys.h", "bvp/petscext": "hspetscext.h", "bvp/interface": "hsbvpimpl.h",
                 "bvp/impls": "hsimpls.h", "bvp/drivers": "hsdrivers.h"}
UPWARD_OK = {"HsInitializePackage"}
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


def floor_of(f):
    for i, fl in enumerate(FLOORS):
        if f == fl or f.startswith(fl + "/"):
            return i
    return None


def symbols(lib):
    """file -> (defined symbols, undefined symbols), from nm of the archive; members named NAME.c.o."""
    import subprocess
    bvp = {os.path.basename(f): f for f in sources() if f.startswith("bvp/")}
    out = subprocess.run(["nm", "-A", lib], capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r".*?:([^:]+)\.o:\s*(?:[0-9a-f]+)?\s+([A-Za-z])\s+(\S+)$", line)
        if not m:
            continue
        f = bvp.get(m.group(1))
        if f is None:  # not a file of bvp/ (the sanitized build adds tools/sanitize_keep_modules.c to every target)
            continue
        d, u = res.setdefault(f, (set(), set()))
        (u if m.group(2) == "U" else d if m.group(2) in "TDBRC" else set()).add(m.group(3))
    return res


def cycles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def check_floors(lib):
    syms = symbols(lib)
    owner = {s: f for f, (d, _) in syms.items() for s in d}
    edges, used_elsewhere = {}, set()
    for f, (_, u) in syms.items():
        for s in u:
            g = owner.get(s)
            if g is None or g == f:
                continue
            used_elsewhere.add(s)
            if s in UPWARD_OK:
                continue
            edges.setdefault(f, set()).add(g)
            if floor_of(g) > floor_of(f):
                fails.append("%s calls %s of %s, a higher floor" % (f, s, g))
    for c in cycles(edges):
        fails.append("circular dependency among bvp/ files: %s" % " -> ".join(c))
    # a function only its own file uses is static: those of the public header and those the programs,
    # tests, examples and benchmarks use are exempt
    public = declared()
    users = ""
    for d in ("tests", "examples", "bench", "bvp"):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".c") and (d != "bvp" or f == "hamshoot.c"):
                users += open(os.path.join(ROOT, d, f)).read()
    for f, (d, _) in sorted(syms.items()):
        for s in sorted(d):
            if (s.startswith(("Hs", "PCCreate_", "SNESLineSearchCreate_")) and s not in used_elsewhere
                    and s not in public and not re.search(r"\b%s\b" % s, users)):
                fails.append("%s: %s is used by its own file only (make it static)" % (f, s))
    # interface/ names no driver and no PC type, and reads no private PETSc header but petscimpl.h
    drivers = set(re.findall(r"\b(Hs\w+)\s*\(", open(os.path.join(ROOT, "bvp/drivers/hsdrivers.h")).read()))
    for f in sorted(os.listdir(os.path.join(ROOT, "bvp/interface"))):
        text = open(os.path.join(ROOT, "bvp/interface", f)).read()
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for name in sorted(drivers):
            if re.search(r"\b%s\b" % name, code):
                fails.append("bvp/interface/%s names the driver %s (reach it through a hook)" % (f, name))
        for m in re.finditer(r'"hsband"|"hsdrop"|\bPCHS\w+|\bHsPCBand\w*|\bHsPCDrop\w*', code):
            fails.append("bvp/interface/%s names the PC type %s (ask the PC: petscext/pcutils.c)" % (f, m.group(0)))
        for m in re.finditer(r'#include\s*[<"](petsc/private/\w+\.h)[>"]', code):
            if m.group(1) != "petsc/private/petscimpl.h":
                fails.append("bvp/interface/%s includes %s" % (f, m.group(1)))
    for d, h in FLOOR_HEADERS.items():
        if not os.path.exists(os.path.join(ROOT, d, h)):
            fails.append("%s has no private header %s" % (d, h))
    return len(syms), sum(len(v) for v in edges.values())


def check_references():
    """Every file path the README, docs/, the sources and the tests name exists in the repository (a clone has no
    DESIGN.md outside it: the theory is docs/theory.md)."""
    pat = re.compile(r"(?<![\w./-])((?:bvp|problems|costate|mpi|docs|tests|bench|examples|tools|fuzz)/[\w./-]*\w"
                     r"\.(?:c|h|md|py|ocp|json|sh|csv|png|out|txt|supp|dict))\b")
    texts = ["README.md"]
    for d in ["docs", "examples", "bench", "tests", "tests/crosscheck"] + LIB_DIRS:
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith((".c", ".h", ".md", ".py")):
                texts.append(os.path.join(d, f))
    n = 0
    for f in texts:
        text = open(os.path.join(ROOT, f)).read()
        if "DESIGN.md" in text and f != "tests/check_sources.py":
            fails.append("%s: names DESIGN.md, which a clone does not have (docs/theory.md)" % f)
        for m in pat.finditer(text):
            n += 1
            path = m.group(1)
            if "NAME" in path or "XXX" in path:  # a pattern (problems/NAME.c), not a file
                continue
            rel = os.path.normpath(os.path.join(os.path.dirname(f), path))  # a link relative to the file
            if not (os.path.exists(os.path.join(ROOT, path)) or os.path.exists(os.path.join(ROOT, rel))):
                fails.append("%s: names %s, which does not exist" % (f, path))
    return len(texts), n


nt, nr = check_references()
print("references: %d file paths in %d files checked" % (nr, nt))
if len(sys.argv) > 2:
    nfiles, nedges = check_floors(sys.argv[2])
    print("floors: %d objects of bvp/, %d dependencies between files checked" % (nfiles, nedges))
for x in fails:
    print("FAIL:", x)
print("%d public functions, %d definitions, the includes of %d files checked: %d passed, %d failed"
      % (len(declared()), sum(len(v) for v in defs.values()), len(list(sources())), 0 if fails else 1, len(fails)))
sys.exit(1 if fails else 0)
