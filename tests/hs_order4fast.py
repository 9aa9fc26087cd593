"""hamshoot system tests of issue 43's speed targets, fourth session (bench/README.md, "Romberg"):
-hs_extrapolate_romberg eliminates h^p and h^(p+2) from -hs_extrapolate's three grids (the symmetric conserving
schemes expand J in even powers of h), so its error falls as h^8 for conserving4 and h^6 for the second-order scheme.
Expected values: the pendulum's J_inf of docs/theory.md section 4.1 (independent: tests/crosscheck's continuous
necessary conditions by scipy), the powers of h from the schemes' symmetry, and Romberg's formula applied here to the
J of three separate plain solves.
"""
import math
import os
import shutil
import subprocess
import tempfile

from hs_util import ENV, HAMSHOOT, check, run

PENDULUM_JINF = 6.436944438855  # docs/theory.md section 4.1 (independent: tests/crosscheck)
QUIET = ["-hs_check_extremal", "no"]
ROMBERG = ["-hs_extrapolate", "-hs_extrapolate_romberg"]


def extrapolated(args, ranks=1):
    s, text, _ = run(args + QUIET, ranks=ranks)
    check(s and s["converged"] and s.get("extrapolation"), "%s: %s" % (args, text[-300:]))
    return s


def romberg_order(scheme, Ns, p, lo, hi):
    """Romberg's J at N and 2N against J_inf: the error falls 2^(p+4) per doubling (observed order in [lo, hi]);
    Richardson's (the same grids, the same solves) falls only 2^(p+2). Returns the summaries at Ns[0]."""
    a = ["-problem", "pendulum", "-hs_scheme", scheme]
    er, ex, sr0 = [], [], None
    for N in Ns:
        sr = extrapolated(a + ["-N", str(N)] + ROMBERG)
        sx = extrapolated(a + ["-N", str(N), "-hs_extrapolate"])
        if not (sr and sx):
            return None, None
        er.append(abs(sr["extrapolation"]["J"] - PENDULUM_JINF))
        ex.append(abs(sx["extrapolation"]["J"] - PENDULUM_JINF))
        # the same three solves: J, iterations and states bit for bit; the extrapolations differ by Romberg's step
        eR, eX = sr["extrapolation"], sx["extrapolation"]
        check(sr["J"] == sx["J"] and sr["newton_iterations"] == sx["newton_iterations"]
              and sr["_rows"] == sx["_rows"] and eR["grids"] == eX["grids"],
              "%s N = %d: the solves differ with -hs_extrapolate_romberg" % (scheme, N))
        check(eR["romberg"] is True and eX["romberg"] is False, "%s N = %d: romberg member" % (scheme, N))
        check(abs(abs(eR["J"] - eX["J"]) - eX["J_error"]) <= 1e-14 * PENDULUM_JINF and eR["J_error"] == eX["J_error"],
              "%s N = %d: |J_Romberg - J_Richardson| %.3e, Richardson's error estimate %.3e" %
              (scheme, N, abs(eR["J"] - eX["J"]), eX["J_error"]))
        sr0 = sr0 or (sr, sx)
    orr, orx = math.log2(er[0] / er[1]), math.log2(ex[0] / ex[1])
    print("%s, N = %s: |J - J_inf| Romberg %.2e %.2e (order %.2f), Richardson %.2e %.2e (order %.2f)"
          % (scheme, Ns, er[0], er[1], orr, ex[0], ex[1], orx))
    check(lo <= orr <= hi, "%s: Romberg's observed order %.2f, expected %d" % (scheme, orr, p + 4))
    check(abs(orx - (p + 2)) <= 0.5, "%s: Richardson's observed order %.2f, expected %d" % (scheme, orx, p + 2))
    check(er[1] < ex[1] / 10, "%s: Romberg %.2e not 10x below Richardson %.2e" % (scheme, er[1], ex[1]))
    return sr0


