#!/usr/bin/python3
"""A cost model fitted to the per-phase times of bench/strong_weak.py's results.json (issue 44; bench/README.md).

Per Newton iteration (each phase's -log_view time on the slowest rank, divided by the run's Newton iterations;
HsBandLayout, once a solve, is spread over them), for transcription runs that were not oversubscribed (of
repeated runs the fastest, as in strong_weak.py's tables):

    T(P) = a N / P + b log2 P + c

  a  interior work per node: SNESFunctionEval + SNESJacobianEval + HsBandLayout + HsBandElim + HsBandSolve,
     fitted (least squares through 0) against N / P; the slowest rank's time, so imbalance raises it;
  b  one level of the reduced system: its own work, HsBandRedFactor + HsBandRedSolve (the merges and the solves'
     sweeps; HsBandReduced where a build has no finer events) against log2 P (least squares through 0, P > 1),
     the cost of block cyclic reduction's levels (a neighbour exchange and a few dense block operations each);
     the rest of HsBandReduced is the fast ranks' wait for the slowest elimination (imbalance, shown as "wait",
     not fitted: it is part of the slowest rank's interior time already);
  c  the rest (wall_time_s less the phases: line search, norms, convergence test, latency), its mean.

A node-saturated prediction beside it: a fitted through the origin mixes one rank's per-node cost with 16 ranks'
(which share the node's memory bandwidth: bench/stream_bench), and c is not constant (it holds N / P work: norms,
the line search's vector operations). For P beyond the largest measured P (a full node, P_node ranks) the whole
iteration's per-node cost there, a_node = (wall / it - reduced) / (N / P), is used, each further node bringing its
own bandwidth, plus --latency seconds per message (4 a level and Newton iteration: the factorization's rows and ids
up, the solve's right-hand side up and values down; 2 us default, an inter-node MPI latency):
T(P) = a_node N / P + (b + 4 latency) log2 P; its efficiency against one rank (a_1 N, a_1 the 1-rank run's wall per
node) and against one full node (T(P_node) P_node / (P T(P))): what more nodes add beyond the node's own limit.

Each is fitted to its own phase; the sum is checked against the measured wall time per iteration at every
run (the residuals), and a joint least-squares fit of the three to the wall time alone is printed beside it.
The reduced phase is also fitted as r P^k (log-log, P > 1): with today's dense gather to rank 0 k comes out
well above 0 and the log2 P model does not hold; the predictions are printed for both. Predicted efficiency
E(P) = T(1) / (P T(P)) with T(1) = a N + c, for P = 64 ... 1024 at N = 1e6 and 1e8.

The flops of the reduced system on the busiest rank (HsBandReduced and any finer HsBandReduce* events) are
listed against P with their ratio to log2 P (the target: not growing faster than log P); a build whose band
solver logs no flops shows 0.

  python3 bench/scaling_model.py OUT/results.json [--problems kepler] [--N 1e6,1e8]
"""
import argparse, json, math, sys

INTERIOR = ("SNESFunctionEval", "SNESJacobianEval", "HsBandLayout", "HsBandElim", "HsBandSolve")
PREDICT_P = (64, 128, 256, 512, 1024)


def fastest(runs):
    """The fastest run of each (problem, bvp, N, P) (strong_weak.py's --repeat: the least disturbed counts)."""
    best = {}
    for r in runs:
        k = (r["problem"], r["bvp"], r["N"], r["ranks"])
        if r.get("converged") and "wall_time_s" in r and (k not in best or r["wall_time_s"] < best[k]["wall_time_s"]):
            best[k] = r
    return list(best.values())


def points(runs, problem):
    """Per usable run (the fastest of each N and P): dict(P, N, interior, reduced, other, total), seconds per Newton
    iteration."""
    pts = []
    for r in fastest(runs):
        if (r["problem"] != problem or r["bvp"] != "transcription" or r.get("oversubscribed") or
                not r.get("converged") or not r.get("newton_iterations") or "wall_time_s" not in r):
            continue
        k, e = r["newton_iterations"], r["events"]
        t = lambda n: e.get(n, {}).get("time_max", 0.0) / k
        interior, total = sum(t(n) for n in INTERIOR), r["wall_time_s"] / k
        if "HsBandRedFactor" in e:  # the cyclic reduction's own work; the rest of HsBandReduced is waiting
            reduced = t("HsBandRedFactor") + t("HsBandRedSolve")
            wait = max(t("HsBandReduced") - t("HsBandRedFactor"), 0.0)
        else:
            reduced, wait = t("HsBandReduced"), 0.0
        pts.append(dict(P=r["ranks"], N=r["N"], name=r["name"], interior=interior, reduced=reduced, total=total,
                        wait=wait, other=total - interior - reduced))
    return pts


