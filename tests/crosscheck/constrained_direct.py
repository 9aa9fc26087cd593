#!/usr/bin/env python3
"""Independent cross-check of the direct BEM transcription of the Cartesian pendulum
(problems/pendulum_cartesian.ocp: m = l = 1, g = 9.81, T = 3, q = (x, y), p = (p_x, p_y)).

What it checks: the optimum J of the NLP below, solved here by scipy's SLSQP with analytic
gradients, is the J of the program's direct scheme (-hs_scheme direct), i.e. the program's KKT
point found by Newton is the minimum of this NLP.  Why it is independent: the NLP, its
Jacobians and the solver are all written here from the problem's data alone; nothing is shared
with the C program.  The program's output (trajectory.csv, intervals.csv in OUTDIR; any scheme)
is used only as the starting point of the optimizer.

NLP, N intervals, h = T/N.  Variables q_k, p_k (k = 1..N; q_0 = (0, -1), p_0 = 0 fixed), u_j and
gamma_j (j = 0..N-1).  Minimize J = h sum_j u_j^2 / 2 subject to, with qbar, pbar the interval
midpoints,
    q_{j+1} - q_j - h pbar = 0
    p_{j+1} - p_j + h (gradV + G(qbar)^T gamma_j - B(qbar) u_j) = 0,
        gradV = (0, g), G(q) = (x, y), B(q) = (-y, x)
    Phi(q_k) = (x_k^2 + y_k^2 - 1)/2 = 0   (k = 1..N-1),   q_N = (1, 0),   p_{N,y} = 0
(p_{N,x} is free: p_N = 0 + G(q_T)^T alpha with G(q_T) = (1, 0)).

With --free W (tests/data/pendulum_cartesian_free.ocp): x_N free, Phi(q_N) = 0 imposed at k = N too, no end
constraints, and the terminal cost phi = W/2 ((x_N - 1)^2 + y_N^2 + (x_N p_y,N - y_N p_x,N)^2) added to J.

Usage: /usr/bin/python3 constrained_direct.py OUTDIR [--free W]   (numpy, scipy).  Prints J, the maximum
constraint violation and the iteration count; exits 0 if the optimizer reports success and the
violation is <= 1e-10, else 1.
"""
import sys
import time
import numpy as np
from scipy.optimize import minimize

G_ACC, T = 9.81, 3.0
Q0, P0, QT = np.array([0.0, -1.0]), np.array([0.0, 0.0]), np.array([1.0, 0.0])


def read_csv(path):
    return np.genfromtxt(path, delimiter=",", names=True)


def split(z, N):
    """z = [S_1..S_N (4 each: x, y, p_x, p_y), u_0..u_{N-1}, gamma_0..gamma_{N-1}]."""
    S = np.vstack([np.concatenate([Q0, P0]), z[:4 * N].reshape(N, 4)])
    return S, z[4 * N:5 * N], z[5 * N:6 * N]


FREE = None  # W of --free (a free end with a terminal cost), else None


def terminal(S):
    """phi(x_N) of --free and its gradient in (x, y, p_x, p_y); 0 without it."""
    if FREE is None:
        return 0.0, np.zeros(4)
    x, y, px, py = S[-1]
    L = x * py - y * px
    phi = 0.5 * FREE * ((x - 1) ** 2 + y ** 2 + L ** 2)
    return phi, FREE * np.array([x - 1 + L * py, y - L * px, -L * y, L * x])


def constraints(z, N, h):
    S, u, gam = split(z, N)
    a, b = S[:-1], S[1:]
    m = 0.5 * (a + b)                                  # midpoints: xbar, ybar, pxbar, pybar
    rq = b[:, :2] - a[:, :2] - h * m[:, 2:]
    rpx = b[:, 2] - a[:, 2] + h * (m[:, 0] * gam + m[:, 1] * u)
    rpy = b[:, 3] - a[:, 3] + h * (G_ACC + m[:, 1] * gam - m[:, 0] * u)
    if FREE is not None:
        return np.concatenate([rq[:, 0], rq[:, 1], rpx, rpy, 0.5 * (S[1:, 0] ** 2 + S[1:, 1] ** 2 - 1.0)])
    phi = 0.5 * (S[1:N, 0] ** 2 + S[1:N, 1] ** 2 - 1.0)
    end = np.array([S[N, 0] - QT[0], S[N, 1] - QT[1], S[N, 3]])
    return np.concatenate([rq[:, 0], rq[:, 1], rpx, rpy, phi, end])


