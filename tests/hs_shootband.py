"""hamshoot system tests of issue 44 for the constrained scheme's and conserving4's multiple shooting: their outer
system (the condensed matching system) is solved by PC hsband across the ranks, never gathered on one rank, where it
fits hsband's limits; where it does not (too few rows a rank), by the reproducible fallback PC hsgather.

  shootband_equal     crane_natural (constrained, generalized crane), pendulum_cartesian (constrained) and the
                      pendulum with -hs_scheme conserving4, several segment counts, on 1, 2, 3 and 4 ranks (4
                      oversubscribed): hsband (the default; -ksp_view says it factored the band itself) against
                      -hs_linear_solver mumps (PC hsgather, sequential MUMPS without MC64, on every rank count): the same Newton iterations
                      to the stop (a polish step after it, -hs_snes_polish, is decided by the last bits),
                      J^d within 1e-13 relative, and J^d as the transcription's (the same discrete equations) to the
                      tolerance of the formulations' own tests (1e-10; conserving4 1e-12)
  shootband_fallback  one segment a rank leaves hsband too few rows (its limit): -ksp_view names the limit and PC
                      hsgather; the run converges to the 1-rank run's J^d (1e-13) and three runs are identical to the
                      last bit; -pc_hsband_fallback_gather false says it takes MUMPS' LU instead, and converges as well
  shootband_free_time a free T in conserving4's shooting (T's column dense, its row local): hsband's border takes the
                      column and its diagonal row; against MUMPS / hsgather and the transcription, 1 to 4 ranks

The Newton iterations are compared only where they are robust to the last bits of the steps: from the default guess
of pendulum_cartesian with N = 40 and 5 segments the second Newton step leaves the march's domain or not by round-off
(5 iterations after the fallback of grid sequencing, or 19), with any linear solver; the cases here are not at such an
edge (measured: the same counts on 1 to 4 ranks with both solvers).

stdlib only."""
import os

from hs_util import check, run

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEMS = os.path.join(HERE, "..", "problems")
QUIET = ["-hs_check_extremal", "no"]
BAND_USED = "banded LU with partial pivoting (hamshoot)"
GATHER = "LU by sequential MUMPS"


def cases():
    """(name, the problem's arguments, the segment counts, J^d's tolerance against the transcription)."""
    crane = os.path.join(PROBLEMS, "crane_natural.ocp")
    pc = os.path.join(PROBLEMS, "pendulum_cartesian.ocp")
    out = [("pendulum_cartesian", ["-problem", pc, "-N", "40"], (4, 8), 1e-10),
           ("pendulum conserving4", ["-problem", "pendulum", "-N", "40", "-hs_scheme", "conserving4"], (4, 8, 20), 1e-12)]
    if not os.environ.get("HS_SANITIZED"):  # crane_natural's shooting converges from IPOPT's direct guess, which the
        out.insert(0, ("crane_natural", ["-problem", crane], (8, 16), 1e-10))  # sanitized build has not
    return out


def newton(s):
    """the Newton iterations to the stop: without -hs_snes_polish's, taken after a stop at round-off while the
    conserved quantity's violation still falls, a decision on the last bits (pendulum conserving4, 4 segments: 5 + 0
    with hsband, 5 + 1 with MUMPS)"""
    return s["newton_iterations"] - s.get("polish_iterations", 0)


