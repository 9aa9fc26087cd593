#!/usr/bin/python3
"""Independent solution of tests/data/swing_atan_t.ocp (a force nonlinear in the control with a time-dependent
amplitude), derived from the problem statement only:

  s' = p,  p' = -2 sin s + a(t) atan(v),  a(t) = 1 + 0.5 sin t,  J = int_0^3 v^2/2 dt,
  (s, p)(0) = (0, 0),  (s, p)(3) = (0.5, 0).

Pontryagin (H = -v^2/2 + ls p + lp (-2 sin s + a atan v)): H_v = -v + lp a / (1 + v^2) = 0, i.e.
v^3 + v = a lp (one real root, Cardano; H_vv = -1 - 2 a lp v / (1 + v^2)^2 < 0 there since a lp v >= 0), and
ls' = -H_s = 2 lp cos s, lp' = -H_p = -ls. The cost rides along as j' = v^2/2. scipy's solve_bvp to 1e-10;
prints JSON {"J", "lambda0", "status"}.
"""
import json

import numpy as np
from scipy.integrate import solve_bvp

T = 3.0


def vstar(a, lp):
    s = a * lp
    r = np.sqrt(s * s / 4 + 1.0 / 27)
    return np.cbrt(s / 2 + r) + np.cbrt(s / 2 - r)


def rhs(t, y):
    s, p, ls, lp, j = y
    a = 1 + 0.5 * np.sin(t)
    v = vstar(a, lp)
    return np.vstack([p, -2 * np.sin(s) + a * np.arctan(v), 2 * lp * np.cos(s), -ls, 0.5 * v * v])


def bc(ya, yb):
    return np.array([ya[0], ya[1], yb[0] - 0.5, yb[1], ya[4]])


t = np.linspace(0, T, 201)
y = np.zeros((5, t.size))
y[0] = 0.5 * t / T
sol = solve_bvp(rhs, bc, t, y, tol=1e-10, max_nodes=200000)
print(json.dumps({"J": float(sol.y[4, -1]), "lambda0": [float(sol.y[2, 0]), float(sol.y[3, 0])],
                  "status": int(sol.status)}))