def t_order4fast_romberg():
    """conserving4: Romberg's error of J on the pendulum falls as h^8 (N = 160 -> 320: 2.1e-8 -> 8.3e-11 measured),
    Richardson's as h^6, from the same solves; Romberg's J equals the formula applied to three plain solves."""
    sr, _ = romberg_order("conserving4", (160, 320), 4, 7.5, 8.5)
    if not sr:
        return
    J = []
    for N in sr["extrapolation"]["grids"]:
        s, text, _ = run(["-problem", "pendulum", "-hs_scheme", "conserving4", "-N", str(N)] + QUIET)
        check(s and s["converged"], "plain N = %d: %s" % (N, text[-300:]))
        J.append(s["J"] if s else float("nan"))
    R1, R0 = (16 * J[2] - J[1]) / 15, (16 * J[1] - J[0]) / 15
    R2 = R1 + (R1 - R0) / 63
    d = abs(R2 - sr["extrapolation"]["J"])
    print("Romberg of the plain solves at %s: %.15g, hamshoot's %.15g (|d| %.1e)"
          % (sr["extrapolation"]["grids"], R2, sr["extrapolation"]["J"], d))
    check(d <= 1e-12, "Romberg of plain solves %.15g, -hs_extrapolate_romberg %.15g" % (R2, sr["extrapolation"]["J"]))


def t_order4fast_romberg2():
    """The second-order scheme: Romberg's error falls as h^6 (N = 400 -> 800: 9.0e-10 -> 1.4e-11 measured),
    Richardson's as h^4; 1 and 2 ranks give the same Romberg J."""
    sr, _ = romberg_order("conserving", (400, 800), 2, 5.5, 6.5)
    if not sr:
        return
    s2 = extrapolated(["-problem", "pendulum", "-N", "400"] + ROMBERG, ranks=2)
    if s2:
        d = abs(s2["extrapolation"]["J"] - sr["extrapolation"]["J"])
        print("2 ranks: Romberg J %.15g, 1 rank %.15g" % (s2["extrapolation"]["J"], sr["extrapolation"]["J"]))
        check(d <= 1e-12 * PENDULUM_JINF, "Romberg J on 2 ranks differs by %.1e" % d)


def romberg_table(J, W):
    """Romberg's table over the J of the grids N/2^(K-1) .. N (coarsest first): column j eliminates h^(p+2j-2),
    R_{i,j} = R_{i,j-1} + (R_{i,j-1} - R_{i-1,j-1})/(4^(j-1) W - 1), W = 2^p; its last entry."""
    col = list(J)
    for j in range(1, len(J)):
        col = [col[i] + (col[i] - col[i - 1]) / (4 ** (j - 1) * W - 1) for i in range(1, len(col))]
    return col[-1]


