#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 18 (issue 38; docs/reliability.md, "Round 18"). Each
assertion failed on the code before its fix:

  coarse grids  SIGTERM during -hs_extrapolate's coarse grids (N/4, then N/2 after N/4 converged; kepler N = 40000,
                2 ranks) exits 3 with a checkpoint at N (the stopped grid's iterate interpolated to N) that -hs_restart
                resumes from, to the uninterrupted run's J^d (it had exited 3 with no checkpoint: the grids' work lost
                and nothing to resume from)
  integers      PETSc's integer keys that hamshoot relies on are read in full and in range, under any prefix:
                -snes_max_it 4294967297 had been read as 1 (DIVERGED_MAX_IT after 1 iteration), -hs_grid_snes_max_it
                likewise, -mat_mumps_icntl_14 4294967316 as 20, the new PC's -pc_hsslab_ordering 4294967298 as 2, -snes_max_it -1 had ended in PETSc's "Internal error,
                solver returned without setting converged reason"; the values PETSc documents (-snes_lag_jacobian -2,
                -snes_max_funcs -1) and real-valued keys with long digit strings (-snes_atol 10000000000) stay
  solvers       -hs_linear_solver slab or drop with conserving4's or the constrained scheme's multiple shooting is
                refused before the solve (it had been ignored, the solve converged, and the extremal check's sub-solve
                failed after it: exit 1); the message names the run's formulation (it had sent a conserving4 or
                constrained transcription to "-hs_bvp_type transcription", which it had)
  conserved     an invariant named in 'conserved:' that the scheme does not conserve (the wheel with a potential): the
                end at rest is missed (max |beta| 0.24) and the solve is not converged, END_CONDITION_VIOLATED, exit 2
                (it had been "converged", exit 0, with beta only in summary.json); 'conserved: L, L' is refused at its
                line (it had been taken, the end condition singular: DIVERGED_LINEAR_SOLVE after every fallback)

stdlib only; each case in a temporary directory of its own."""
import json
import os
import subprocess
import tempfile

from hs_reliability import run_killed
from hs_util import ENV, HAMSHOOT, MPIEXEC, check

KEPLER = ["-problem", "kepler", "-N", "40000", "-hs_extrapolate", "-hs_check_extremal", "no", "-quiet",
          "-hs_grid_snes_monitor", "ascii"]


def run2(args, cwd):
    """hamshoot on 2 ranks; (exit status, stdout + stderr)."""
    p = subprocess.run([MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT] + args, env=ENV, cwd=cwd, capture_output=True,
                       text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def case_coarse_grids(d):
    """SIGTERM in N/4 and in N/2 of the coarse-first -hs_extrapolate: exit 3, a checkpoint at N, resumed."""
    rc, out = run2(KEPLER + ["-o", "ref"], d)
    check(rc == 0, "the uninterrupted run: exit %d\n%s" % (rc, out[-400:]))
    ref = summary(os.path.join(d, "ref"))
    # the grid monitor's lines: N/4's iteration 2 (in N/4), the second grid's iteration 0 (N/4 converged, in N/2)
    for name, wait_for, count, fin in (("quarter", "  2 SNES Function norm", 1, "(N = 10000 stopped)"),
                                       ("half", "  0 SNES Function norm", 2, "(N = 10000 converged, N = 20000 stopped)")):
        od = os.path.join(d, name)
        text, rc = run_killed(KEPLER, 2, wait_for, count, outdir=od)
        ck = os.path.join(od, "checkpoint")
        check(rc == 3 and "during -hs_extrapolate's coarse grids %s, checkpoint in %s" % (fin, ck) in text and
              os.path.exists(os.path.join(ck, "iterate.bin")),
              "%s: SIGTERM in the coarse grids: exit %d, %s\n%s" % (name, rc, os.listdir(od), text[-600:]))
        with open(os.path.join(ck, "checkpoint.json")) as f:
            cj = json.load(f)
        check(cj["N"] == 40000 and cj["unknowns"] == 12 * 40001, "%s: checkpoint.json %r" % (name, cj))
        rc, out = run2(KEPLER + ["-o", od, "-hs_restart", ck], d)
        s = summary(od)
        check(rc == 0 and s["converged"] and s["initial_guess"].startswith("restarted from a checkpoint") and
              abs(s["J"] - ref["J"]) <= 1e-10 * abs(ref["J"]) and s["extrapolation"]["grids"] == [10000, 20000, 40000],
              "%s: the restart: exit %d, J %r against %r\n%s" % (name, rc, s.get("J"), ref["J"], out[-400:]))


def case_integers(d):
    """PETSc's integer keys: whole numbers in range, any prefix; the documented special values and reals stay."""
    pend = ["-problem", "pendulum", "-N", "20", "-hs_check_extremal", "no", "-quiet"]
    for key, value, want in (("-snes_max_it", "4294967297", "[0, 2147483647]"),
                             ("-snes_max_it", "-1", "[0, 2147483647]"),
                             ("-hs_grid_snes_max_it", "4294967297", "[0, 2147483647]"),
                             ("-ksp_max_it", "DEFAULT", "[0, 2147483647]"),
                             ("-snes_lag_jacobian", "-3", "[-2, 2147483647]"),
                             ("-mat_mumps_icntl_14", "4294967316", "within 32-bit integers"),
                             ("-pc_hsslab_ordering", "4294967298", "within 32-bit integers")):
        p = subprocess.run([HAMSHOOT] + pend + [key, value], env=ENV, cwd=d, capture_output=True, text=True, timeout=60)
        out = p.stdout + p.stderr
        check(p.returncode == 1 and "option %s %s is not a whole number" % (key, value) in out and want in out,
              "%s %s: exit %d\n%s" % (key, value, p.returncode, out[-300:]))
    for key, value, rc_want in (("-snes_lag_jacobian", "-2", 0), ("-snes_max_funcs", "-1", 0),
                                ("-mat_mumps_icntl_14", "30", 0), ("-snes_max_it", "50", 0),
                                ("-snes_atol", "10000000000", 2)):  # converged to the requested tolerance only
        p = subprocess.run([HAMSHOOT] + pend + [key, value], env=ENV, cwd=d, capture_output=True, text=True, timeout=60)
        check(p.returncode == rc_want and "hamshoot: error" not in p.stdout + p.stderr,
              "%s %s: exit %d\n%s" % (key, value, p.returncode, (p.stdout + p.stderr)[-300:]))


