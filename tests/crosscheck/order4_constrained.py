#!/usr/bin/env python3
"""Cross-check of conserving4 for constrained systems (docs/theory.md section 8.1), independent of the C solver.

1. (sympy) For a generic system of the closed-form class (n = 3, nc = 2, constant M, quadratic Phi, linear V, affine
   B(q), R), the Pontryagin conditions of H = -1/2 u^T R u + lq.M^{-1}p + lp.(-grad V - G^T mu + B u) - nu.Phi(q)
   (mu the constraint force, nu the state constraint's multiplier, u at its maximum) are z' = S (grad HH + grad g^T
   kappa) with HH the maximized Hamiltonian without the mu term, g(z) = (Phi(q), G(q) lp) and kappa = (-nu, -mu);
   and dH/dmu = 0 is G lp = 0.
2. (sympy) grad g S grad g^T = 0 identically, and g(b) - g(a) = grad g((a + b)/2) (b - a) exactly (g quadratic): the
   midpoint gradient of g is a discrete gradient, and a substep with g(a) = g(b) = 0 keeps HH exactly.
3. (numpy) The substep's Newton matrix [[I - c h S Hess/2, -c h S grad g^T], [grad g, 0]] on the Cartesian pendulum:
   its Schur complement is (c h)^2 / 2 times a matrix whose singular values tend to those of G M^{-1} G^T (= 1), for
   c = gamma1 > 0 and for the backward c = gamma2 < 0 alike.
Run: python3 tests/crosscheck/order4_constrained.py
"""
import numpy as np
import sympy as sp


def pontryagin():
    n, nc = 3, 2
    q, p, lq, lp = (sp.Matrix(sp.symbols("%s0:%d" % (s, n))) for s in ("q", "p", "lq", "lp"))
    mu, nu = sp.Matrix(sp.symbols("mu0:%d" % nc)), sp.Matrix(sp.symbols("nu0:%d" % nc))
    rs = iter(sp.symbols("r0:200"))
    sym = lambda k: (lambda A: (A + A.T) / 2)(sp.Matrix(k, k, lambda i, j: next(rs)))  # noqa: E731
    Minv, A = sym(n), [sym(n) for _ in range(nc)]
    bvec = [sp.Matrix(n, 1, lambda i, j: next(rs)) for _ in range(nc)]
    f = sp.Matrix(n, 1, lambda i, j: next(rs))
    B = sp.Matrix(n, 1, lambda i, j: next(rs)) + sum((q[l] * sp.Matrix(n, 1, lambda i, j: next(rs)) for l in range(n)),
                                                        sp.zeros(n, 1))
    Rinv = sp.Rational(1, 2)
    Phi = sp.Matrix([(q.T * A[i] * q / 2 + bvec[i].T * q)[0] for i in range(nc)])
    G = Phi.jacobian(q)
    u = Rinv * (B.T * lp)[0]
    # the control Hamiltonian (sign of theory.md section 1) with the constraint force and the state constraint
    Hc = -u * u / (2 * Rinv) + (lq.T * Minv * p)[0] + (lp.T * (-f - G.T * mu + B * u))[0] - (nu.T * Phi)[0]
    x, lam = sp.Matrix([q, p]), sp.Matrix([lq, lp])
    HH = (lp.T * B)[0] ** 2 * Rinv / 2 + (lq.T * Minv * p)[0] - (lp.T * f)[0]  # maximized, no mu term
    g = sp.Matrix([Phi, G * lp])
    z = sp.Matrix([x, lam])
    kap = sp.Matrix([-nu, -mu])
    grad = sp.Matrix([HH]).jacobian(z).T + g.jacobian(z).T * kap
    S = sp.Matrix(sp.BlockMatrix([[sp.zeros(2 * n), sp.eye(2 * n)], [-sp.eye(2 * n), sp.zeros(2 * n)]]))
    rhs = S * grad
    xdot = sp.Matrix([Hc]).jacobian(lam).T  # x' = dH/dlambda (u at its maximum: dH/du = 0 there)
    ldot = -sp.Matrix([Hc]).jacobian(x).T
    d = sp.simplify(sp.Matrix([xdot, ldot]) - rhs)
    assert d == sp.zeros(4 * n, 1), d
    assert sp.simplify(sp.Matrix([Hc]).jacobian(mu).T + G * lp) == sp.zeros(nc, 1)  # dH/dmu = 0 <=> G lp = 0
    gz = g.jacobian(z)
    assert sp.simplify(gz * S * gz.T) == sp.zeros(2 * nc, 2 * nc)
    a, b = sp.Matrix(sp.symbols("a0:%d" % (4 * n))), sp.Matrix(sp.symbols("b0:%d" % (4 * n)))
    sub = lambda e, w: e.subs(dict(zip(list(z), list(w))), simultaneous=True)  # noqa: E731
    dg = sp.expand(sub(g, b) - sub(g, a) - sub(gz, (a + b) / 2) * (b - a))
    assert dg == sp.zeros(2 * nc, 1), dg
    print("sympy: the Pontryagin system is z' = S (grad HH + grad g^T kappa), kappa = (-nu, -mu); dH/dmu = 0 is "
          "G lp = 0; grad g S grad g^T = 0; the midpoint gradient of g is exact")


def schur():
    g = 9.81

    def H(z):
        x, y, px, py, lqx, lqy, lpx, lpy = z
        s = -y * lpx + x * lpy
        return 0.5 * s * s + lqx * px + lqy * py - lpy * g

    def grad(fn, z, e):
        return np.array([(fn(z + e * np.eye(len(z))[i]) - fn(z - e * np.eye(len(z))[i])) / (2 * e) for i in range(len(z))])

    th = 0.7
    z = np.r_[np.sin(th), -np.cos(th), 0.3 * np.cos(th), 0.3 * np.sin(th), 0.345, 0.821, 0, 0]
    z[6:8] = 0.8 * np.array([np.cos(th), np.sin(th)])  # G lp = 0
    Hz = np.array([grad(lambda w: grad(H, w, 1e-6)[i], z, 1e-4) for i in range(8)])
    x, y, lpx, lpy = z[0], z[1], z[6], z[7]
    G = np.array([[x, y, 0, 0, 0, 0, 0, 0], [lpx, lpy, 0, 0, 0, 0, x, y]])
    S = np.block([[np.zeros((4, 4)), np.eye(4)], [-np.eye(4), np.zeros((4, 4))]])
    for h in (0.1, 0.01):
        for c in (1 / (2 - 2 ** (1 / 3)), 1 - 2 / (2 - 2 ** (1 / 3))):
            A = np.eye(8) - c * h * S @ (0.5 * Hz)
            sv = np.linalg.svd(G @ np.linalg.solve(A, c * h * S @ G.T), compute_uv=False) / (c * h) ** 2
            print("h = %g, c = %+.4f: singular values of the Schur complement / (c h)^2: %.4f %.4f" % (h, c, *sv))
            assert np.all(abs(sv - 0.5) < 0.05 if h == 0.1 else abs(sv - 0.5) < 1e-3)


if __name__ == "__main__":
    pontryagin()
    schur()
