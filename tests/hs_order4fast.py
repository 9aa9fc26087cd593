"""hamshoot system tests of issue 43's speed targets, fourth session (bench/README.md, "Romberg"):
-hs_extrapolate_romberg eliminates h^p and h^(p+2) from -hs_extrapolate's three grids (the symmetric conserving
schemes expand J in even powers of h), so its error falls as h^8 for conserving4 and h^6 for the second-order scheme.
Expected values: the pendulum's J_inf of docs/theory.md section 4.1 (independent: tests/crosscheck's continuous
necessary conditions by scipy), the powers of h from the schemes' symmetry, and Romberg's formula applied here to the
J of three separate plain solves.
"""
import math

from hs_util import check, run

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