def t_order4fast_grids():
    """-hs_extrapolate_grids 4 with conserving4: the Romberg table over N/8 .. N eliminates h^4 .. h^8, so its error
    of J on the pendulum falls as h^10 (N = 160 -> 320: 3.2e-9 -> 2.9e-12 measured), below the three grids' (h^8) at
    320; its J equals the table computed here from four plain solves; Richardson with 4 grids is that of the two finest
    (the same J as with 3); N not a multiple of 8, K = 6 refused; the grids listed in summary.json and the view."""
    a = ["-problem", "pendulum", "-hs_scheme", "conserving4"]
    K4 = ROMBERG + ["-hs_extrapolate_grids", "4"]
    s160, s320 = extrapolated(a + ["-N", "160"] + K4), extrapolated(a + ["-N", "320"] + K4)
    s3 = extrapolated(a + ["-N", "320"] + ROMBERG)
    if not (s160 and s320 and s3):
        return
    e160, e320, e3 = (abs(s["extrapolation"]["J"] - PENDULUM_JINF) for s in (s160, s320, s3))
    order = math.log2(e160 / e320)
    print("K = 4: |J - J_inf| %.2e (N = 160) %.2e (N = 320): order %.2f; K = 3 at 320: %.2e" % (e160, e320, order, e3))
    check(s320["extrapolation"]["grids"] == [40, 80, 160, 320] and s160["extrapolation"]["grids"] == [20, 40, 80, 160],
          "grids %r" % s320["extrapolation"]["grids"])
    check(9.0 <= order <= 11.0, "K = 4 Romberg's observed order %.2f, expected 10" % order)
    check(e320 < e3 / 10, "K = 4 %.2e not 10x below K = 3 %.2e at N = 320" % (e320, e3))
    check(s320["extrapolation"]["reliable"] is True, "K = 4 at N = 320 flagged unreliable")
    J = []
    for N in (40, 80, 160, 320):
        s, text, _ = run(a + ["-N", str(N)] + QUIET)
        check(s and s["converged"], "plain N = %d: %s" % (N, text[-300:]))
        J.append(s["J"] if s else float("nan"))
    R = romberg_table(J, 16.0)
    d = abs(R - s320["extrapolation"]["J"])
    print("Romberg table of the plain solves: %.15g, hamshoot's %.15g (|d| %.1e)" % (R, s320["extrapolation"]["J"], d))
    check(d <= 2e-14 * PENDULUM_JINF, "Romberg table of plain solves %.15g, -hs_extrapolate_grids 4 %.15g"
          % (R, s320["extrapolation"]["J"]))
    check(abs(romberg_table(J[1:], 16.0) - s3["extrapolation"]["J"]) <= 2e-14 * PENDULUM_JINF,
          "K = 3 Romberg J %.15g, the table of three plain solves %.15g" % (s3["extrapolation"]["J"],
                                                                           romberg_table(J[1:], 16.0)))
    sx4 = extrapolated(a + ["-N", "320", "-hs_extrapolate", "-hs_extrapolate_grids", "4"])
    sx3 = extrapolated(a + ["-N", "320", "-hs_extrapolate"])
    if sx4 and sx3:
        x4, x3 = sx4["extrapolation"], sx3["extrapolation"]
        check(x4["romberg"] is False and abs(x4["J"] - x3["J"]) <= 1e-13 * PENDULUM_JINF
              and abs(x4["J"] - (16 * J[3] - J[2]) / 15) <= 1e-13 * PENDULUM_JINF
              and abs(x4["J_order"] - x3["J_order"]) <= 1e-3 and x4["grids"] == [40, 80, 160, 320],
              "Richardson with 4 grids %r, with 3 %r" % (x4, x3))
    for args, want in ((["-N", "100", "-hs_extrapolate", "-hs_extrapolate_grids", "4"],
                        "N = 100 must be a multiple of 8 and at least 16"),
                       (["-N", "320", "-hs_extrapolate", "-hs_extrapolate_grids", "6"], "must lie in [3, 5]")):
        _, text, _ = run(a + args + QUIET, expect_rc=1)
        check(want in text, "%s: %s" % (args, text[-300:]))
    p = subprocess.run([HAMSHOOT] + a + ["-N", "320"] + K4 + QUIET, env=ENV, capture_output=True, text=True,
                       timeout=120)  # not quiet: the view
    check("(Romberg of N = 40, 80, 160, 320;" in p.stdout, "the view: %s" % p.stdout[-600:])


def t_order4fast_grids_restart():
    """SIGTERM in the third of four coarse-first grids (kepler N = 40000 on 2 ranks: N/8 and N/4 converged, N/2
    stopped): exit 3 and a checkpoint at N; -hs_restart from it solves the grids in order again (coarse_grid) and reaches
    the uninterrupted run's J with all four grids."""
    import hs_security18 as h18
    from hs_reliability import run_killed
    args = h18.KEPLER + ["-hs_extrapolate_grids", "4"]
    d = tempfile.mkdtemp()
    rc, out = h18.run2(args + ["-o", "ref"], d)
    check(rc == 0, "the uninterrupted run: exit %d\n%s" % (rc, out[-400:]))
    ref = h18.summary(os.path.join(d, "ref"))
    check(ref["extrapolation"]["grids"] == [5000, 10000, 20000, 40000], "grids %r" % ref["extrapolation"]["grids"])
    od = os.path.join(d, "third")
    text, rc = run_killed(args, 2, "  0 SNES Function norm", 3, outdir=od)  # the third grid's iteration 0
    ck = os.path.join(od, "checkpoint")
    check(rc == 3 and "coarse grids (N = 10000 converged, N = 20000 stopped), checkpoint in %s" % ck in text,
          "SIGTERM in the third grid: exit %d\n%s" % (rc, text[-600:]))
    rc, out = h18.run2(args + ["-o", od, "-hs_restart", ck], d)
    s = h18.summary(od) if rc == 0 else {}
    check(rc == 0 and s.get("converged") and s["initial_guess"].startswith("restarted from a checkpoint of a coarse grid")
          and abs(s["J"] - ref["J"]) <= 1e-10 * abs(ref["J"])
          and s["extrapolation"]["grids"] == [5000, 10000, 20000, 40000]
          and abs(s["extrapolation"]["J"] - ref["extrapolation"]["J"]) <= 1e-10 * abs(ref["J"]),
          "the restart: exit %d, %r\n%s" % (rc, s.get("extrapolation"), out[-400:]))
    shutil.rmtree(d, ignore_errors=True)
