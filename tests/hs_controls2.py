"""hamshoot system tests closing issue 41 (docs/controls.md, "What issue 41 asked and where it stands"): a force and a
control cost that depend on the time t in -hs_scheme conserving4 (the exact balance of the mean of H at a substep's two
times), conserving4's switching times, and the "Done when" matrix of the three reference problems.
"""
import json
import os
import subprocess
import sys
import tempfile

from hs_util import check, order, run

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
PROBLEMS = os.path.join(HERE, "..", "problems")
C4 = ["-hs_scheme", "conserving4", "-hs_check_extremal", "no"]


def t_controls_time():
    """tests/data/swing_atan_t.ocp: the force (1 + 0.5 sin t) atan(v), nonlinear in v and time-dependent, with conserving4
    against scipy's solve_bvp of the Pontryagin BVP (tests/crosscheck/swing_atan_t.py, the maximizer by Cardano): J at
    order 4 (N = 10, 20, 40) and within 1e-5 at N = 40, lambda(0) within 1e-4; the exact balance H(b, tb) - H(a, ta) - Dt
    at round-off on 1 and 2 ranks (without the control term's time differences in Dt it would be O(h^3) per substep);
    a free T with a time-dependent force is refused when the file is read."""
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    p = subprocess.run([py, os.path.join(HERE, "crosscheck", "swing_atan_t.py")], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    check(p.returncode == 0, "swing_atan_t crosscheck failed: " + p.stdout[-1000:])
    if p.returncode:
        return
    ref = json.loads(p.stdout.strip().splitlines()[-1])
    check(ref["status"] == 0, "solve_bvp status %s" % ref["status"])
    prob = os.path.join(DATA, "swing_atan_t.ocp")
    err = []
    for N, ranks in ((10, 1), (20, 1), (40, 1), (40, 2)):
        s, out, _ = run(["-problem", prob, "-N", str(N)] + C4, ranks=ranks)
        check(s and s["converged"], "swing_atan_t N=%d on %d ranks did not converge: %s" % (N, ranks, out[-300:]))
        if not s or not s["converged"]:
            return
        r0 = s["_rows"][0]
        dl = max(abs(float(r0["lambda_q_s"]) - ref["lambda0"][0]), abs(float(r0["lambda_p_s"]) - ref["lambda0"][1]))
        print("N=%d ranks=%d: J %.12f (scipy %.12f, error %.2e), lambda(0) error %.1e, H_balance %.1e, H spread %.1e"
              % (N, ranks, s["J"], ref["J"], s["J"] - ref["J"], dl, s["H_balance"], s["H_spread"]))
        check(s["H_balance"] < 1e-13, "swing_atan_t N=%d: H_balance %.1e, not round-off" % (N, s["H_balance"]))
        check(s["H_spread"] > 1e-3, "swing_atan_t: H should vary (the problem depends on t): %.1e" % s["H_spread"])
        if ranks == 1:
            err.append(abs(s["J"] - ref["J"]))
        if N == 40:
            check(abs(s["J"] - ref["J"]) < 1e-5 and dl < 1e-4, "swing_atan_t N=40: J error %.1e, lambda(0) %.1e"
                  % (s["J"] - ref["J"], dl))
    orders = [order(err[i], err[i + 1]) for i in range(len(err) - 1)]
    print("orders of J:", ["%.2f" % o for o in orders])
    check(all(3.5 < o < 4.5 for o in orders), "swing_atan_t: orders of J %s, expected about 4" % orders)
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "free.ocp")
        with open(prob) as src:
            text = src.read().replace("T: 3", "T: free 3")
        with open(f, "w") as dst:
            dst.write(text)
        _, out, rc = run(["-problem", f] + C4, expect_rc=None)
        check(rc != 0 and "free T needs an autonomous problem" in out, "free T with a force in t not refused: %s"
              % out[-300:])
