#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 19 (issue 38; docs/reliability.md, "Round 19"). Each
assertion failed on the code before its fix:

  restart       SIGTERM in the first Newton attempt of a cold solve that was to fail (pendulum_cartesian.ocp with
                -hs_guess_costates implied, N = 2000, 2 ranks: the plain Newton diverges and grid sequencing converges),
                then -hs_restart: the restart's resumed Newton fails as the first attempt did and the fallbacks of
                -hs_strategy auto follow, to the uninterrupted run's J^d (it had ended not converged, exit 2: a restart
                made no fallbacks)
  pc keys       the logical and real keys of hamshoot's PCs and line search, under any prefix, are checked before
                PETSc reads them and the message names the key ("Unknown logical value: maybe", "Input string abc has
                no numeric value" had named none; -snes_linesearch_alpha nan had been taken); the PCs' range messages
                name the key with its prefix (-hsdrop_pc_hsslab_ordering 1 had been named -pc_hsslab_ordering); under
                the sanitizers (tools/sanitize.sh) a range error leaks nothing (it had leaked PETSc's options block,
                and inside -hs_extrapolate's grids the grid's whole solver: LeakSanitizer's exit status, not 1)
  init summary  the summary.json beside an -hs_init trajectory.csv: its N is read as a whole number (atoi had read
                4294967316 as 20, 1e400 as 1, 20.5 as 20: the files of two runs taken as one), and one that is no
                regular file or too large is an error naming it (a FIFO, /dev/zero, a 60 MB file had skipped the check);
                for a free T the file's own final time is the guess's and the summary's T must agree with it (T = 100
                beside a file ending at 2.06 had been taken; without a summary the problem file's T had been)

stdlib only; each case in a temporary directory of its own."""
import json
import os
import re
import subprocess
import tempfile

from hs_reliability import run_killed
from hs_util import ENV, HAMSHOOT, MPIEXEC, check

PCART = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems", "pendulum_cartesian.ocp")


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def case_restart(d):
    """a checkpoint of a first attempt that was to fail: the restart goes on to the fallbacks, as the run did."""
    args = ["-problem", PCART, "-N", "2000", "-hs_guess_costates", "implied", "-hs_check_extremal", "no", "-hs_monitor"]
    p = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT] + args + ["-o", "ref"], env=ENV, cwd=d,
                       capture_output=True, text=True, timeout=120)
    ref = summary(os.path.join(d, "ref"))
    # the premise: Newton from this start fails and a fallback converges
    check(p.returncode == 0 and ref["converged"] and "the fallbacks of -hs_strategy auto follow" in p.stdout,
          "the uninterrupted run: exit %d\n%s" % (p.returncode, (p.stdout + p.stderr)[-600:]))
    od = os.path.join(d, "out")
    text, rc = run_killed(args, 2, "Newton  1", 1, outdir=od)
    ck = os.path.join(od, "checkpoint")
    check(rc == 3 and os.path.exists(os.path.join(ck, "iterate.bin")) and "the fallbacks" not in text,
          "SIGTERM in the first attempt: exit %d\n%s" % (rc, text[-600:]))
    p = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT] + args + ["-o", od, "-hs_restart", ck],
                       env=ENV, cwd=d, capture_output=True, text=True, timeout=120)
    s = summary(od)
    check(p.returncode == 0 and s["converged"] and abs(s["J"] - ref["J"]) <= 1e-10 * abs(ref["J"]),
          "the restart: exit %d, converged %r, J %r against %r\n%s"
          % (p.returncode, s["converged"], s.get("J"), ref["J"], (p.stdout + p.stderr)[-600:]))


def case_pc_keys(d):
    """hamshoot's PC and line-search keys: a bad logical or real value names the key; range messages its prefix."""
    pend = ["-problem", "pendulum", "-N", "20", "-hs_check_extremal", "no", "-quiet"]
    ncar = ["-problem", "ncar", "-N", "20", "-hs_check_extremal", "no", "-quiet"]
    for args, want in (
            (ncar + ["-hs_linear_solver", "slab", "-hsdrop_pc_hsslab_fallback", "maybe"],
             "option -hsdrop_pc_hsslab_fallback maybe is not a logical value"),
            (pend + ["-pc_hsband_defer", "maybe"], "option -pc_hsband_defer maybe is not a logical value"),
            (ncar + ["-hs_linear_solver", "drop", "-pc_hsdrop_match", "sometimes"],
             "option -pc_hsdrop_match sometimes is not a logical value"),
            (ncar + ["-hs_linear_solver", "drop", "-pc_hsdrop_tol", "abc"],
             "option -pc_hsdrop_tol abc is not a finite decimal number"),
            (pend + ["-snes_linesearch_alpha", "nan"], "option -snes_linesearch_alpha nan is not a number"),  # round 22
            (ncar + ["-hs_linear_solver", "slab", "-hsdrop_pc_hsslab_ordering", "1"],
             "-hsdrop_pc_hsslab_ordering 1: one of 0, 2"),
            (pend + ["-hs_extrapolate", "-hs_grid_pc_hsband_refine", "-5"], "-hs_grid_pc_hsband_refine -5: must be"),
            (ncar + ["-hs_linear_solver", "drop", "-pc_hsdrop_tol", "2"], "-pc_hsdrop_tol 2.: must be in [0, 1)"),
            (ncar + ["-hs_extrapolate", "-hs_linear_solver", "slab", "-hs_grid_hsdrop_pc_hsslab_ordering", "9"],
             "-hs_grid_hsdrop_pc_hsslab_ordering 9: one of 0, 2")):
        p = subprocess.run([HAMSHOOT] + args, env=ENV, cwd=d, capture_output=True, text=True, timeout=60)
        out = p.stdout + p.stderr
        check(p.returncode == 1 and "hamshoot: error: " + want in out, "%s: exit %d\n%s"
              % (" ".join(args[-2:]), p.returncode, out[-300:]))
    for args in (pend + ["-pc_hsband_defer", "-pc_hsband_avx2", "OFF", "-snes_linesearch_alpha", "1e-4"],
                 ncar + ["-hs_linear_solver", "drop", "-pc_hsdrop_match", "yes", "-pc_hsdrop_tol", "1e-3"]):
        p = subprocess.run([HAMSHOOT] + args, env=ENV, cwd=d, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "%s: exit %d\n%s" % (" ".join(args[-4:]), p.returncode, (p.stdout + p.stderr)[-300:]))


def case_init_summary(d):
    """the summary.json beside an -hs_init trajectory.csv: N exact; a FIFO, a device, a huge file refused."""
    base = ["-problem", "pendulum", "-N", "20", "-hs_check_extremal", "no", "-quiet"]
    p = subprocess.run([HAMSHOOT] + base + ["-o", "ref"], env=ENV, cwd=d, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "the reference run: exit %d" % p.returncode)
    cases = [('{"problem": "pendulum", "N": %s}' % v, 'has an "N" that is not a whole number')
             for v in ("4294967316", "1e400", "20.5", '"20"')]
    cases += [("fifo", "summary.json: not a regular file (a FIFO)"),
              ("dev", "summary.json: not a regular file (a device)"),
              ("big", "more than the 1048576 such a file may have"), ('{"problem": "pendulum", "N": 20}', None)]
    for i, (what, want) in enumerate(cases):
        sub = os.path.join(d, "c%d" % i)
        os.mkdir(sub)
        for name in ("trajectory.csv", "intervals.csv"):
            with open(os.path.join(d, "ref", name)) as f, open(os.path.join(sub, name), "w") as g:
                g.write(f.read())
        js = os.path.join(sub, "summary.json")
        if what == "fifo":
            os.mkfifo(js)
        elif what == "dev":
            os.symlink("/dev/zero", js)
        else:
            with open(js, "w") as f:
                f.write(" " * 2000000 if what == "big" else what)
        p = subprocess.run([HAMSHOOT] + base + ["-hs_init", sub], env=ENV, cwd=d, capture_output=True, text=True,
                           timeout=60)
        out = p.stdout + p.stderr
        check((p.returncode == 1 and want in out) if want else p.returncode == 0,
              "-hs_init beside %s: exit %d\n%s" % (what[:40], p.returncode, out[-300:]))


def case_init_free_t(d):
    """a free T's trajectory.csv: its own final time is the guess's, and a summary.json beside it naming another T (or
    none that is a number) is an error (the summary's T had been taken whatever the file's t: 100 against 2.06)."""
    prob = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems", "double_integrator_free_T.ocp")
    base = ["-problem", prob, "-hs_check_extremal", "no", "-hs_monitor"]
    p = subprocess.run([HAMSHOOT] + base + ["-o", "ref"], env=ENV, cwd=d, capture_output=True, text=True, timeout=60)
    T = summary(os.path.join(d, "ref"))["T"]
    check(p.returncode == 0 and abs(T - 2) > 1e-3, "the reference run: exit %d, T %r" % (p.returncode, T))
    with open(os.path.join(d, "ref", "summary.json")) as f:
        text = f.read()
    for i, (value, want) in enumerate((("100", "says T = 100 (files of two runs mixed?)"),
                                       ('"abc"', 'has a "T" that is not a positive finite number'), (None, None))):
        sub = os.path.join(d, "c%d" % i)
        os.mkdir(sub)
        for name in ("trajectory.csv", "intervals.csv"):
            with open(os.path.join(d, "ref", name)) as f, open(os.path.join(sub, name), "w") as g:
                g.write(f.read())
        if value:
            with open(os.path.join(sub, "summary.json"), "w") as f:
                f.write(re.sub(r'"T": [0-9.e+-]+', '"T": ' + value, text, count=1))
        p = subprocess.run([HAMSHOOT] + base + ["-hs_init", sub], env=ENV, cwd=d, capture_output=True, text=True,
                           timeout=60)
        out = p.stdout + p.stderr
        if want:
            check(p.returncode == 1 and want in out,
                  "free T, summary T %s: exit %d\n%s" % (value, p.returncode, out[-300:]))
        else:  # no summary: the file's own T, so the solution itself (0 Newton iterations; the file's T guess 2 took 1)
            check(p.returncode == 0 and "after 0 Newton iterations" in out,
                  "free T without a summary: exit %d\n%s" % (p.returncode, out[-400:]))


def t_security19():
    """round 19's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_pc_keys, case_init_summary, case_init_free_t, case_restart):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
