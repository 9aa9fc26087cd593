#!/usr/bin/python3
"""The continuous optimum of the satellite in 3-1-3 Euler angles (problems/satellite_euler.ocp, docs/satellite.md),
computed independently of hamshoot's discretization: scipy's solve_bvp (4th-order collocation, adaptive mesh) on the
continuous Pontryagin boundary-value problem.

    satellite_bvp.py GUESS_DIR [TOL ...]   J* at each tolerance (default 1e-8 1e-10 1e-11), their differences

GUESS_DIR is any hamshoot output of the file (trajectory.csv, intervals.csv): only the starting point of the
collocation, which ends on the continuous solution whatever it started from (from N = 40 and from N = 160: J* at
tol 1e-8 1434215.9608852 and 1434215.9608820, within that tolerance's error).

Measured (from N = 160): J* = 1434215.9608820, 1434215.9608785, 1434215.96087846 at tol 1e-8, 1e-10, 1e-11 (631,
2561, 5121 nodes): J* = 1434215.96087846 to about 1e-8.

The problem. State x = (q, p), q = (psi, th, ph, a1, a2, a3), kinetic energy K(q, p) = 1/2 p^T M(q)^-1 p with M(q)
the sympy derivation of tests/crosscheck/satellite_euler.py (the one it writes into the .ocp), no potential,
B = [0; I] (the motor torques act on the relative rotor angles), R = I, cost J = int_0^T 1/2 |u|^2 dt (the file's
running cost; hamshoot's J^d = h sum 1/2 |u_{k+1/2}|^2 is its discretization).

    q' = K_p = M^-1 p,   p' = -K_q + B u,
    Pontryagin's function  H = lq . K_p + lp . (-K_q + B u) - 1/2 |u|^2,   u = B^T lp (its maximum),
    lq' = -H_q = -K_qp lq + K_qq lp,   lp' = -H_p = -M^-1 lq + K_pq lp,

with v = M^-1 p, M_i = dM/dq_i:  K_q,i = -1/2 v^T M_i v,  dv/dq_i = -M^-1 M_i v,
K_qq,ij = -1/2 v^T M_ij v + v^T M_i M^-1 M_j v.  (The script checks this right-hand side against central differences
of H at a random point.)  The accumulated cost c' = 1/2 |u|^2, c(0) = 0, is a 25th state, so J* = c(T) has the
collocation's accuracy.

End conditions (25): x(0) = x0 (12), c(0) = 0; at T the main body's angles fixed (3); the rotor angles free, so
lq_a(T) = 0 (3); the rotors' momenta p_a(T) = 0 (3); the main body's momenta free, so lp_body(T) = 0 (3). These are
the file's xT (angles fixed, a free, p_body free, p_a = 0). The spatial angular momentum (0 at t = 0) is conserved
for every control, so p_body(T) is determined by the rest and "free" and "fixed to its implied value" are the same
continuous problem (docs/satellite.md "End conditions").
"""
import csv
import os
import sys

import numpy as np
import sympy as sp
from scipy.integrate import solve_bvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from satellite_euler import boundary, derive, T  # noqa: E402

N_Q = 6
B = np.vstack([np.zeros((3, 3)), np.eye(3)])


def mass_functions():
    """Vectorized M(q), dM/dq_i, d2M/dq_i dq_j (only th, ph appear) from the sympy derivation."""
    q, M = derive()

    def vec(expr):
        f = sp.lambdify(q, expr, "numpy")
        return lambda Q: np.asarray(f(*Q)) + np.zeros_like(Q[0])

    def matfun(Mx):
        fs = [[vec(Mx[i, j]) for j in range(N_Q)] for i in range(N_Q)]
        return lambda Q: np.stack([np.stack([fs[i][j](Q) for j in range(N_Q)], -1) for i in range(N_Q)], -2)
    Mf = matfun(M)
    dM = [matfun(M.diff(q[i])) for i in range(N_Q)]
    d2M = [[matfun(M.diff(q[i]).diff(q[j])) for j in range(N_Q)] for i in range(N_Q)]
    return Mf, dM, d2M


MF, DM, D2M = mass_functions()


def rhs(t, Y):
    """The 25 right-hand sides at the m points Y[:, k]."""
    q, p, lq, lp = Y[0:6], Y[6:12], Y[12:18], Y[18:24]
    Mi = np.linalg.inv(MF(q))  # (m, 6, 6)
    v = np.einsum("kij,jk->ik", Mi, p)
    Md = [f(q) for f in DM]
    MiMv = [np.einsum("kij,kjl,lk->ik", Mi, Md[i], v) for i in range(N_Q)]  # M^-1 M_i v (6, m)
    Kq = np.array([-0.5 * np.einsum("ik,kij,jk->k", v, Md[i], v) for i in range(N_Q)])
    Kqq = np.empty((N_Q, N_Q, Y.shape[1]))
    for i in range(N_Q):
        for j in range(N_Q):
            Kqq[i, j] = -0.5 * np.einsum("ak,kab,bk->k", v, D2M[i][j](q), v) + np.einsum("ak,kab,bk->k", v, Md[i],
                                                                                          MiMv[j])
    u = B.T @ lp
    dq = v
    dp = -Kq + B @ u
    dlq = np.array([np.sum(lq * MiMv[i], 0) for i in range(N_Q)]) + np.einsum("ijk,jk->ik", Kqq, lp)
    dlp = -np.einsum("kij,jk->ik", Mi, lq) - sum(lp[i] * MiMv[i] for i in range(N_Q))
    dc = 0.5 * np.sum(u * u, 0)
    return np.vstack([dq, dp, dlq, dlp, dc[None, :]])


