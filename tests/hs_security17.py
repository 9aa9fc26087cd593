#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 17 (issue 38; docs/reliability.md, "Security and data
safety", the rows marked round 17). Each assertion failed on the code before its fix:

  expansion    a problem file of bodies whose point has a long expression that 199 joints repeat (a 0.9 MB file):
               refused at once, the expansion capped as a file is (it had made 350 MB of text and 1 GB of memory;
               a 16 MiB file would have made 6 GB)
  invariants   an 'invariant' that is NaN at the nodes (a monitored quantity: the solve converges): the output's
               trajectory.csv is read back by -hs_init (its column inv_NAME holds 'nan', and the reader had refused the
               whole file); a NaN in a column the reader uses is still refused

stdlib only; each case in a temporary directory of its own."""
import os
import subprocess
import tempfile
import time

from hs_util import ENV, HAMSHOOT, check


def run_alone(args, cwd, timeout=60):
    """hamshoot as one process (no mpiexec); (exit status, stdout + stderr, seconds)."""
    t0 = time.time()
    p = subprocess.run([HAMSHOOT, "-quiet"] + args, env=ENV, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr, time.time() - t0


def case_expansion(d):
    """a point's long expression repeated by 199 joints: the expanded text is capped at HS_OCP_MAX_BYTES."""
    expr = "+".join("0.000001*%d" % i for i in range(1, 60000))
    lines = ["problem: amp", "body a: planar, 1, 1, 1", "body b: planar, 1, 1, 1", "point P: a, (%s), 0" % expr,
             "point Q: b, 0, 0"] + ["joint j%d: revolute, P, Q" % k for k in range(199)] + ["T: 1", "N: 4"]
    with open(os.path.join(d, "amp.ocp"), "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, out, sec = run_alone(["-problem", "amp.ocp", "-problem_print_expanded"], d)
    check(rc == 1 and "expand to more than 16 MiB of problem text (HS_OCP_MAX_BYTES" in out and len(out) < 2000,
          "bodies expanding past 16 MiB: exit %d after %.1f s, %d bytes of output:\n%s" % (rc, sec, len(out), out[-300:]))


def case_invariant_nan(d):
    """a converged output whose inv_NAME column holds nan is a valid -hs_init; a nan in a state column is not."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "problems", "pendulum.ocp")) as f:
        text = f.read().rstrip("\n") + "\n"
    with open(os.path.join(d, "inv.ocp"), "w") as f:
        f.write(text + "invariant b: 1/(0*q)\ninvariant c: p_q\n")
    rc, out, _ = run_alone(["-problem", "inv.ocp", "-N", "20", "-o", "out", "-hs_check_extremal", "no"], d)
    with open(os.path.join(d, "out", "trajectory.csv")) as f:
        rows = f.read().splitlines()
    check(rc == 0 and rows[0].endswith(",inv_b,inv_c") and rows[1].split(",")[-2] == "nan",
          "the run with a NaN invariant: exit %d, header %r:\n%s" % (rc, rows[0], out[-300:]))
    rc, out, _ = run_alone(["-problem", "inv.ocp", "-N", "20", "-hs_init", "out/trajectory.csv", "-hs_check_extremal",
                            "no", "-hs_monitor"], d)
    check(rc == 0 and "Newton  2" not in out, "-hs_init of that output: exit %d:\n%s" % (rc, out[-400:]))
    f2 = rows[1].split(",")
    f2[1] = "nan"  # q at t = 0: a column the reader uses
    with open(os.path.join(d, "bad.csv"), "w") as f:
        f.write("\n".join([rows[0], ",".join(f2)] + rows[2:]) + "\n")
    rc, out, _ = run_alone(["-problem", "inv.ocp", "-N", "20", "-hs_init", "bad.csv"], d)
    check(rc == 1 and "bad.csv:2: value 2 ('nan') is not a finite number" in out,
          "a nan in a state column: exit %d:\n%s" % (rc, out[-300:]))


def t_security17():
    """round 17's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_expansion, case_invariant_nan):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