def jacobian(z, N, h):
    """Dense Jacobian wrt the full state array (nodes 0..N), u, gamma; node 0 columns dropped."""
    S, u, gam = split(z, N)
    m = 0.5 * (S[:-1] + S[1:])
    nS = 4 * (N + 1)
    J = np.zeros((5 * N + 2, nS + 2 * N))
    j = np.arange(N)
    col = lambda k, c: 4 * k + c                       # column of component c of node k
    cu, cg = nS + j, nS + N + j
    for blk, c in ((0, 0), (1, 1)):                    # rq: b_q - a_q - h (a_p + b_p)/2
        r = blk * N + j
        J[r, col(j + 1, c)] = 1.0
        J[r, col(j, c)] = -1.0
        J[r, col(j, c + 2)] = J[r, col(j + 1, c + 2)] = -0.5 * h
    r = 2 * N + j                                      # rpx
    J[r, col(j + 1, 2)], J[r, col(j, 2)] = 1.0, -1.0
    J[r, col(j, 0)] = J[r, col(j + 1, 0)] = 0.5 * h * gam
    J[r, col(j, 1)] = J[r, col(j + 1, 1)] = 0.5 * h * u
    J[r, cg], J[r, cu] = h * m[:, 0], h * m[:, 1]
    r = 3 * N + j                                      # rpy
    J[r, col(j + 1, 3)], J[r, col(j, 3)] = 1.0, -1.0
    J[r, col(j, 0)] = J[r, col(j + 1, 0)] = -0.5 * h * u
    J[r, col(j, 1)] = J[r, col(j + 1, 1)] = 0.5 * h * gam
    J[r, cg], J[r, cu] = h * m[:, 1], -h * m[:, 0]
    k = np.arange(1, N + (FREE is not None))          # Phi at interior nodes (and node N with --free)
    J[4 * N + k - 1, col(k, 0)], J[4 * N + k - 1, col(k, 1)] = S[k, 0], S[k, 1]
    if FREE is not None:
        return J[:5 * N, 4:]
    J[5 * N - 1, col(N, 0)] = J[5 * N, col(N, 1)] = J[5 * N + 1, col(N, 3)] = 1.0
    return J[:, 4:]


def main():
    global FREE
    if len(sys.argv) == 4 and sys.argv[2] == "--free":
        FREE = float(sys.argv[3])
    elif len(sys.argv) != 2:
        sys.exit("usage: constrained_direct.py OUTDIR [--free W]")
    tr = read_csv(sys.argv[1] + "/trajectory.csv")
    iv = read_csv(sys.argv[1] + "/intervals.csv")
    N = len(iv)
    if len(tr) != N + 1:
        sys.exit("trajectory.csv has %d rows, expected N+1 = %d" % (len(tr), N + 1))
    h = T / N
    S0 = np.column_stack([tr["q_x"], tr["q_y"], tr["p_x"], tr["p_y"]])
    z0 = np.concatenate([S0[1:].ravel(), iv["u1"], iv["gamma1"]])

    def fun(z):
        u = z[4 * N:5 * N]
        return 0.5 * h * u @ u + terminal(split(z, N)[0])[0]

    def grad(z):
        g = np.zeros_like(z)
        g[4 * N:5 * N] = h * z[4 * N:5 * N]
        g[4 * (N - 1):4 * N] += terminal(split(z, N)[0])[1]
        return g

    # SLSQP stops when |f_k - f_{k-1}| < ftol (absolute).  1e-15 lies below the round-off of
    # J ~ 7 (a sum of N terms) and SLSQP then never reports success (seen at N = 20, 40, 80);
    # so ftol = 2e-16 N max(1, J): 2.8e-14 at N = 20 (4e-15 relative), 1e-13 at N = 80.
    ftol = 2e-16 * N * max(1.0, fun(z0))
    con = {"type": "eq", "fun": constraints, "jac": jacobian, "args": (N, h)}
    t0 = time.perf_counter()
    res = minimize(fun, z0, jac=grad, method="SLSQP", constraints=[con],
                   options={"ftol": ftol, "maxiter": 500})
    wall = time.perf_counter() - t0
    viol = np.max(np.abs(constraints(res.x, N, h)))
    print("J = %.15g" % res.fun)
    print("max constraint violation = %.3g" % viol)
    print("iterations = %d" % res.nit)
    print("N = %d, start J = %.15g, wall time %.2f s" % (N, fun(z0), wall))
    if not res.success:
        print("FAILED: optimizer: %s" % res.message)
        return 1
    if not viol <= 1e-10:
        print("FAILED: constraint violation %.3g > 1e-10" % viol)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
