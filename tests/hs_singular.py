"""hamshoot system tests of issue 42, item 2: the diagnosis of singular systems. Terminal conditions that a conserved
quantity makes dependent (a rank test of the boundary rows before the solve, bvp/interface/singular.c), and the
rank test of the Jacobian after a failed linear solve (docs/problem-format.md, "Conserved quantities and terminal
conditions").
"""
import os
import re
import tempfile

from hs_util import check, run

HERE = os.path.dirname(os.path.abspath(__file__))
WHEEL = os.path.join(HERE, "data", "wheel_rest.ocp")
NO_EXTRA = ["-hs_check_extremal", "no"]


def _follow_advice(text, d):
    """The problem file with the xT line that the redundancy's diagnosis suggests, in directory d."""
    m = re.search(r"leave it free \(conservation then fixes it\): xT: ([^(]*?) \(or", text)
    check(m is not None, "no suggested xT line in: %s" % text)
    src = open(WHEEL).read()
    path = os.path.join(d, "wheel_free.ocp")
    with open(path, "w") as f:
        f.write(re.sub(r"(?m)^xT:.*$", "xT: " + m.group(1), src))
    return path, m.group(1)


def t_singular_boundary():
    """Rest to rest fixes both momenta of a satellite with a reaction wheel at T, where p_th + p_w is conserved for
    any control: refused before the solve, naming the quantity and the dependent condition; the suggested xT line
    (that condition free) converges on 1 and 2 ranks, and the freed momentum equals the value that was fixed to
    round-off (conservation, exact for this quadratic energy); the cost is the analytic rest-to-rest optimum
    J = 6 Ib^2 / T^3 to O(h^2). Inconsistent end data: "infeasible". Problems without a linear invariant fixed at
    both ends (pendulum, swing-up, kepler, whose angular momentum is not linear in x): no report."""
    cases = [([], 0.0, 0.0), (["-p_p0", "0.3", "-p_w0", "-0.1", "-p_pT", "0.25", "-p_wT", "-0.05"], 0.3 - 0.1, 0.25)]
    for extra, total, pth_T in cases:
        _, text, _ = run(["-problem", WHEEL] + extra, expect_rc=1)
        check("redundant terminal condition" in text and "p_th + p_w is conserved" in text, "diagnosis: %s" % text)
        check("p_th(T) follows from x0" in text, "the dependent condition is not named: %s" % text)
        with tempfile.TemporaryDirectory() as d:
            path, line = _follow_advice(text, d)
            check(line.replace(" ", "").split(",")[2] == "*", "p_th(T) should be the one left free: %s" % line)
            for ranks in (1, 2):
                s, _, _ = run(["-problem", path] + extra + NO_EXTRA, ranks=ranks, outdir=os.path.join(d, "o%d" % ranks))
                check(s["converged"], "the suggested problem did not converge on %d ranks" % ranks)
                last = {k: float(v) for k, v in s["_rows"][-1].items() if k in ("p_th", "p_w")}
                check(abs(last["p_th"] - pth_T) <= 1e-12 and abs(last["p_th"] + last["p_w"] - total) <= 1e-12,
                      "freed p_th(T) = %.17g, expected %.17g (conservation)" % (last["p_th"], pth_T))
                if not extra:  # rest to rest, th 0 -> 1 in T = 2 with Ib = 2: J = 6 Ib^2 / T^3 = 3
                    check(abs(s["J"] - 3.0) < 0.01, "J^d = %.10g, expected 3 + O(h^2)" % s["J"])
    _, text, _ = run(["-problem", WHEEL, "-p_p0", "0.1"], expect_rc=1)
    check("infeasible terminal condition" in text and "(0.1 at t = 0, 0 from the fixed terminal values)" in text,
          "inconsistent end data: %s" % text)
    for prob in ("pendulum", "kepler", os.path.join(HERE, "data", "swingup.ocp")):
        _, text, _ = run(["-problem", prob, "-snes_max_it", "2", "-hs_strategy", "newton"] + NO_EXTRA, expect_rc=None)
        check("terminal condition" not in text, "false report on %s: %s" % (prob, text))


