#!/usr/bin/env python3
"""Independent cross-check: continuous optimal-control necessary conditions
(Pontryagin, maximum-principle sign convention) solved as two-point BVPs with
scipy.integrate.solve_bvp.

Conventions (derived here from scratch, not taken from the C solver):
  state x = (q, p) in R^{2n}, energy E(q, p)
  qdot = dE/dp,  pdot = -dE/dq + B u
  J = int_0^T 1/2 u^T u dt
  H = -1/2 u^T u + lam_q^T qdot + lam_p^T pdot
  dH/du = 0  ->  u = B^T lam_p
  lam_dot = -dH/dx

Pendulum (n=1, B=1):  E = p^2/(2 m l^2) - m g l sin q
  qdot = p/(m l^2)
  pdot = m g l cos q + u
  lam_q_dot = -dH/dq = m g l sin(q) * lam_p
  lam_p_dot = -dH/dp = -lam_q/(m l^2)

Kepler (n=3, B=I3):  E = 1/2|p|^2 - 1/|q|
  qdot = p
  pdot = -q/r^3 + u
  d/dq(-q/r^3) = -I/r^3 + 3 q q^T/r^5   (symmetric)
  lam_q_dot = -dH/dq = lam_p/r^3 - 3 q (q.lam_p)/r^5
  lam_p_dot = -dH/dp = -lam_q

Augmented BVP state y = (q, p, lam_q, lam_p, Jacc) with Jacc' = 1/2|u|^2,
Jacc(0)=0, q,p fixed at both ends  -> 4n+1 ODEs, 4n+1 BCs.

Output: JSON on stdout.
"""
import json
import sys
import time
import warnings

import numpy as np
from scipy.integrate import solve_bvp

warnings.filterwarnings("ignore")


# ---------------------------------------------------------------- pendulum
M, L, G = 1.0, 1.0, 9.81


def pend_rhs(t, y):
    q, p, lq, lp, _ = y
    u = lp
    return np.vstack([
        p / (M * L * L),
        M * G * L * np.cos(q) + u,
        M * G * L * np.sin(q) * lp,
        -lq / (M * L * L),
        0.5 * u * u,
    ])


def pend_jac(t, y):
    q, p, lq, lp, _ = y
    k = y.shape[1]
    J = np.zeros((5, 5, k))
    J[0, 1] = 1.0 / (M * L * L)
    J[1, 0] = -M * G * L * np.sin(q)
    J[1, 3] = 1.0
    J[2, 0] = M * G * L * np.cos(q) * lp
    J[2, 3] = M * G * L * np.sin(q)
    J[3, 2] = -1.0 / (M * L * L)
    J[4, 3] = lp
    return J


def pend_H(y):
    q, p, lq, lp, _ = y
    u = lp
    qd = p / (M * L * L)
    pd = M * G * L * np.cos(q) + u
    return -0.5 * u * u + lq * qd + lp * pd


PEND = dict(n=1, T=3.0,
            x0=np.array([0.0, 0.0]), xT=np.array([np.pi / 2, 0.0]),
            rhs=pend_rhs, jac=pend_jac, Hfun=pend_H)


# ---------------------------------------------------------------- kepler
def kep_rhs(t, y):
    q, p, lq, lp = y[0:3], y[3:6], y[6:9], y[9:12]
    r2 = np.sum(q * q, axis=0)
    r = np.sqrt(r2)
    r3 = r2 * r
    r5 = r3 * r2
    qlp = np.sum(q * lp, axis=0)
    u = lp
    return np.vstack([
        p,
        -q / r3 + u,
        lp / r3 - 3.0 * q * qlp / r5,
        -lq,
        0.5 * np.sum(u * u, axis=0)[None, :],
    ])


