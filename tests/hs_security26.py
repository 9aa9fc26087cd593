#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 26 (issue 38; docs/reliability.md, "Round 26"). Each
assertion marked (before: ...) failed on the code before its fix:

  unsaved step    SIGTERM during a continuation whose failed steps end before their first Newton iteration (a domain
                  error of the first residual: no poll, HsSolverStopIfInterrupted) exits 5 with no checkpoint, natural
                  and arclength, 1 and 2 ranks (before: 3, which promises a batch script that resubmits with -hs_restart a checkpoint
                  of the stop, and there was none at all). Status 3 still comes with the checkpoint.
  grid types      an unknown -hs_grid_snes_type, _npc_snes_type, _ksp_type, _pc_type (the sub-solvers of -hs_study and
                  -hs_extrapolate) is refused at the set-up, before the main solve, naming the option (before: the
                  main solve ran, then PETSc's "Unable to find requested SNES type nonesuch" on the study's second
                  grid); a registered one (hamshoot's hsband) is taken.
  round-off invariant  p_y conserved, fixed at both ends, with a y-part of the potential (or of the mass) that is a
                  constant whose derivative evaluates to round-off, not 0: (y+0.1)^2 - y^2 - 0.2*y, (y+1/3)^2 - y^2 -
                  2*y/3, 1.01 + (y+0.1)^2 - y^2 - 0.2*y in M_yy, also in units scaled by 1e-20 and 1e20, is refused
                  before the solve naming p_y(T), as the variants whose derivative is exactly 0 are (before: not
                  refused, the solve ended not converged, CONSERVATION_VIOLATED, or "converged" with |F| = 0.57); its
                  advice (p_y(T) free) converges. A real rate however small (1e-300*sin(y), or 1e-12*sin(y) beside
                  the round-off) is not taken as zero.
  singular floor  the same problem with p_y's rate real but far below p_y's round-off (1e-300*sin(y), 1e-20*sin(y) in
                  V, 1 + 1e-20*sin(y) in M_yy), p_y(T) = 0.5 fixed: an end condition over-determined in effect. Ends
                  exit 2, not converged, the diagnosis naming the singular Jacobian (with -hs_initial_guess direct
                  alone: SINGULAR_AT_NOISE_FLOOR, the noise's own Newton step larger than ||X||). Before: exit 0,
                  "converged" at the noise floor with |F| = 0.2-0.8 after the direct guess, H^d's spread 0.06 (the
                  noise-floor check took the singular direction for noise; H^d's terms were 4e13 through a multiplier
                  of 6e13 paired with another coordinate's change).

stdlib only; each case in a temporary directory of its own."""
import json
import os
import subprocess
import tempfile

from hs_reliability import stop_on
from hs_util import ENV_SIGNALS, HAMSHOOT, check

# the potential is undefined for q > c: continuing c from 2 to 0.3 the predicted guesses leave the domain, so each
# step fails at its first residual (DIVERGED_FUNCTION_DOMAIN) and is halved, again and again
DOMAIN_OCP = ("problem: dom\ncoordinates: q\ncontrols: 1\nparam c: 2\nmass: 1\npotential: 0.5*q^2 + sqrt(c - q)\n"
              "B: 1\nR: 1\nT: 3\nN: 20\nx0: 0, 0\nxT: 1, 0\n")


def case_unsaved_step(d):
    """status 3 if and only if a checkpoint of the stop exists: a failed step stopped before any poll exits 5."""
    with open(os.path.join(d, "dom.ocp"), "w") as f:
        f.write(DOMAIN_OCP)
    for ctype, ranks in (("natural", 1), ("arclength", 1), ("natural", 2), ("arclength", 2)):
        ck = os.path.join(d, "ck_%s%d" % (ctype, ranks))
        kind = "%s, %d rank%s" % (ctype, ranks, "s" if ranks > 1 else "")
        rc, out, sent = stop_on(["-problem", "dom.ocp", "-N", "2000", "-hs_check_extremal", "no",
                                 "-hs_strategy", "newton", "-hs_continue", "c", "-hs_continue_from", "2",
                                 "-p_c", "0.3", "-hs_continue_steps", "2", "-hs_continue_type", ctype,
                                 "-hs_continue_max_halvings", "1000", "-hs_checkpoint", ck], d, ranks, "retrying")
        check(sent, "%s: no failed step to stop at\n%s" % (kind, out[-400:]))
        have = os.path.isfile(os.path.join(ck, "checkpoint.json"))
        if "stopped after Newton iteration" in out:  # the signal came during a step that polled: its checkpoint, 3
            check(rc == 3 and have, "%s: stopped at a poll: exit %d, checkpoint %s\n%s" % (kind, rc, have, out[-400:]))
        else:
            check(rc == 5 and not have and "no checkpoint of it" in out,
                  "%s: SIGTERM between failed steps: exit %d, checkpoint %s (before: 3 with no checkpoint)\n%s" %
                  (kind, rc, have, out[-400:]))


def case_grid_types(d):
    """a driver's sub-solver type that does not exist is refused before the main solve, naming its option."""
    base = ["-problem", "pendulum", "-N", "400", "-hs_check_extremal", "no", "-hs_study", "3"]
    for key, kind in (("snes_type", "SNES"), ("npc_snes_type", "SNES"), ("ksp_type", "KSP"), ("pc_type", "PC")):
        p = subprocess.run([HAMSHOOT] + base + ["-o", "st_" + key, "-hs_grid_" + key, "nonesuch"], env=ENV_SIGNALS,
                           cwd=d, capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        check(p.returncode == 1 and "-hs_grid_%s nonesuch: not a %s type" % (key, kind) in out and "Newton" not in out,
              "-hs_grid_%s nonesuch: exit %d (before: refused after the main solve, without the option's name)\n%s" %
              (key, p.returncode, out[-400:]))
    p = subprocess.run([HAMSHOOT] + base + ["-o", "st_band", "-hs_grid_pc_type", "hsband"], env=ENV_SIGNALS, cwd=d,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "-hs_grid_pc_type hsband: exit %d\n%s" % (p.returncode, (p.stdout + p.stderr)[-400:]))


# p_y is conserved when the potential's and the mass's y-parts are constants (B moves x only): p_y(T) = 0.5 is then
# redundant. y is no invariant: its end value (y(T) = 1 or free) does not matter to the test
ROUNDOFF_OCP = ("problem: ro\nparam c: 1\nparam m: 1\ncoordinates: x, y\ncontrols: 1\nmass: m, 0, 0, m*(%s)\n"
                "potential: 0.5*x^2 + c*(%s)\nB: 1, 0\nR: 1\nT: 2\nN: 20\nx0: 0, 0, 0, 0.5\nxT: 1, %s, 0, %s\n")


def roundoff_run(d, mass, pot, yT, pyT, args=()):
    """(exit status, output) of the problem ROUNDOFF_OCP with that mass's M_yy, potential's y-part and end values."""
    with open(os.path.join(d, "ro.ocp"), "w") as f:
        f.write(ROUNDOFF_OCP % (mass, pot, yT, pyT))
    p = subprocess.run([HAMSHOOT, "-problem", "ro.ocp", "-hs_check_extremal", "no", "-quiet"] + list(args),
                       env=ENV_SIGNALS, cwd=d, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def case_roundoff_invariant(d):
    """a rate that is zero but for round-off is zero for the terminal-condition test, in any units; a real one is not."""
    new = (("1", "(y+0.1)^2 - y^2 - 0.2*y"), ("1", "(y+1/3)^2 - y^2 - 2*y/3"),
           ("1.01 + (y+0.1)^2 - y^2 - 0.2*y", "0"))  # (before: not refused)
    exact = (("1", "log(exp(y)) - y"), ("1", "sqrt(y^2+1)^2 - y^2"), ("1", "exp(y)*exp(-y)"),
             ("1", "sin(y)^2 + cos(y)^2"))  # derivatives exactly 0: refused before too
    refusal = "redundant terminal condition: p_y is conserved by the dynamics for any control"
    for (mass, pot), units in [(c, []) for c in new + exact] + [
            (new[0], u) for u in (["-p_c", "1e-20"], ["-p_c", "1e20"], ["-p_m", "1e-20"], ["-p_m", "1e20"])] + [
            (new[2], u) for u in (["-p_m", "1e-20"], ["-p_m", "1e20"])]:
        for yT in ("1", "*"):
            rc, out = roundoff_run(d, mass, pot, yT, "0.5", units)
            check(rc == 1 and refusal in out and "p_y(T) follows from x0" in out and "Newton" not in out,
                  "M_yy %s, V_y %s, y(T) %s %s: exit %d, not refused naming p_y(T) (before: not refused for %s)\n%s"
                  % (mass, pot, yT, " ".join(units), rc, "; ".join(v for _, v in new), out[-400:]))
    for mass, pot in new:  # the advice: p_y(T) free (y(T) free too: y(T) is fixed by x0 as well)
        rc, out = roundoff_run(d, mass, pot, "*", "*")
        check(rc == 0, "M_yy %s, V_y %s with p_y(T) and y(T) free: exit %d\n%s" % (mass, pot, rc, out[-400:]))
    for pot, units in (("1e-300*sin(y)", []), ("(y+0.1)^2 - y^2 - 0.2*y + 1e-12*sin(y)", []),
                       ("(y+0.1)^2 - y^2 - 0.2*y + 1e-12*sin(y)", ["-p_c", "1e-20"]),
                       ("1e-300*sin(y)", ["-p_m", "1e20"])):
        rc, out = roundoff_run(d, "1", pot, "*", "0.5", units + ["-snes_max_it", "1", "-hs_strategy", "newton"])
        check(rc in (0, 2) and "is conserved" not in out,
              "V_y %s %s: a real rate taken as zero, exit %d\n%s" % (pot, " ".join(units), rc, out[-400:]))


def case_singular_floor(d):
    """an end condition over-determined in effect (p_y fixed at both ends, its rate real but far below p_y's round-off)
    ends not converged with the reason, never "converged" at the noise floor."""
    direct = os.environ.get("HS_SANITIZED") != "1"  # the direct guess is IPOPT's, not loaded sanitized (sanitize.sh)
    for mass, pot, args in (("1", "1e-300*sin(y)", []), ("1", "1e-20*sin(y)", []), ("1 + 1e-20*sin(y)", "0", [])) + (
            (("1", "1e-300*sin(y)", ["-hs_strategy", "newton", "-hs_initial_guess", "direct"]),) if direct else ()):
        with open(os.path.join(d, "ro.ocp"), "w") as f:
            f.write(ROUNDOFF_OCP % (mass, pot, "*", "0.5"))
        p = subprocess.run([HAMSHOOT, "-problem", "ro.ocp", "-hs_check_extremal", "no", "-quiet", "-o", "sg"] + args,
                           env=ENV_SIGNALS, cwd=d, capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        s = json.load(open(os.path.join(d, "sg", "summary.json"))) if os.path.isfile(
            os.path.join(d, "sg", "summary.json")) else {}
        kind = "M_yy %s, V_y %s %s" % (mass, pot, " ".join(args))
        check(p.returncode == 2 and s.get("converged") is False and "converged          yes" not in out,
              "%s: exit %d, converged %s (before: exit 0, 'converged' at the noise floor with |F| 0.2-0.8)\n%s"
              % (kind, p.returncode, s.get("converged"), out[-400:]))
        # the reason: the Jacobian is singular, at the start (its null space lambda_p_y) or at the floor
        check("singular" in s.get("diagnosis", "") and ("p_y" in s["diagnosis"] or "over-determined" in s["diagnosis"]),
              "%s: the diagnosis does not say the Jacobian is singular: %r" % (kind, s.get("diagnosis")))
    # the floor's own verdict (-hs_initial_guess direct alone: no start at which the rank test could name it)
    check(not direct or s.get("solver_status") == "SINGULAR_AT_NOISE_FLOOR" and "numerically singular" in s.get("diagnosis", ""),
          "direct guess: status %s (before: CONVERGED_FNORM_ABS)" % s.get("solver_status"))


def t_security26():
    """round 26's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_unsaved_step, case_grid_types, case_roundoff_invariant, case_singular_floor):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
