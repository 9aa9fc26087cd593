#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 17 (issue 38; docs/reliability.md, "Security and data
safety", the rows marked round 17). Each assertion failed on the code before its fix:

  expansion    a problem file of bodies whose point has a long expression that 199 joints repeat (a 0.9 MB file):
               refused at once, the expansion capped as a file is (it had made 350 MB of text and 1 GB of memory;
               a 16 MiB file would have made 6 GB)
  invariants   an 'invariant' that is NaN at the nodes (a monitored quantity: the solve converges): the output's
               trajectory.csv is read back by -hs_init (its column inv_NAME holds 'nan', and the reader had refused the
               whole file); a NaN in a column the reader uses is still refused
  C1 controls  a problem name with the C1 control CSI (UTF-8 C2 9B, or the raw byte 0x9B that 8-bit terminals read as
               CSI) is refused; a raw 0x9B in an option's value is refused; a column name of a trajectory.h5 with it is
               shown as '?' (the header line, the messages had carried them to the terminal raw); a name with valid
               UTF-8 (caf\u00e9\u011b, whose last byte is 0x9B) is taken; -problem_print_expanded shows a comment's
               escape sequence as '?' (it had printed the file's bytes raw)
  integers     integer lists (-hs_shoot_knots, -hs_continue_steps) and the PCs' integer keys (-pc_hsband_refine,
               -pc_hsdrop_regrow) are read in full: 4294967301 had been read as 5 (modulo 2^32) and solved at knot 5,
               -hs_continue_steps 4294967298 as 2 steps, an empty list entry ('5,,6', '5,') as nothing; PETSc's ranges
               a-b stay
  undefined    a failed solve whose evaluation leaves the domain part-way (sqrt(0.5 - q) on the default guess) writes its
               iterate with E_minus_W and H as the problem defines them or nan (they had held the heap's old bytes,
               denormals such as 1.29e-312, for the nodes after the failure), on 1 and 2 ranks
  messages     'torque NAME: JOINT, consistent, consistent' is refused for its items (the message had said JOINT was no
               joint declared above); -hs_initial_guess direct with -hs_scheme conserving4 on a problem with a force
               says the direct solve cannot (it had said 'only -hs_scheme conserving4 solves it'); an error in the
               'invariant' lines generated for a free system of bodies (a user's invariant P_x, a 17th invariant) is
               reported at the first body line (it had been at a line past the end of the file)

Most cases are checks of what every rank reads alike (one process, no mpiexec); the outputs of a failed solve are
also checked on 2 ranks (the solution gathered to rank 0). stdlib only; each case in a temporary directory of its
own."""
import os
import subprocess
import tempfile
import time

from hs_util import ENV, HAMSHOOT, MPIEXEC, check


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


def run_bytes(args, cwd):
    """hamshoot as one process; (exit status, stdout + stderr as bytes: what reaches the terminal)."""
    p = subprocess.run([HAMSHOOT, "-quiet"] + args, env=ENV, cwd=cwd, capture_output=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def raw_c1(out):
    """whether out holds a C1 control as UTF-8 (C2 80..C2 9F) or as a raw byte 0x80..0x9F outside UTF-8."""
    text = out.decode("utf-8", "surrogateescape")
    return any(0x80 <= ord(c) <= 0x9f or 0xdc80 <= ord(c) <= 0xdc9f for c in text)


def case_c1_controls(d):
    """C1 controls (CSI) from a problem name, an option's value, an -hs_init column never reach the terminal."""
    body = b"coordinates: q\ncontrols: 1\nmass: 1\npotential: 0\nB: 1\nR: 1\nT: 1\nN: 10\nx0: 0, 0\nxT: 1, 0\n"
    for name, ok in ((b"a\xc2\x9b2Jb", False), (b"a\x9b2Jb", False), (b"caf\xc3\xa9\xc4\x9b", True)):
        with open(os.path.join(d, "c.ocp"), "wb") as f:
            f.write(b"problem: " + name + b"\n" + body)
        rc, out = run_bytes(["-problem", "c.ocp", "-hs_check_extremal", "no"], d)
        if ok:
            check(rc == 0 and name in out, "problem name %r: exit %d: %r" % (name, rc, out[-300:]))
        else:
            check(rc == 1 and b"c.ocp:1:11: problem: a control character" in out and not raw_c1(out),
                  "problem name %r: exit %d: %r" % (name, rc, out[-300:]))
    with open(os.path.join(d, "esc.ocp"), "wb") as f:
        f.write(b"# \x1b]0;owned\x07\x1b[2J \xc2\x9b2J \x9b2J\r\nproblem: esc\r\n" + body.replace(b"\n", b"\r\n"))
    rc, out = run_bytes(["-problem", "esc.ocp", "-problem_print_expanded", "-hs_check_extremal", "no"], d)
    check(rc == 0 and b"# ?]0;owned??[2J ??2J ?2J\r\nproblem: esc\r\n" in out and b"\x1b" not in out and not raw_c1(out),
          "-problem_print_expanded of a comment with escapes: exit %d: %r" % (rc, out[:300]))
    rc, out = run_bytes(["-problem", "pendulum", "-hs_init", os.fsdecode(b"x\x9b2J.csv")], d)
    check(rc == 1 and b"option -hs_init: a control character" in out and not raw_c1(out),
          "-hs_init with a raw 0x9B: exit %d: %r" % (rc, out[-300:]))
    rc, out = run_bytes(["-problem", "pendulum", "-N", "20", "-o", "h5", "-hs_output_format", "hdf5",
                         "-hs_check_extremal", "no"], d)
    if rc == 0:  # a build with HDF5
        with open(os.path.join(d, "h5", "trajectory.h5"), "rb") as f:
            data = f.read()
        at = data.find(b"lambda1,lambda2")
        check(at > 0, "no columns attribute found in trajectory.h5")
        with open(os.path.join(d, "c1.h5"), "wb") as f:
            f.write(data[:at] + b"la\x9bbda1" + data[at + 7:])
        rc, out = run_bytes(["-problem", "pendulum", "-N", "20", "-hs_init", "c1.h5"], d)
        check(rc == 1 and b"column 1 of 'costates' is 'la?bda1'" in out and not raw_c1(out),
              "an h5 column with a raw 0x9B: exit %d: %r" % (rc, out[-300:]))


def case_integers(d):
    """integer options read in full: values beyond 32 bits and empty list entries refused, ranges a-b kept."""
    base = ["-problem", "pendulum", "-N", "40", "-hs_check_extremal", "no"]
    shoot = base + ["-hs_bvp_type", "shooting", "-hs_shoot_knots"]
    for args, key in ((shoot + ["4294967301"], "-hs_shoot_knots"), (shoot + ["20,4294967306"], "-hs_shoot_knots"),
                      (shoot + ["5,,6"], "-hs_shoot_knots"), (shoot + ["5,"], "-hs_shoot_knots"),
                      (base + ["-hs_continue", "g", "-hs_continue_from", "5", "-hs_continue_steps", "4294967298"],
                       "-hs_continue_steps")):
        rc, out, _ = run_alone(args, d)
        check(rc == 1 and ("option %s: value" % key) in out and "not a whole number within 32-bit integers" in out,
              "%r: exit %d:\n%s" % (args[-2:], rc, out[-300:]))
    for key, val in (("-pc_hsband_refine", "4294967297"), ("-pc_hsdrop_regrow", "4294967296")):
        rc, out, _ = run_alone(base + [key, val], d)
        check(rc == 1 and ("option %s %s is not a whole number" % (key, val)) in out,
              "%s %s: exit %d:\n%s" % (key, val, rc, out[-300:]))
    rc, out, _ = run_alone(shoot + ["1-3", "-o", "k"], d)  # PETSc's range: knots 1 and 2, three segments
    with open(os.path.join(d, "k", "summary.json")) as f:
        text = f.read()
    check(rc == 0 and '"segments": 3' in text, "-hs_shoot_knots 1-3: exit %d, %s" % (rc, text[:300]))


def case_messages(d):
    """an error names what is wrong: a torque line with three items."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "problems", "cart_pendulum_bodies.ocp")) as f:
        text = f.read()
    with open(os.path.join(d, "t.ocp"), "w") as f:
        f.write(text.replace("torque moment: pivot", "torque moment: pivot, consistent, consistent"))
    rc, out, _ = run_alone(["-problem", "t.ocp", "-N", "10"], d)
    check(rc == 1 and "t.ocp:19:16: torque moment: expected 'JOINT' or 'JOINT, consistent' (or a rotor), found 3 items"
          in out, "a torque of three items: exit %d:\n%s" % (rc, out[-300:]))
    if not os.environ.get("HS_SANITIZED"):  # the direct guess needs IPOPT, which the sanitized build cannot load
        rc, out, _ = run_alone(["-problem", os.path.join(here, "data", "pendulum_sinh.ocp"), "-hs_scheme", "conserving4",
                                "-hs_initial_guess", "direct"], d)
        check(rc == 1 and "not the direct solve that -hs_compare (its direct side) and -hs_initial_guess direct need"
              in out, "a force with -hs_initial_guess direct: exit %d:\n%s" % (rc, out[-300:]))


def case_generated_invariants(d):
    """errors in the invariants generated for a free system of bodies are reported at a line of the file."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "data", "momentum_planar.ocp")) as f:
        text = f.read().rstrip("\n") + "\n"
    lines = text.count("\n")
    first = 1 + [l.startswith("body ") for l in text.split("\n")].index(True)
    for extra, want in (("invariant P_x: 1\n", "the name 'P_x' is given twice"),
                        ("".join("invariant i%d: 1\n" % i for i in range(14)), "at most 16 invariants")):
        with open(os.path.join(d, "m.ocp"), "w") as f:
            f.write(text + extra)
        rc, out, _ = run_alone(["-problem", "m.ocp", "-N", "4"], d)
        at = out.split("m.ocp:")[1].split(":")[0] if "m.ocp:" in out else "?"
        check(rc == 1 and want in out and at == str(first) and first <= lines,
              "%d lines, first body at %d; the message at line %s: exit %d:\n%s" % (lines, first, at, rc, out[-300:]))


def case_undefined(d):
    """the outputs of a solve that left the domain: E - W and H are the problem's values or nan, never old memory."""
    import math
    with open(os.path.join(d, "dom.ocp"), "w") as f:
        f.write("problem: dom\ncoordinates: q\ncontrols: 1\nmass: 1\npotential: -9.81*sin(q) + sqrt(0.5 - q)\nB: 1\n"
                "R: 1\nT: 3\nN: 20\nx0: 0, 0\nxT: 1, 0\n")
    for ranks in (1, 2):  # 2 ranks: the solution gathered to rank 0 before the diagnostics
        args = ["-problem", "dom.ocp", "-o", "out%d" % ranks, "-hs_check_extremal", "no"]
        if ranks == 1:
            rc, out, _ = run_alone(args, d)
        else:
            p = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT, "-quiet"] + args, env=ENV, cwd=d,
                               capture_output=True, text=True, timeout=120)
            rc, out = p.returncode, p.stdout + p.stderr
        check(rc == 2 and "DIVERGED_FUNCTION_DOMAIN" in out, "the domain error: exit %d:\n%s" % (rc, out[-300:]))
        with open(os.path.join(d, "out%d" % ranks, "trajectory.csv")) as f:
            rows = [r.split(",") for r in f.read().splitlines()[1:]]
        nan = 0
        for r in rows:  # the default guess: p = 0, u = 0, so W = 0 and E - W = V(q) where it is defined
            q, ew = float(r[1]), float(r[3])
            if math.isnan(ew):
                nan += 1
                continue
            want = -9.81 * math.sin(q) + math.sqrt(0.5 - q) if q <= 0.5 else float("nan")
            check(abs(ew - want) <= 1e-12 * (1 + abs(want)), "node t = %s: E - W = %r, V(q) = %r" % (r[0], ew, want))
        check(nan >= 9, "%d ranks: only %d nodes without E - W (q >= 0.5 on 10 of them)" % (ranks, nan))
        with open(os.path.join(d, "out%d" % ranks, "intervals.csv")) as f:
            hs = [float(r.split(",")[-1]) for r in f.read().splitlines()[1:]]
        check(all(math.isnan(h) or h == 0 or abs(h) > 1e-300 for h in hs), "H of the intervals: %r" % hs)


def t_security17():
    """round 17's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_expansion, case_invariant_nan, case_c1_controls, case_integers, case_messages,
                     case_generated_invariants, case_undefined):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