def case_linear_solver(d):
    """-hs_linear_solver drop or slab where the formulation has neither: refused before the solve, naming it."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems")
    for args, what in ((["-problem", "kepler", "-hs_bvp_type", "shooting", "-hs_scheme", "conserving4",
                         "-hs_linear_solver", "slab"], "slab: only the transcription of a problem without constraints "
                        "by a scheme pair has it (this run: multiple shooting)"),
                       (["-problem", os.path.join(here, "crane_natural.ocp"), "-hs_bvp_type", "shooting",
                         "-hs_linear_solver", "drop"], "(this run: multiple shooting)"),
                       (["-problem", os.path.join(here, "crane_natural.ocp"), "-hs_linear_solver", "slab"],
                        "(this run: the transcription of a constrained problem)"),
                       (["-problem", "pendulum", "-hs_scheme", "conserving4", "-hs_linear_solver", "drop"],
                        "(this run: the transcription by -hs_scheme conserving4)")):
        p = subprocess.run([HAMSHOOT, "-N", "20", "-hs_monitor"] + args, env=ENV, cwd=d, capture_output=True, text=True,
                           timeout=60)
        out = p.stdout + p.stderr
        check(p.returncode == 1 and "-hs_linear_solver %s: only the transcription" % args[-1] in out and what in out and
              "Newton" not in out, "%s: exit %d\n%s" % (" ".join(args[-4:]), p.returncode, out[-400:]))


def case_conserved(d):
    """'conserved:' naming an invariant that the scheme does not conserve (the wheel of tests/data with a potential
    that breaks the rotation invariance): not converged, exit 2, naming beta; the wheel as shipped converges."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wheel_rest_directors.ocp")
    with open(here) as f:
        text = f.read()
    with open(os.path.join(d, "w.ocp"), "w") as f:
        f.write(text.replace("potential: 0\n", "potential: 0.3*a2\n"))
    with open(os.path.join(d, "w2.ocp"), "w") as f:
        f.write(text.replace("conserved: L\n", "conserved: L, L\n"))
    p = subprocess.run([HAMSHOOT, "-problem", "w2.ocp", "-quiet"], env=ENV, cwd=d, capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 1 and "w2.ocp:18:15: conserved: 'L' is named twice" in p.stdout + p.stderr,
          "conserved: L, L: exit %d\n%s" % (p.returncode, (p.stdout + p.stderr)[-400:]))
    for name, rc_want in ((here, 0), ("w.ocp", 2)):
        p = subprocess.run([HAMSHOOT, "-problem", name, "-o", "o", "-hs_check_extremal", "no", "-quiet"], env=ENV,
                           cwd=d, capture_output=True, text=True, timeout=120)
        s = summary(os.path.join(d, "o"))
        beta = s["constraints"]["conserved_beta"]
        out = p.stdout + p.stderr
        if rc_want:
            check(p.returncode == 2 and not s["converged"] and s["solver_status"] == "END_CONDITION_VIOLATED" and
                  beta > 0.1 and "the end at rest is missed: max |beta| =" in out,
                  "a 'conserved:' invariant not conserved: exit %d, converged %r, beta %r\n%s"
                  % (p.returncode, s["converged"], beta, out[-400:]))
        else:
            check(p.returncode == 0 and s["converged"] and beta < 1e-12, "the wheel: exit %d, beta %r\n%s"
                  % (p.returncode, beta, out[-400:]))


def t_security18():
    """round 18's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_integers, case_linear_solver, case_conserved, case_coarse_grids):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