def kep_jac(t, y):
    q, lp = y[0:3], y[9:12]
    k = y.shape[1]
    r2 = np.sum(q * q, axis=0)
    r = np.sqrt(r2)
    r3 = r2 * r
    r5 = r3 * r2
    r7 = r5 * r2
    qlp = np.sum(q * lp, axis=0)
    I3 = np.eye(3)[:, :, None]
    J = np.zeros((13, 13, k))
    # qdot = p
    J[0:3, 3:6] = I3
    # pdot = -q/r^3 + lp
    J[3:6, 0:3] = -I3 / r3 + 3.0 * q[:, None, :] * q[None, :, :] / r5
    J[3:6, 9:12] = I3
    # lqdot = lp/r^3 - 3 q (q.lp)/r^5
    # d/dq_j: -3 lp_i q_j / r^5 - 3 delta_ij qlp / r^5 - 3 q_i lp_j / r^5
    #         + 15 q_i q_j qlp / r^7
    J[6:9, 0:3] = (-3.0 * lp[:, None, :] * q[None, :, :] / r5
                   - 3.0 * I3 * qlp / r5
                   - 3.0 * q[:, None, :] * lp[None, :, :] / r5
                   + 15.0 * q[:, None, :] * q[None, :, :] * qlp / r7)
    # d/dlp_j: delta_ij / r^3 - 3 q_i q_j / r^5
    J[6:9, 9:12] = I3 / r3 - 3.0 * q[:, None, :] * q[None, :, :] / r5
    # lpdot = -lq
    J[9:12, 6:9] = -I3
    # Jacc' = 1/2 |lp|^2
    J[12, 9:12] = lp
    return J


def kep_H(y):
    q, p, lq, lp = y[0:3], y[3:6], y[6:9], y[9:12]
    r = np.sqrt(np.sum(q * q, axis=0))
    u = lp
    pd = -q / r ** 3 + u
    return (-0.5 * np.sum(u * u, axis=0) + np.sum(lq * p, axis=0)
            + np.sum(lp * pd, axis=0))


KEP = dict(n=3, T=np.pi,
           x0=np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
           xT=np.array([0.0, 0.0, 1.5, 0.0, -1.0, 0.0]),
           rhs=kep_rhs, jac=kep_jac, Hfun=kep_H)


# ---------------------------------------------------------------- generic
def make_bc(prob):
    n2 = 2 * prob["n"]
    x0, xT = prob["x0"], prob["xT"]

    def bc(ya, yb):
        return np.concatenate([ya[:n2] - x0, yb[:n2] - xT, [ya[-1]]])

    def bc_jac(ya, yb):
        m = ya.size
        Ja = np.zeros((m, m))
        Jb = np.zeros((m, m))
        for i in range(n2):
            Ja[i, i] = 1.0
            Jb[n2 + i, i] = 1.0
        Ja[2 * n2, m - 1] = 1.0
        return Ja, Jb

    return bc, bc_jac


def solve(prob, t, y_guess, tol, max_nodes=200000):
    bc, bc_jac = make_bc(prob)
    return solve_bvp(prob["rhs"], bc, t, y_guess, fun_jac=prob["jac"],
                     bc_jac=bc_jac, tol=tol, bc_tol=1e-12,
                     max_nodes=max_nodes, verbose=0)


def simpson(f, t):
    # composite Simpson on a uniform grid with an odd number of points
    h = t[1] - t[0]
    return h / 3.0 * (f[0] + f[-1] + 4.0 * f[1:-1:2].sum() + 2.0 * f[2:-1:2].sum())


def report(prob, sol, extra=None):
    n = prob["n"]
    T = prob["T"]
    tf = np.linspace(0.0, T, 20001)
    yf = sol.sol(tf)
    lp = yf[3 * n:4 * n]
    J_simpson = simpson(0.5 * np.sum(lp * lp, axis=0), tf)
    Hn = prob["Hfun"](sol.y)            # at mesh nodes (collocation points)
    Hf = prob["Hfun"](yf)               # on the fine grid (interpolant)
    out = {
        "J": float(sol.y[-1, -1]),
        "J_simpson": float(J_simpson),
        "H": float(np.mean(Hn)),
        "H_spread": float(Hn.max() - Hn.min()),
        "H_spread_finegrid": float(Hf.max() - Hf.min()),
        "lambda0": [float(v) for v in sol.sol(0.0)[2 * n:4 * n]],
        "lambda_mid": [float(v) for v in sol.sol(T / 2)[2 * n:4 * n]],
        "lambdaT": [float(v) for v in sol.y[2 * n:4 * n, -1]],
        "status": int(sol.status),
        "message": sol.message,
        "max_rms_residual": float(np.max(sol.rms_residuals)),
        "n_nodes": int(sol.x.size),
        "bc_residual": float(np.max(np.abs(make_bc(prob)[0](sol.y[:, 0], sol.y[:, -1])))),
    }
    if extra:
        out.update(extra)
    return out


def linear_guess(prob, t, seed=None, scale=0.0):
    n = prob["n"]
    T = prob["T"]
    s = t / T
    y = np.zeros((4 * n + 1, t.size))
    y[:2 * n] = prob["x0"][:, None] * (1 - s) + prob["xT"][:, None] * s
    if seed is not None:
        y[2 * n:4 * n] = scale * np.random.default_rng(seed).standard_normal((2 * n, 1))
    return y