def t_singular_jacobian():
    """With the boundary test off (-hs_check_boundary false), single shooting's Jacobian of the rest-to-rest wheel
    is exactly singular: the Newton solve fails in its linear solve, and the Jacobian's rank test names its null
    space: one direction, the costates of the conserved p_th + p_w (lambda = c constant leaves u = B^T lambda and
    every equation unchanged), and the terminal conditions on p_th and p_w as the dependent equations, in the
    diagnosis line and summary.json, on 1 and 2 ranks. With the default strategy the fallbacks' own solvers do not
    refuse the problem either."""
    for ranks in (1, 2):
        s, text, _ = run(["-problem", WHEEL, "-hs_check_boundary", "false", "-hs_bvp_type", "shooting",
                          "-hs_strategy", "newton"] + NO_EXTRA, ranks=ranks, expect_rc=2)
        dg = s["diagnosis"]
        check(s["snes_reason"] == "DIVERGED_LINEAR_SOLVE", "reason %s" % s["snes_reason"])
        check(dg.startswith("the Jacobian is singular (1 of 8 singular values"), "diagnosis: %s" % dg)
        unknowns, equations = dg.split("; dependent equations: ")
        check("lambda_p_th" in unknowns and "lambda_p_w" in unknowns and "lambda_th" not in unknowns
              and "lambda_w" not in unknowns, "null space: %s" % unknowns)
        check("terminal condition p_th(T)" in equations and "terminal condition p_w(T)" in equations,
              "dependent equations: %s" % equations)
        check(dg in text, "the diagnosis line differs from summary.json")
    # -hs_check_boundary false holds for the strategy's sub-solvers too: grid sequencing (transcription solvers of
    # their own) converges, as it did before the boundary test existed
    s, text, _ = run(["-problem", WHEEL, "-hs_check_boundary", "false", "-hs_bvp_type", "shooting"] + NO_EXTRA)
    check(s["converged"] and "terminal condition" not in text, "with the test off: %s" % text)


def t_singular_satellite():
    """Issue 42's satellite: a rigid body in Euler angles with three rotors, rest to rest (all momenta fixed at T),
    whose spatial angular momentum L is conserved and zero. The boundary test names p_psi (yaw is cyclic: the one
    component of L linear in x); with p_psi(T) left free as suggested, Newton from the default guess fails in its
    linear solve and the Jacobian's rank test names the two remaining directions, the costates of p_th and p_ph
    (L_x, L_y, not linear in x), on 1 and 2 ranks; with those left free too the solve converges and the freed
    momenta are 0 at T to round-off, as L = 0 requires (p_psi, p_th, p_ph are L's body components, mixed by an
    invertible matrix of the angles)."""
    sat = os.path.join(HERE, "data", "satellite_rotors.ocp")
    _, text, _ = run(["-problem", sat], expect_rc=1)
    check("redundant terminal condition: p_psi is conserved" in text and "p_psi(T) follows" in text, text)
    src = open(sat).read()
    with tempfile.TemporaryDirectory() as d:
        one, three = os.path.join(d, "one.ocp"), os.path.join(d, "three.ocp")
        with open(one, "w") as f:
            f.write(re.sub(r"(?m)^xT:.*$", "xT: 0.3, 0.2, 0.1, *, *, *, *, 0, 0, 0, 0, 0", src))
        with open(three, "w") as f:
            f.write(re.sub(r"(?m)^xT:.*$", "xT: 0.3, 0.2, 0.1, *, *, *, *, *, *, 0, 0, 0", src))
        for ranks in (1, 2):
            s, _, _ = run(["-problem", one, "-hs_strategy", "newton"] + NO_EXTRA, ranks=ranks, expect_rc=2)
            dg = s["diagnosis"]
            check(dg.startswith("the Jacobian is singular (2 of "), "diagnosis: %s" % dg)
            unknowns = dg.split("; dependent equations: ")[0]
            named = set(re.findall(r"lambda_(\w+) \(nodes", unknowns))
            check(named == {"p_th", "p_ph"}, "null space %s, expected the costates of p_th, p_ph" % named)
            check("costates alone" in dg, "no advice: %s" % dg)
        s, _, _ = run(["-problem", three, "-hs_strategy", "newton"] + NO_EXTRA)
        check(s["converged"], "the satellite with p_psi, p_th, p_ph free at T did not converge")
        last = s["_rows"][-1]
        worst = max(abs(float(last[k])) for k in ("p_psi", "p_th", "p_ph"))
        check(worst <= 1e-12, "freed momenta at T: max %.3g, expected 0 (L = 0)" % worst)
