"""Issue 42, items 4 and 7: studies and extrapolations that keep what they finished and report honestly
(docs/accuracy.md).

  study_partial        -hs_study whose finer grid Newton cannot solve (-hs_grid_snes_max_it): retried by
                       -hs_strategy auto (converges: the same J^d as a separate solve at that N); if that fails too,
                       the partial table is written with the failure marked and the run exits 2
  study_roundoff       orders of differences at round-off (H^d of a free-T problem, 0 by transversality) are shown
                       as such (null, "r-off", "differences at round-off"), not as a number
  study_preasymptotic  kepler from N = 4 (orders computed here from three separate solves: H^d's far from 2) is
                       flagged pre-asymptotic and unreliable; the pendulum at N = 320 (order 2) is not
  noise_floor_spread   arm2 at N = 1280: where Newton stops, the H^d spread and balance are within a factor 2 of the
                       smallest that 32 more (forced) iterations reach (2.9 and 3.0 before the polish), and the next
                       iteration would not halve the spread
"""
import csv
import json
import math
import os
import tempfile

from hs_util import check, run

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load(path):
    """A JSON file as a dict ({} if it is missing)."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def t_study_partial():
    """A study grid that Newton cannot solve from the coarser one: retried by the strategy, else kept partial."""
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "p40")
        run(["-problem", "pendulum", "-N", "40"], outdir=base)
        ref, _, _ = run(["-problem", "pendulum", "-N", "80"])  # the grid N = 80 solved on its own
        # two Newton iterations per grid solve: Newton from the interpolated N = 40 (3 needed) fails, -hs_strategy auto
        # solves it (the direct guess: Newton from the direct solution needs 2); N = 160 from N = 80 then needs 2
        out1 = os.path.join(d, "retry")
        _, text, rc = run(["-problem", "pendulum", "-N", "40", "-hs_init", base, "-hs_grid_snes_max_it", "2",
                           "-hs_study", "3", "-hs_check_extremal", "no"], outdir=out1)
        st = load(os.path.join(out1, "study.json"))
        lv = st.get("levels", [])
        check(rc == 0 and st.get("complete") is True and len(lv) == 3 and lv[1].get("retried_by_strategy") is True and
              "again by -hs_strategy auto" in text, "retried study: rc %d, %s\n%s" % (rc, st, text[-800:]))
        if len(lv) == 3 and ref:
            check(abs(lv[1]["J"] - ref["J"]) <= 1e-10 * abs(ref["J"]),
                  "retried grid N = 80: J^d %r, a separate solve %r" % (lv[1]["J"], ref["J"]))
        # no Newton iteration at all: every attempt of the strategy fails; the table so far is written, marked
        out0 = os.path.join(d, "fail")
        _, text, rc = run(["-problem", "pendulum", "-N", "40", "-hs_init", base, "-hs_grid_snes_max_it", "0",
                           "-hs_study", "4", "-hs_check_extremal", "no"], expect_rc=2, outdir=out0)
        st = load(os.path.join(out0, "study.json"))
        rows = list(csv.DictReader(open(os.path.join(out0, "study.csv")))) if os.path.exists(
            os.path.join(out0, "study.csv")) else []
        print("failed study: rc %d, complete %s, failed %s, csv %s" % (rc, st.get("complete"), st.get("failed"),
                                                                       [(r["N"], r["status"]) for r in rows]))
        check(rc == 2 and st.get("complete") is False and st.get("failed", {}).get("N") == 80 and
              st["failed"].get("retried_by_strategy") is True and [l["N"] for l in st.get("levels", [])] == [40],
              "failed study: rc %d, study.json %s" % (rc, st))
        check([(r["N"], r["status"]) for r in rows] == [("40", "converged"), ("80", "NOT converged")],
              "failed study: study.csv %s" % rows)
        check("NOT converged, nor by -hs_strategy auto" in text and "hamshoot convergence study" in text,
              "failed study: screen\n" + text[-1000:])


def t_study_roundoff():
    """H^d of a free-T problem without terminal cost is 0 on every grid (H(T) = 0): its orders are round-off."""
    prob = os.path.join(os.path.dirname(DATA), "..", "problems", "double_integrator_free_T.ocp")
    with tempfile.TemporaryDirectory() as d:
        s, text, _ = run(["-problem", prob, "-N", "20", "-hs_study", "3", "-hs_check_extremal", "no"], outdir=d)
        st = load(os.path.join(d, "study.json"))
        lv = st.get("levels", [])
        check(len(lv) == 3 and all(abs(l["H_mean"]) <= 1e-12 for l in lv), "H^d means %s" % [l.get("H_mean") for l in lv])
        if len(lv) == 3:
            print("study level 1: order_J %s, order_H %s, at round-off %s" % (lv[1].get("order_J"), lv[1].get("order_H"),
                                                                            lv[1].get("roundoff_orders")))
            check(lv[1].get("order_H") is None and "order_H" in lv[1].get("roundoff_orders", []) and
                  abs(lv[1]["order_J"] - 2) <= 0.1, "study orders at N = 40: %s" % lv[1])
        check("r-off" in text, "study table without r-off:\n" + text[-1200:])
    s, text, _ = run(["-problem", prob, "-N", "80", "-hs_extrapolate", "-hs_check_extremal", "no"])
    e = (s or {}).get("extrapolation", {})
    check(e.get("H_mean_order") is None and e.get("H_mean_order_at_roundoff") is True and
          e.get("J_order_at_roundoff") is False and abs(e.get("J_order", 0) - 2) <= 0.05 and e.get("reliable") is True,
          "extrapolation: %s" % e)
    check("(mean; differences at round-off)" in text, "extrapolated H^d line:\n" + text[-800:])


def t_study_preasymptotic():
    """The order of H^d from N = 4, 8, 16 (kepler), computed here, is far from 2: flagged; the pendulum's is not."""
    for prob, N, pre in (("kepler", 16, True), ("pendulum", 320, False)):
        H = []
        for n in (N // 4, N // 2, N):
            s, _, _ = run(["-problem", prob, "-N", str(n), "-hs_check_extremal", "no"])
            H.append((s or {}).get("H_mean", math.nan))
        p = math.log2(abs((H[0] - H[1]) / (H[1] - H[2])))
        s, text, _ = run(["-problem", prob, "-N", str(N), "-hs_extrapolate", "-hs_check_extremal", "no"])
        e = (s or {}).get("extrapolation", {})
        print("%s N = %d: order of H^d from separate solves %.3f, extrapolation's %s, pre_asymptotic %s"
              % (prob, N, p, e.get("H_mean_order"), e.get("pre_asymptotic")))
        check((abs(p - 2) > 0.5) == pre, "%s: the independent order %.3f" % (prob, p))
        check(e.get("pre_asymptotic") is pre and e.get("reliable") is (not pre) and
              abs(e.get("H_mean_order", 0) - p) <= 1e-3 and ("pre-asymptotic" in text) == pre,
              "%s: extrapolation %s\n%s" % (prob, e, text[-600:]))


def t_noise_floor_spread():
    """arm2 at N = 1280: the H^d spread and balance where Newton stops against the smallest reached by forcing more
    iterations (before the polish: 4.0e-8 where 1.4e-8 and 1.3e-8 were reachable, 2.9 and 3.0 times more)."""
    arm = os.path.join(DATA, "arm2.ocp")
    base = ["-problem", arm, "-N", "1280", "-hs_check_extremal", "no"]
    s, _, _ = run(base)
    if not s:
        check(False, "arm2 N = 1280: no summary")
        return
    it0, h0, b0 = s["newton_iterations"], s["H_spread"], s["H_balance"]
    force = base + ["-hs_strategy", "newton", "-hs_snes_noise", "0", "-hs_snes_roundoff", "1e-3", "-snes_atol", "1e-30",
                    "-snes_rtol", "0", "-snes_stol", "0"]
    spreads, balances = {}, {}
    for k in (1, 2, 8, 16, 32):
        f, _, _ = run(force + ["-snes_max_it", str(it0 + k)], expect_rc=2)
        spreads[k] = (f or {}).get("H_spread", math.nan)
        balances[k] = (f or {}).get("H_balance", math.nan)
    best, bbest = min(spreads.values()), min(balances.values())
    print("arm2 N = 1280: stop after %d iterations (%s polishing), H^d spread %.3e, balance %.3e; forced %s; best %.3e, "
          "%.3e (%.2f, %.2f times better)" % (it0, s.get("polish_iterations"), h0, b0,
                                               {k: "%.2e" % v for k, v in spreads.items()}, best, bbest, h0 / best,
                                               b0 / bbest))
    check(s["converged"] and h0 <= 2 * best and b0 <= 2 * bbest,
          "the stop's spread %.3e, balance %.3e against the best %.3e, %.3e" % (h0, b0, best, bbest))
    check(spreads[1] >= h0 / 2, "the next iteration halves the spread: %.3e -> %.3e" % (h0, spreads[1]))
    off, _, _ = run(base + ["-hs_snes_polish", "0"])  # the polish off: the stop's iterate itself, fewer iterations
    check(off and off["converged"] and off.get("polish_iterations", 0) == 0 and s.get("polish_iterations", 0) > 0 and
          off["newton_iterations"] == it0 - s["polish_iterations"] and off["H_balance"] > b0,
          "-hs_snes_polish 0: %s iterations, balance %s (with the polish: %d of them polish, %.3e)"
          % (off and off["newton_iterations"], off and off["H_balance"], s.get("polish_iterations", 0), b0))
