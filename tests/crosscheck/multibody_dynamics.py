#!/usr/bin/python3
"""Independent check of a hamshoot trajectory of the 3-link arm or the crane:
the mechanics are rebuilt here from their geometric description (docs/theory.md
section 4), not from hamshoot's formulas, and the discrete equations that the
trajectory must satisfy are evaluated with them.

  manipulator3: planar 3-link arm, relative angles alpha, absolute angles
    theta_i = alpha_1 + ... + alpha_i; centre of link i
    phi_i = sum_{j<i} l_j d_j + l_i d_i / 2, d_j = (cos theta_j, sin theta_j);
    M = sum_i m_i Jphi_i^T Jphi_i + J_i Jw_i^T Jw_i, Jw_i = (1,..,1 (i ones), 0..);
    V = g sum_i m_i phi_i . e2; B = I.
  crane: q = (s, l, a); redundant positions (s, beta = l/r, x = s + l sin a,
    z = l cos a) with masses diag(m_t, J, m, m): M = Jpos^T diag Jpos;
    V = -m g z; B = [[1, 0], [0, 1/r], [0, 0]].

The position Jacobians are taken by the complex step (exact to round-off for
these analytic functions), the gradient of E = 1/2 p^T M(q)^{-1} p + V(q) in q
by central differences: no derivative is hand-written here.

Checks (relative to the size of the terms):
  direct (midpoint states): (q_{k+1}-q_k)/h = M(q_m)^{-1} p_m and
    (p_{k+1}-p_k)/h = -grad_q E(x_m) + B u_k at x_m = (x_k + x_{k+1})/2;
  conserving (energy-consistent states): the discrete energy balance
    E(x_{k+1}) - E(x_k) = (q_{k+1} - q_k)^T B u_k;
  both: x(0) = x0, x(T) = xT, u_k = R^{-1} B^T lambda^p_{k+1/2}, and
    J = h sum_k 1/2 u_k^T R u_k equals the summary's J.

Usage: multibody_dynamics.py PROBLEM trajectory.csv summary.json [name=value ...]
Output: JSON with the measured residuals; exit status 0 iff all are below tolerance.
"""
import csv
import os
import json
import sys

import numpy as np

CS = 1e-30  # complex step


def arm(params):
    m = np.array([30.0, 25.0, 10.0])
    Jp = np.array([1.225 + 143.3027, 1.0208 + 88.0208, 0.4083 + 60.2083])
    l = np.array([7.0, 6.0, 8.0])
    g = params.get("g", 9.81)

    def centres(q):
        th = np.cumsum(q)
        d = np.array([np.cos(th), np.sin(th)])  # 2 x 3
        c = []
        for i in range(3):
            c.append(sum(l[j] * d[:, j] for j in range(i)) + 0.5 * l[i] * d[:, i])
        return c

    def mass(q):
        M = np.zeros((3, 3))
        for i in range(3):
            Jphi = np.zeros((2, 3))
            for k in range(3):
                e = np.zeros(3, dtype=complex)
                e[k] = 1j * CS
                Jphi[:, k] = centres(np.asarray(q, dtype=float) + e)[i].imag / CS
            Jw = np.array([1.0 if k <= i else 0.0 for k in range(3)])
            M += m[i] * Jphi.T @ Jphi + Jp[i] * np.outer(Jw, Jw)
        return M

    def potential(q):
        return g * sum(m[i] * centres(q)[i][1] for i in range(3))

    return dict(n=3, m=3, mass=mass, potential=potential, B=np.eye(3), R=np.eye(3),
                x0=np.array([np.pi / 2, -np.pi / 2, np.pi / 2, 0, 0, 0]),
                xT=np.array([np.pi / 2, 0, 0, 0, 0, 0]))


def crane(params):
    mt, Jw, mload, r, g = (params.get(k, v) for k, v in (("mt", 10.0), ("J", 0.1), ("m", 100.0), ("r", 0.1),
                                                         ("g", 9.81)))
    D = np.diag([mt, Jw, mload, mload])

    def positions(q):
        s, l, a = q
        return np.array([s, l / r, s + l * np.sin(a), l * np.cos(a)])

    def mass(q):
        Jpos = np.zeros((4, 3))
        for k in range(3):
            e = np.zeros(3, dtype=complex)
            e[k] = 1j * CS
            Jpos[:, k] = positions(np.asarray(q, dtype=float) + e).imag / CS
        return Jpos.T @ D @ Jpos

    def potential(q):
        return -mload * g * positions(q)[3]

    B = np.array([[1.0, 0.0], [0.0, 1.0 / r], [0.0, 0.0]])
    return dict(n=3, m=2, mass=mass, potential=potential, B=B, R=np.eye(2),
                x0=np.array([0, 4, 0, 0, 0, 0.0]), xT=np.array([5, 1, 0, 0, 0, 0.0]))


