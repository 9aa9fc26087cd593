#!/usr/bin/env python3
"""Independent extremals of tests/data/swingup.ocp (issue 42), not run by ctest (about 2 minutes): scipy's
solve_bvp of the continuous necessary conditions of the pendulum swing-up, m = l = 1, g = 9.81, T = 5,
J = 1/2 int u^2, q(0) = p(0) = 0, q(T) = pi, p(T) = 0:

    q' = p,  p' = -g sin q + u,  lambda_q' = g cos q lambda_p,  lambda_p' = -lambda_q,  u = -lambda_p,

from a family of starts q = pi t/T + A sin(f pi t/T), lambda = a (cos f t, sin f t). Prints the distinct costs J
(Simpson's rule on 20001 points). Measured: 9.697527 (the lowest; tests/hs_extremal2.py SWINGUP_LOWER), 12.139
(the default guess's extremal), 17.904, 29.35..., and higher ones. Usage: /usr/bin/python3 swingup_extremals.py
"""
import numpy as np
from scipy.integrate import simpson, solve_bvp

G, T = 9.81, 5.0


def rhs(t, y):
    q, p, lq, lp = y
    return np.vstack([p, -G * np.sin(q) - lp, lp * G * np.cos(q), -lq])


def bc(a, b):
    return np.array([a[0], a[1], b[0] - np.pi, b[1]])


def main():
    t = np.linspace(0, T, 400)
    tt = np.linspace(0, T, 20001)
    found = set()
    for A in (0, 1, 2, 3, -1, -2, -3):
        for f in (0.5, 1, 1.5, 2, 3):
            for a in (0.5, 2, 5):
                q = np.pi * t / T + A * np.sin(f * np.pi * t / T)
                y = np.vstack([q, np.gradient(q, t), a * np.cos(f * t), a * np.sin(f * t)])
                s = solve_bvp(rhs, bc, t, y, tol=1e-8, max_nodes=100000)
                if s.success:
                    found.add(round(0.5 * simpson(s.sol(tt)[3] ** 2, x=tt), 6))
    print("extremals' J:", sorted(found))


if __name__ == "__main__":
    main()