def through_zero(xs, ys):
    sxx = sum(x * x for x in xs)
    return sum(x * y for x, y in zip(xs, ys)) / sxx if sxx else 0.0


def solve3(A, y):
    """Least squares for 3 unknowns by the normal equations (Gaussian elimination, partial pivoting), or None."""
    M = [[sum(r[i] * r[j] for r in A) for j in range(3)] + [sum(r[i] * v for r, v in zip(A, y))] for i in range(3)]
    for i in range(3):
        p = max(range(i, 3), key=lambda j: abs(M[j][i]))
        if abs(M[p][i]) < 1e-300:
            return None
        M[i], M[p] = M[p], M[i]
        for j in range(i + 1, 3):
            f = M[j][i] / M[i][i]
            M[j] = [u - f * v for u, v in zip(M[j], M[i])]
    x = [0.0] * 3
    for i in (2, 1, 0):
        x[i] = (M[i][3] - sum(M[i][j] * x[j] for j in range(i + 1, 3))) / M[i][i]
    return x


def fit(pts):
    """(a, b, c, power-law (r, k) or None, joint (a, b, c) or None)."""
    a = through_zero([p["N"] / p["P"] for p in pts], [p["interior"] for p in pts])
    many = [p for p in pts if p["P"] > 1]
    b = through_zero([math.log2(p["P"]) for p in many], [p["reduced"] for p in many])
    c = sum(p["other"] for p in pts) / len(pts)
    pos = [p for p in many if p["reduced"] > 0]
    power = None
    if len({p["P"] for p in pos}) >= 2:
        xs, ys = [math.log(p["P"]) for p in pos], [math.log(p["reduced"]) for p in pos]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        power = (math.exp(my - k * mx), k)
    joint = None
    if len({(p["N"] / p["P"], p["P"]) for p in pts}) >= 3 and len({p["P"] for p in pts}) >= 3:
        joint = solve3([[p["N"] / p["P"], math.log2(p["P"]), 1.0] for p in pts], [p["total"] for p in pts])
    return a, b, c, power, joint


def model(a, b, c, N, P):
    return a * N / P + b * math.log2(P) + c