def shoot(args, M, ranks, extra=()):
    return run(args + ["-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M), "-ksp_view"] + QUIET + list(extra),
               ranks=ranks, expect_rc=None)


def t_shootband_equal():
    """hsband against -hs_linear_solver mumps / hsgather on 1 to 4 ranks: iterations, J^d, the transcription's J^d.
    Sanitized (HS_SANITIZED: about 10x slower), the first segment count on 1, 2 and 4 ranks only."""
    sanitized = bool(os.environ.get("HS_SANITIZED"))
    for name, args, segs, tol in cases():
        segs = segs[:1] if sanitized else segs
        tr, out, _ = run(args + QUIET)
        check(tr and tr["converged"], "%s: the transcription did not converge: %s" % (name, out[-300:]))
        if not tr:
            continue
        for M in segs:
            for ranks in (1, 2, 4) if sanitized else (1, 2, 3, 4):
                what = "%s, %d segments, %d rank%s" % (name, M, ranks, "s" if ranks > 1 else "")
                b, outb, rcb = shoot(args, M, ranks)
                m, outm, rcm = shoot(args, M, ranks, ["-hs_linear_solver", "mumps"])
                if not (b and m and b["converged"] and m["converged"]):
                    check(False, "%s: hsband exit %d, mumps exit %d\n%s\n%s" % (what, rcb, rcm, outb[-300:], outm[-300:]))
                    continue
                print("%s: J^d %.16g (hsband, %d its) %.16g (%s, %d its), transcription %.16g" %
                      (what, b["J"], newton(b), m["J"], "hsgather", newton(m), tr["J"]))
                # one segment a rank (4 segments on 3 or 4 ranks) is beyond hsband's limit: its fallback, hsgather
                fits = M >= 2 * ranks
                check(BAND_USED in outb and "not used" not in outb if fits else
                      "too few for the band" in outb and "(PC hsgather, reproducible) instead" in outb,
                      "%s: -ksp_view does not say hsband %s:\n%s" %
                      (what, "factored the band" if fits else "fell back to hsgather", outb[-600:]))
                check("type: hsgather" in outm and GATHER in outm,  # on 1 rank too: PC lu's MUMPS has MC64
                      "%s, -hs_linear_solver mumps: -ksp_view names no PC hsgather:\n%s" % (what, outm[-600:]))
                nb, nm = newton(b), newton(m)
                check(nb == nm, "%s: %d Newton iterations to the stop with hsband, %d with MUMPS" % (what, nb, nm))
                check(abs(b["J"] - m["J"]) <= 1e-13 * abs(m["J"]), "%s: J^d %.17g (hsband), %.17g (MUMPS)" %
                      (what, b["J"], m["J"]))
                check(abs(b["J"] - tr["J"]) <= tol * abs(tr["J"]), "%s: J^d %.17g, transcription %.17g" %
                      (what, b["J"], tr["J"]))


def t_shootband_fallback():
    """one segment a rank: hsband's fallback PC hsgather, said by -ksp_view; converged, reproducible to the bit."""
    pc = os.path.join(PROBLEMS, "pendulum_cartesian.ocp")
    for name, args, M, ranks in (("pendulum_cartesian", ["-problem", pc, "-N", "40"], 4, 4),
                                 ("pendulum conserving4", ["-problem", "pendulum", "-N", "40", "-hs_scheme",
                                                           "conserving4"], 2, 2)):
        what = "%s, %d segments, %d ranks" % (name, M, ranks)
        one, out1, _ = shoot(args, M, 1)
        check(one and one["converged"] and BAND_USED in out1, "%s: the 1-rank run:\n%s" % (what, out1[-400:]))
        seen = set()
        for k in range(3):
            s, out, rc = shoot(args, M, ranks)
            check(s and s["converged"], "%s, run %d: exit %d\n%s" % (what, k, rc, out[-400:]))
            if not (s and s["converged"]):
                continue
            check("banded LU (hamshoot) not used: rank " in out and "too few for the band" in out and
                  "(PC hsgather, reproducible) instead" in out and "type: hsgather" in out,
                  "%s: -ksp_view does not name the limit and PC hsgather:\n%s" % (what, out[-800:]))
            seen.add((s["J"].hex(), s["newton_iterations"]))
            if one:
                check(abs(s["J"] - one["J"]) <= 1e-13 * abs(one["J"]), "%s: J^d %.17g, 1 rank %.17g" %
                      (what, s["J"], one["J"]))
        check(len(seen) == 1, "%s, 3 runs: (J^d, iterations) %s" % (what, sorted(seen)))
        s, out, rc = shoot(args, M, ranks, ["-pc_hsband_fallback_gather", "false"])
        check(s and s["converged"] and "; MUMPS LU instead" in out and "type: hsgather" not in out,
              "%s, -pc_hsband_fallback_gather false: exit %d\n%s" % (what, rc, out[-600:]))
        if s and one:
            check(abs(s["J"] - one["J"]) <= 1e-13 * abs(one["J"]), "%s, MUMPS' fallback: J^d %.17g, 1 rank %.17g" %
                  (what, s["J"], one["J"]))


def t_shootband_free_time():
    """a free T in conserving4's shooting: T's column is dense and its row local (H(z_N) = d phi/dT); hsband takes the
    column and its diagonal row out of the band as a border (bandborder.c's DiagonalRows) on 1 to 4 ranks: -ksp_view
    says so (or, where a rank has too few rows, names hsgather); the same Newton iterations as MUMPS / hsgather, J^d
    within 1e-13 of theirs and 1e-12 of the transcription's. Before, the band with T's column was the whole matrix
    (on 1 rank a plain band, its outer solves 2.8x slower than MUMPS at N = 4000, 400 segments; on more, the
    fallback)."""
    args = ["-problem", os.path.join(HERE, "data", "pendulum_free_T.ocp"), "-N", "40", "-hs_scheme", "conserving4"]
    tr, out, _ = run(args + QUIET)
    check(tr and tr["converged"], "pendulum_free_T: the transcription did not converge: %s" % out[-300:])
    for M in (8, 20):
        for ranks in (1, 2, 3, 4):
            what = "pendulum_free_T conserving4, %d segments, %d rank%s" % (M, ranks, "s" if ranks > 1 else "")
            b, outb, rcb = shoot(args, M, ranks)
            m, outm, rcm = shoot(args, M, ranks, ["-hs_linear_solver", "mumps"])
            if not (tr and b and m and b["converged"] and m["converged"]):
                check(False, "%s: hsband exit %d, mumps exit %d\n%s\n%s" % (what, rcb, rcm, outb[-300:], outm[-300:]))
                continue
            border = "banded LU with a border (hamshoot): 1 dense row(s) and column(s)" in outb
            print("%s: J^d %.16g (hsband, %s, %d its) %.16g (mumps, %d its), transcription %.16g" %
                  (what, b["J"], "bordered" if border else "fallback", newton(b), m["J"], newton(m), tr["J"]))
            check(border and "not used" not in outb if ranks <= 2 else
                  border or "(PC hsgather, reproducible) instead" in outb,
                  "%s: -ksp_view names neither the border nor hsgather:\n%s" % (what, outb[-600:]))
            check(newton(b) == newton(m), "%s: %d Newton iterations with hsband, %d with MUMPS" %
                  (what, newton(b), newton(m)))
            check(abs(b["J"] - m["J"]) <= 1e-13 * abs(m["J"]) and abs(b["J"] - tr["J"]) <= 1e-12 * abs(tr["J"]),
                  "%s: J^d %.17g, MUMPS %.17g, transcription %.17g" % (what, b["J"], m["J"], tr["J"]))
