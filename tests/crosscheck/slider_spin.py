#!/usr/bin/python3
"""Independent solution of tests/data/slider_spin.ocp (docs/constrained.md, "A fixed end not at rest"), derived from the
problem statement in generalized coordinates only: a body pinned at the origin (angle th, inertia Ib about the pivot),
a reaction wheel on it (absolute angle w, inertia Iw) and a slider of mass m on a rail through the pivot (radius r):

  kinetic energy 1/2 (Ib + m r^2) th'^2 + 1/2 Iw w'^2 + 1/2 m r'^2, no potential;
  the wheel's torque u1: -u1 on th, +u1 on w; the slider's force along y = r a (B's column y): r u2 on r;
  J = int_0^T (u1^2 + u2^2)/2 dt, T = 2, from rest at (th, w, r) = (0, 0, 1) to a fixed end not at rest:
  (th, w, r) = (0.5, -3, 1.2), th' = 0.3, r' = 0.2 and w' = -(Ib + m r^2) th' / Iw (the angular momentum
  L = (Ib + m r^2) th' + Iw w' = 0, as at the start: L is conserved for every control).

With momenta p_th = (Ib + m r^2) th', p_w = Iw w', p_r = m r', I = Ib + m r^2, Pontryagin's
H = -(u1^2 + u2^2)/2 + l . f gives u1 = l_pw - l_pth, u2 = r l_pr and the adjoint equations below. L = p_th + p_w is
conserved, so p_w(T) is implied by p_th(T) and the costate is fixed only up to l_p + s (1, 1, 0): the BVP takes the
gauge l_pth(T) + l_pw(T) = 0 (c . lambda_p(T) = 0, as hamshoot's end) in place of p_w(T)'s row, which would be
redundant. The cost rides along as j' = (u1^2 + u2^2)/2. scipy's solve_bvp to 1e-10 (at 1e-8: J differs by 2e-11; at
1e-12, stopped at 1e5 nodes: by 5e-14). Prints JSON {"J", "status", "xT"}: xT the end state in the file's directors
(a, b, y and their momenta; p_y = m (r' a + r th' a_perp)), which the test compares with the file's.
"""
import json
import math
import sys

import numpy as np
from scipy.integrate import solve_bvp

Ib, Iw, m, T = 2.0, 0.5, 1.0, 2.0
thT, wT, rT, thdT, rdT = 0.5, -3.0, 1.2, 0.3, 0.2
wdT = -(Ib + m * rT ** 2) * thdT / Iw
X0 = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
XT = [thT, wT, rT, (Ib + m * rT ** 2) * thdT, Iw * wdT, m * rdT]


def rhs(t, y):
    th, w, r, pth, pw, pr, lth, lw, lr, lpth, lpw, lpr, j = y
    inertia = Ib + m * r * r
    u1, u2 = lpw - lpth, r * lpr
    return np.vstack([
        pth / inertia, pw / Iw, pr / m,
        -u1, u1, m * r * pth ** 2 / inertia ** 2 + r * u2,
        0 * th, 0 * w,
        2 * m * r * lth * pth / inertia ** 2 - lpr * m * pth ** 2 * (1 / inertia ** 2 - 4 * m * r * r / inertia ** 3)
        - lpr * u2,
        -(lth / inertia + lpr * 2 * m * r * pth / inertia ** 2),
        -lw / Iw,
        -lr / m,
        (u1 ** 2 + u2 ** 2) / 2])


def bc(ya, yb):
    return np.array([ya[i] - X0[i] for i in range(6)] + [yb[i] - XT[i] for i in (0, 1, 2, 3, 5)] +
                    [yb[9] + yb[10], ya[12]])


def directors():
    c, s, cw, sw = math.cos(thT), math.sin(thT), math.cos(wT), math.sin(wT)
    q = [c, s, cw, sw, rT * c, rT * s]
    p = [-Ib * thdT * s, Ib * thdT * c, -Iw * wdT * sw, Iw * wdT * cw, m * (rdT * c - rT * thdT * s),
         m * (rdT * s + rT * thdT * c)]
    return q + p


def main():
    tol = float(sys.argv[1]) if len(sys.argv) > 1 else 1e-10
    t = np.linspace(0, T, 41)
    y = np.zeros((13, t.size))
    for i in range(6):
        y[i] = X0[i] + (XT[i] - X0[i]) * t / T
    y[4] = -y[3]  # L = 0 along the guess
    sol = solve_bvp(rhs, bc, t, y, tol=tol, max_nodes=100000)
    print(json.dumps({"J": float(sol.sol(T)[12]), "status": int(sol.status), "nodes": int(sol.x.size),
                      "xT": directors()}))
    return 0 if sol.status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