def energy(P, q, p):
    return 0.5 * p @ np.linalg.solve(P["mass"](q), p) + P["potential"](q)


def grad_q_energy(P, q, p):
    """central differences of E in q (step 1e-5 (1 + |q_k|): truncation O(1e-10), round-off
    O(eps |E| / 1e-5) relative to the gradient's size, both far below the 1e-8 tolerance)"""
    n = P["n"]
    g = np.zeros(n)
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1e-5 * (1 + abs(q[k]))
        g[k] = (energy(P, q + e, p) - energy(P, q - e, p)) / (2 * e[k])
    return g


def main():
    prob, traj, summ = sys.argv[1:4]
    params = {k: float(v) for k, v in (a.split("=") for a in sys.argv[4:])}
    P = {"manipulator3": arm, "crane": crane}[prob](params)
    n, m = P["n"], P["m"]
    rows = list(csv.DictReader(open(traj)))  # nodes; the interval quantities are in intervals.csv
    ints = list(csv.DictReader(open(os.path.join(os.path.dirname(traj), "intervals.csv"))))
    for k, r in enumerate(ints):
        rows[k].update(r)
    S = json.load(open(summ))
    N, T = S["N"], S["T"]
    h = T / N
    q = np.array([[float(r["q%d" % (i + 1)]) for i in range(n)] for r in rows])
    p = np.array([[float(r["p%d" % (i + 1)]) for i in range(n)] for r in rows])
    u = np.array([[float(r["u%d" % (i + 1)]) for i in range(m)] for r in rows[:-1]])
    lam = np.array([[float(r["lambda%d" % (i + 1)]) for i in range(2 * n)] for r in rows[:-1]])
    B, R = P["B"], P["R"]
    out = {"problem": prob, "N": N, "scheme": S["state_scheme"]}
    x = np.hstack([q, p])
    out["boundary"] = float(max(np.max(np.abs(x[0] - P["x0"])), np.max(np.abs(x[-1] - P["xT"]))))
    out["stationarity"] = float(np.max(np.abs(u - (np.linalg.solve(R, B.T @ lam[:, n:].T)).T)) / np.max(np.abs(u)))
    Jd = h * sum(0.5 * uk @ R @ uk for uk in u)
    out["J_recomputed"] = Jd
    out["J_rel_diff"] = abs(Jd - S["J"]) / abs(S["J"])
    ok = out["boundary"] < 1e-9 and out["stationarity"] < 1e-9 and out["J_rel_diff"] < 1e-12
    if S["state_scheme"] == "midpoint":
        rq = rp = 0.0
        sq = sp = 1e-300
        for k in range(N):
            qm, pm = 0.5 * (q[k] + q[k + 1]), 0.5 * (p[k] + p[k + 1])
            qdot = np.linalg.solve(P["mass"](qm), pm)
            pdot = -grad_q_energy(P, qm, pm) + B @ u[k]
            rq = max(rq, np.max(np.abs((q[k + 1] - q[k]) / h - qdot)))
            rp = max(rp, np.max(np.abs((p[k + 1] - p[k]) / h - pdot)))
            sq, sp = max(sq, np.max(np.abs(qdot))), max(sp, np.max(np.abs(pdot)), np.max(np.abs(B @ u[k])))
        out["midpoint_residual_q"] = rq / sq
        out["midpoint_residual_p"] = rp / sp
        ok = ok and rq / sq < 1e-8 and rp / sp < 1e-8
    else:
        E = np.array([energy(P, q[k], p[k]) for k in range(N + 1)])
        work = np.array([(q[k + 1] - q[k]) @ B @ u[k] for k in range(N)])
        bal = np.max(np.abs(np.diff(E) - work))
        scale = max(np.max(np.abs(E)), np.max(np.abs(work)), 1.0)
        out["energy_balance"] = float(bal / scale)
        ok = ok and bal / scale < 1e-10
    out["status"] = 0 if ok else 1
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return out["status"]


if __name__ == "__main__":
    sys.exit(main())