def report(problem, pts, Ns, latency=2e-6):
    """The fit, its residuals and the predictions for one problem, markdown lines."""
    a, b, c, power, joint = fit(pts)
    out = ["## %s (transcription; seconds per Newton iteration)\n" % problem,
           "T(P) = a N/P + b log2 P + c with a = %.4g s per node (%.3g us), b = %.4g s per level, c = %.4g s"
           % (a, a * 1e6, b, c)]
    if joint:
        out.append("(joint least squares on the wall time alone: a = %.4g, b = %.4g, c = %.4g)" % tuple(joint))
    if power:
        out.append("reduced phase as r P^k: r = %.4g s, k = %.2f (k near 0 with a log2 P growth; 3 for a dense "
                   "gathered LU of P blocks)" % power)
    out += ["", "| run | P | N | interior (fit) | reduced (fit) | wait | other | wall / it | model | residual |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for p in sorted(pts, key=lambda p: (p["N"], p["P"])):
        m = model(a, b, c, p["N"], p["P"])
        out.append("| %s | %d | %d | %.4g (%.4g) | %.4g (%.4g) | %.4g | %.4g | %.4g | %.4g | %+.0f %% |" % (
            p["name"], p["P"], p["N"], p["interior"], a * p["N"] / p["P"], p["reduced"], b * math.log2(p["P"]),
            p["wait"], p["other"], p["total"], m, 100 * (m - p["total"]) / p["total"]))
    out += ["", "Predicted (per Newton iteration; efficiency T(1) / (P T(P)), T(1) = a N + c):", "",
            "| N | P | T(P) log2 model | efficiency | T(P) reduced as r P^k | efficiency |", "|---|---|---|---|---|---|"]
    for N in Ns:
        t1 = a * N + c
        for P in PREDICT_P:
            t = model(a, b, c, N, P)
            tp = a * N / P + power[0] * P ** power[1] + c if power else None
            out.append("| %.0e | %d | %.4g s | %.0f %% | %s | %s |" % (
                N, P, t, 100 * t1 / (P * t), "%.4g s" % tp if tp else "-", "%.1f %%" % (100 * t1 / (P * tp))
                if tp else "-"))
    node = max(pts, key=lambda p: (p["P"], p["N"]))
    ones = [p for p in pts if p["P"] == 1]
    a_node = (node["total"] - node["reduced"]) / (node["N"] / node["P"])
    a_1 = ones[0]["total"] / ones[0]["N"] if ones else a_node
    lev = b + 4 * latency
    out += ["", "Node-saturated: a_node = %.4g s a node at P_node = %d (%.2fx one rank's %.4g), b + 4 latency = %.3g s a "
            "level:" % (a_node, node["P"], a_node / a_1, a_1, lev), "",
            "| N | P | T(P) | efficiency against 1 rank | against 1 node | reduced levels |", "|---|---|---|---|---|---|"]
    for N in Ns:
        tn = a_node * N / node["P"] + lev * math.log2(node["P"])
        for P in PREDICT_P:
            t = a_node * N / P + lev * math.log2(P)
            out.append("| %.0e | %d | %.4g s | %.0f %% | %.0f %% | %.2g s |" % (
                N, P, t, 100 * a_1 * N / (P * t), 100 * tn * node["P"] / (P * t), lev * math.log2(P)))
    return out + [""]


def flops_report(runs):
    """The reduced system's flops on the busiest rank against P, markdown lines."""
    rows = {}
    for r in runs:
        if not r.get("converged"):
            continue
        for name, e in r["events"].items():
            if name.startswith("HsBandReduce"):
                rows.setdefault((r["problem"], r["bvp"], r["N"], name), {})[r["ranks"]] = e
    out = ["## The reduced system's flops on the busiest rank\n"]
    if not rows:
        return out + ["(no HsBandReduce* events in these runs)", ""]
    if not any(e["flops_max"] for g in rows.values() for e in g.values()):
        out += ["(every HsBandReduce* event logged 0 flops: this build's band solver does not call PetscLogFlops)", ""]
    out += ["| problem | bvp | N | event | P | flops (busiest rank) | max/min | time | flops / log2 P |",
            "|---|---|---|---|---|---|---|---|---|"]
    for (prob, bvp, N, name), g in sorted(rows.items()):
        for P in sorted(g):
            e = g[P]
            per = "%.3g" % (e["flops_max"] / math.log2(P)) if P > 1 else "-"
            ratio = "inf" if e["flops_max"] and not e["flops_ratio"] else "%.1f" % e["flops_ratio"]
            out.append("| %s | %s | %d | %s | %d | %.3g | %s | %.3g s | %s |" % (
                prob, bvp, N, name, P, e["flops_max"], ratio, e["time_max"], per))
    return out + ["", "flops / log2 P flat or falling from one P to the next: the busiest rank's reduced work "
                  "grows no faster than log P (issue 44's target).", ""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--problems", default="", help="default: every problem with transcription runs")
    ap.add_argument("--N", default="1e6,1e8", help="the N of the predictions")
    ap.add_argument("--latency", type=float, default=2e-6, help="seconds a message between nodes (node-saturated model)")
    a = ap.parse_args()
    runs = json.load(open(a.results))["runs"]
    probs = a.problems.split(",") if a.problems else sorted({r["problem"] for r in runs})
    out = ["# Scaling model (bench/scaling_model.py)\n"]
    for prob in probs:
        pts = points(runs, prob)
        if len({p["P"] for p in pts}) < 2:
            out.append("## %s: fewer than 2 rank counts measured (not oversubscribed, transcription): no fit\n" % prob)
            continue
        out += report(prob, pts, [float(x) for x in a.N.split(",")], a.latency)
    out += flops_report(runs)
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