def kepler_path_guess(prob, t):
    # smooth path from (1,0,0) to (0,0,1.5) on a bent arc away from the origin:
    # radius grows 1 -> 1.5, direction rotates in the x-z plane with a y bulge
    T = prob["T"]
    s = t / T
    th = 0.5 * np.pi * s
    r = 1.0 + 0.5 * s
    bulge = np.sin(np.pi * s)
    q = np.vstack([r * np.cos(th), 0.8 * bulge, r * np.sin(th)])
    p = np.gradient(q, t, axis=1)
    y = np.zeros((13, t.size))
    y[0:3] = q
    y[3:6] = p
    # ensure exact boundary values
    y[0:6, 0] = prob["x0"]
    y[0:6, -1] = prob["xT"]
    return y


def run_problem(prob, guesses, N=2001, tol_main=1e-10, tol_check=1e-8):
    t = np.linspace(0.0, prob["T"], N)
    attempts = []
    sol = None
    for name, gfun in guesses:
        y0 = gfun(t)
        s = solve(prob, t, y0, tol_main)
        attempts.append({"guess": name, "status": int(s.status)})
        if s.status == 0:
            sol = s
            break
    if sol is None:
        # continuation in the target state: xT(a) = (1-a) * x_free(T) + a * xT
        attempts.append({"guess": "continuation"})
        sol = continuation(prob, t, tol_main)
    # independent second solve: cold start from a DIFFERENT initial guess
    # (linear states + small random costates), different initial mesh
    # (1001 nodes) and looser tolerance 1e-9; should land on the same extremal.
    t2 = np.linspace(0.0, prob["T"], 1001)
    s_chk = solve(prob, t2, linear_guess(prob, t2, seed=7, scale=0.1), 1e-9)
    n = prob["n"]
    extra = {
        "J_change": float(s_chk.y[-1, -1] - sol.y[-1, -1]),
        "check_J_tol1e-9_cold": float(s_chk.y[-1, -1]),
        "check_status": int(s_chk.status),
        "check_n_nodes": int(s_chk.x.size),
        "lambda0_change": float(np.max(np.abs(
            s_chk.sol(0.0)[2 * n:4 * n] - sol.sol(0.0)[2 * n:4 * n]))),
        "lambda_mid_change": float(np.max(np.abs(
            s_chk.sol(prob["T"] / 2)[2 * n:4 * n]
            - sol.sol(prob["T"] / 2)[2 * n:4 * n]))),
        "attempts": attempts,
    }
    return report(prob, sol, extra)


def continuation(prob, t, tol):
    # start from the uncontrolled trajectory end point (trivially optimal: u=0)
    from scipy.integrate import solve_ivp
    n = prob["n"]
    zero = lambda tt, x: prob["rhs"](tt, np.concatenate([x, np.zeros(2 * n + 1)])[:, None])[:2 * n, 0]
    ivp = solve_ivp(zero, (0, prob["T"]), prob["x0"], t_eval=t, rtol=1e-12, atol=1e-12)
    y = np.zeros((4 * n + 1, t.size))
    y[:2 * n] = ivp.y
    xfree = ivp.y[:, -1].copy()
    target = prob["xT"].copy()
    sol = None
    tt = t
    for a in np.linspace(0.0, 1.0, 21)[1:]:
        prob["xT"] = (1 - a) * xfree + a * target
        s = solve(prob, tt, y, 1e-8 if a < 1 else tol)
        if s.status != 0:
            raise RuntimeError("continuation failed at a=%g: %s" % (a, s.message))
        sol, tt, y = s, s.x, s.y
    prob["xT"] = target
    return sol


def main():
    t0 = time.time()
    out = {}
    out["pendulum"] = run_problem(PEND, [
        ("linear, lambda=0", lambda t: linear_guess(PEND, t)),
        ("linear, random lambda", lambda t: linear_guess(PEND, t, seed=1, scale=0.1)),
    ])
    out["kepler"] = run_problem(KEP, [
        ("arc path, lambda=0", lambda t: kepler_path_guess(KEP, t)),
        ("linear, lambda=0", lambda t: linear_guess(KEP, t)),
        ("linear, random lambda", lambda t: linear_guess(KEP, t, seed=2, scale=0.1)),
    ])
    out["runtime_s"] = time.time() - t0
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