def pontryagin(y):
    """H at one point (for the check of rhs by differences)."""
    q, p, lq, lp = y[0:6], y[6:12], y[12:18], y[18:24]
    v = np.linalg.solve(MF(q[:, None])[0], p)
    K = lambda qq: 0.5 * p @ np.linalg.solve(MF(qq[:, None])[0], p)  # noqa: E731
    Kq = np.array([K(q + 1e-30j * np.eye(6)[i]).imag / 1e-30 for i in range(6)])  # complex step: exact
    u = B.T @ lp
    return lq @ v + lp @ (-Kq + B @ u) - 0.5 * u @ u


def check_rhs():
    """Largest relative difference between rhs and -/+ dH by central differences (and q' = H_lq, p' = H_lp)."""
    rng = np.random.default_rng(3)
    y = np.concatenate([[0.3, 1.1, 0.7], rng.uniform(-2, 2, 3), rng.uniform(-50, 50, 6), rng.uniform(-1e3, 1e3, 12)])
    f = rhs(0, y[:, None].copy())[:24, 0]
    g = np.empty(24)
    for i in range(24):
        e = 1e-4 * max(1, abs(y[i])) if i < 12 else 1e-2
        yp, ym = y.copy(), y.copy()
        yp[i] += e
        ym[i] -= e
        g[i] = (pontryagin(yp) - pontryagin(ym)) / (2 * e)
    ref = np.concatenate([g[12:24], -g[0:12]])  # x' = H_lambda, lambda' = -H_x
    return np.max(np.abs(f - ref)) / np.max(np.abs(ref))


def bc(ya, yb):
    x0, xT = boundary()
    qT = np.array([float(s) for s in xT[:3]])
    return np.concatenate([ya[:12] - np.array(x0, dtype=float), [ya[24]], yb[0:3] - qT, yb[15:18], yb[9:12],
                           yb[18:21]])


def guess(d):
    """Mesh and values from a hamshoot solution: nodes' states, the interval costates averaged onto the nodes, the
    accumulated cost h sum 1/2 |u|^2."""
    rows = list(csv.DictReader(open(os.path.join(d, "trajectory.csv"))))
    iv = list(csv.DictReader(open(os.path.join(d, "intervals.csv"))))
    names = [k[2:] for k in rows[0] if k.startswith("q_")]
    t = np.array([float(r["t"]) for r in rows])
    x = np.array([[float(r["q_" + n]) for n in names] + [float(r["p_" + n]) for n in names] for r in rows]).T
    lam = np.array([[float(r["lambda_q_" + n]) for n in names] + [float(r["lambda_p_" + n]) for n in names]
                    for r in iv]).T
    ln = np.hstack([lam[:, :1], 0.5 * (lam[:, 1:] + lam[:, :-1]), lam[:, -1:]])
    u = np.array([[float(r["u%d" % i]) for i in (1, 2, 3)] for r in iv])
    c = np.concatenate([[0], np.cumsum(np.diff(t) * 0.5 * np.sum(u * u, 1))])
    return t, np.vstack([x, ln, c[None, :]])


def solve(t, Y, tol):
    """solve_bvp on the scaled unknowns Z = Y / S, S the largest |Y_i| of the guess (at least 1): solve_bvp measures
    the collocation residual relative to 1 + |f|, so unscaled costates of 1e6 with a vanishing derivative (the
    cyclic coordinates' lq) put a round-off floor of 3e-7 under it."""
    S = np.maximum(1, np.max(np.abs(Y), 1))[:, None]
    sol = solve_bvp(lambda t, Z: rhs(t, S * Z) / S, lambda a, b: bc(S[:, 0] * a, S[:, 0] * b) / S.max(), t, Y / S,
                    tol=tol, bc_tol=tol, max_nodes=50000)
    if sol.status != 0:
        raise RuntimeError("solve_bvp: %s" % sol.message)
    return sol.x, S * sol.y, sol


if __name__ == "__main__":
    print("rhs against central differences of H: %.2e relative" % check_rhs())
    t, Y = guess(sys.argv[1])
    tols = [float(x) for x in sys.argv[2:]] or [1e-8, 1e-10, 1e-11]
    Js = []
    for tol in tols:
        t, Y, sol = solve(t, Y, tol)
        Js.append(Y[24, -1])
        print("tol %.0e: J* = %.10f  (%d nodes, max rms residual %.2e); a(T) = %s" %
              (tol, Js[-1], len(t), np.max(sol.rms_residuals), np.array2string(Y[3:6, -1], precision=8)))
    v = np.einsum("kij,jk->ik", np.linalg.inv(MF(Y[0:6])), Y[6:12])
    print("max |a_i'| (rotor rates relative to the main body): %s; max |u_i|: %s" % (
        np.array2string(np.max(np.abs(v[3:6]), 1), precision=4), np.array2string(np.max(np.abs(Y[21:24]), 1), precision=1)))
    for a, b in zip(Js, Js[1:]):
        print("difference %.3e (%.2e relative)" % (b - a, (b - a) / b))
