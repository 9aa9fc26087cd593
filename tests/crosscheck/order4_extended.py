#!/usr/bin/env python3
"""Prototype of conserving4's substep for constrained systems of the extended class (docs/theory.md section 8.1,
"The extended class"): general Phi(q), V(q), M(q), B(q). Independent of the C solver (numpy + sympy + scipy).

The constrained Hamiltonian system z' = S (grad HH(z) + grad g(z)^T kappa), g = (Phi(q), G(q) lp), is stepped by

    b - a = c h S (dgrad HH(a, b) + Gbar(a, b)^T kappa),    g(b) = 0,

dgrad HH the Gonzalez discrete gradient of HH in z (as section 8), and Gbar the structured discrete gradient of g:

    row Phi_i:     q-part  the Gonzalez gradient of Phi_i in q                       (no p, lq, lp part)
    row G_i lp:    q-part  the Gonzalez gradient in q of q -> lpbar . grad Phi_i(q),  lpbar = (lp_a + lp_b)/2,
                   lp-part (grad Phi_i(q_a) + grad Phi_i(q_b))/2                      (no p, lq part)

so that Gbar (b - a) = g(b) - g(a) exactly and Gbar(a, b) = Gbar(b, a). Three substeps (gamma1 h, gamma2 h,
gamma1 h) make an interval (the triple jump). Checks, on two systems outside the closed-form class:

  bead:    the bead on the catenary y = cosh(x) (tests/data/bead_catenary.ocp, Phi not quadratic), n = 2, nc = 1;
  generic: n = 3, nc = 2, Phi_1 = |q|^2/2 - 1/2 + q0^3/5 (not quadratic), Phi_2 = q2 - sin(q0) / 2,
           M(q) = (1 + q1^2/4) I + q q^T / 5, V = 9.81 q1 + q0^4/4, B(q) = [[1 + q1^2/3, q2], [sin q0, 1], [0, q0 q1]],
           R = diag(1, 2);

  1. Gbar(a, b) (b - a) = g(b) - g(a) to round-off at random a, b;
  2. the substep is symmetric: stepping back from b with -c h returns a, with the same kappa;
  3. along N intervals of the triple jump (an initial-value march from consistent data, T = 1): HH equal at all
     3N + 1 nodes to round-off, g = 0 at all of them;
  4. order 4 of q and of the control u = R^{-1} B(q)^T lp at T against an independent reference: the index-reduced
     ODE (kappa from d^2 g/dt^2 = 0), integrated by scipy's DOP853 at tolerance 1e-13;
  5. the midpoint gradient grad g(zbar) in place of Gbar (the closed form's substep) does not conserve HH here: its
     drift is far above round-off, so item 3 can fail.
Run: python3 tests/crosscheck/order4_extended.py   (about a minute)
"""
import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

G1 = 1 / (2 - 2 ** (1 / 3))
G2 = 1 - 2 * G1
DG_TOL = 1e-12  # below this |Delta|^2 the Gonzalez gradients fall back to the midpoint gradient


def build(n, nc, Phi_of, M_of, V_of, B_of, Rinv):
    """sympy -> numpy functions of HH (maximized Hamiltonian without the constraint force), g and derivatives."""
    q, p, lq, lp = (sp.Matrix(sp.symbols("%s0:%d" % (s, n), real=True)) for s in ("q", "p", "lq", "lp"))
    z = sp.Matrix([q, p, lq, lp])
    Phi = sp.Matrix(Phi_of(q))
    G = Phi.jacobian(q)
    Minv = M_of(q).inv()
    E = (p.T * Minv * p)[0] / 2 + V_of(q)
    B = B_of(q)
    Eq, Ep = sp.Matrix([E]).jacobian(q).T, sp.Matrix([E]).jacobian(p).T
    HH = (lp.T * B * Rinv * B.T * lp)[0] / 2 + (lq.T * Ep)[0] - (lp.T * Eq)[0]
    g = sp.Matrix([Phi, G * lp])
    S = np.block([[np.zeros((2 * n, 2 * n)), np.eye(2 * n)], [-np.eye(2 * n), np.zeros((2 * n, 2 * n))]])
    Ssym = sp.Matrix(S.astype(int))
    gz = g.jacobian(z)
    hid = gz * Ssym * sp.Matrix([HH]).jacobian(z).T  # dg/dt (grad g S grad g^T = 0: no kappa in it)
    kap = sp.Matrix(sp.symbols("k0:%d" % (2 * nc)))
    f = Ssym * (sp.Matrix([HH]).jacobian(z).T + gz.T * kap)
    g2 = hid.jacobian(z) * f  # d^2 g / dt^2, linear in kappa
    lam = lambda e, *a: sp.lambdify(list(z) + list(a), e, "numpy")  # noqa: E731
    ct = {
        "n": n, "nc": nc, "S": S,
        "H": lam(HH), "dH": lam(sp.Matrix([HH]).jacobian(z).T),
        "Phi": lam(Phi), "G": lam(G), "g": lam(g), "gz": lam(gz), "hid": lam(hid),
        "g2A": lam(g2.jacobian(kap)), "g2b": lam(g2.subs({k: 0 for k in kap})),
        "u": lam(Rinv * B.T * lp),
    }
    # q -> lpbar . grad Phi_i(q) needs lpbar as an argument
    lb = sp.Matrix(sp.symbols("lb0:%d" % n, real=True))
    ct["Glb"] = sp.lambdify(list(q) + list(lb), G * lb, "numpy")
    ct["dGlb"] = sp.lambdify(list(q) + list(lb), (G * lb).jacobian(q), "numpy")
    return ct


def ev(fn, z, *a):
    return np.array(fn(*z, *a), dtype=float).reshape(-1)


def gonzalez(f, df, a, b):
    """Gonzalez discrete gradient of the scalar f between a and b (midpoint gradient below DG_TOL)."""
    m, d = (a + b) / 2, b - a
    gm = df(m)
    dd = d @ d
    if dd <= DG_TOL * (1 + m @ m):
        return gm
    return gm + (f(b) - f(a) - gm @ d) * d / dd


def dgrad_H(ct, a, b):
    return gonzalez(lambda w: float(ct["H"](*w)), lambda w: ev(ct["dH"], w), a, b)


def gbar(ct, a, b, midpoint=False):
    """Structured discrete gradient of g = (Phi, G lp): a 2nc x 4n matrix with Gbar (b - a) = g(b) - g(a)."""
    n, nc = ct["n"], ct["nc"]
    if midpoint:
        return np.array(ct["gz"](*((a + b) / 2)), float)
    qa, qb, la, lb = a[:n], b[:n], a[3 * n:], b[3 * n:]
    lbar = (la + lb) / 2
    Gb = np.zeros((2 * nc, 4 * n))
    Ga, Gbb = np.array(ct["G"](*a), float), np.array(ct["G"](*b), float)
    zq = lambda q: np.r_[q, a[n:]]  # noqa: E731  (Phi and G depend on q only)
    for i in range(nc):
        Gb[i, :n] = gonzalez(lambda q: ev(ct["Phi"], zq(q))[i], lambda q: np.array(ct["G"](*zq(q)), float)[i], qa, qb)
        Gb[nc + i, :n] = gonzalez(lambda q: ev(ct["Glb"], np.r_[q, lbar])[i],
                                  lambda q: np.array(ct["dGlb"](*q, *lbar), float)[i], qa, qb)
        Gb[nc + i, 3 * n:] = (Ga[i] + Gbb[i]) / 2
    return Gb


def residual(ct, a, ch, y, midpoint=False):
    n4 = 4 * ct["n"]
    b, k = y[:n4], y[n4:]
    F = b - a - ch * ct["S"] @ (dgrad_H(ct, a, b) + gbar(ct, a, b, midpoint).T @ k)
    return np.r_[F, ev(ct["g"], b)]


def substep(ct, a, ch, y0, midpoint=False):
    """Newton (Jacobian by central differences) on (b, kappa); returns y = (b, kappa) at round-off."""
    y, small = y0.copy(), 0
    for it in range(60):
        r = residual(ct, a, ch, y, midpoint)
        J = np.empty((len(y), len(y)))
        for j in range(len(y)):
            e = 1e-7 * (1 + abs(y[j]))
            yp, ym = y.copy(), y.copy()
            yp[j] += e
            ym[j] -= e
            J[:, j] = (residual(ct, a, ch, yp, midpoint) - residual(ct, a, ch, ym, midpoint)) / (2 * e)
        dy = np.linalg.solve(J, -r)
        y += dy
        small = small + 1 if np.max(abs(dy)) < 1e-12 * (1 + np.max(abs(y))) else 0
        if small == 3:  # two more updates after a small one: round-off (the Jacobian is inexact)
            return y
    raise RuntimeError("substep Newton did not converge (c h = %g)" % ch)


def march(ct, z0, T, N, midpoint=False):
    n4, nk = 4 * ct["n"], 2 * ct["nc"]
    h = T / N
    z, k = z0.copy(), np.zeros(nk)
    zs = [z.copy()]
    for _ in range(N):
        for c in (G1, G2, G1):
            f = ct["S"] @ ev(ct["dH"], z)
            y = substep(ct, z, c * h, np.r_[z + c * h * f, k], midpoint)
            z, k = y[:n4], y[n4:]
            zs.append(z.copy())
    return np.array(zs)


def reference(ct, z0, T):
    def rhs(t, z):
        A = np.atleast_2d(np.array(ct["g2A"](*z), float))
        k = np.linalg.solve(A, -ev(ct["g2b"], z))
        return ct["S"] @ (ev(ct["dH"], z) + np.array(ct["gz"](*z), float).T @ k)
    s = solve_ivp(rhs, (0, T), z0, method="DOP853", rtol=1e-13, atol=1e-13)
    assert s.success
    return s.y[:, -1]


def consistent(ct, z):
    """Gauss-Newton (least-norm steps) onto g = 0 and dg/dt = 0."""
    for _ in range(50):
        r = np.r_[ev(ct["g"], z), ev(ct["hid"], z)]
        if np.max(abs(r)) < 1e-15:
            break
        J = np.empty((len(r), len(z)))
        for j in range(len(z)):
            e = 1e-7
            zp, zm = z.copy(), z.copy()
            zp[j] += e
            zm[j] -= e
            J[:, j] = (np.r_[ev(ct["g"], zp), ev(ct["hid"], zp)] - np.r_[ev(ct["g"], zm), ev(ct["hid"], zm)]) / (2 * e)
        z = z - np.linalg.lstsq(J, r, rcond=None)[0]
    return z


def check(name, ct, z0, T, Ns):
    n = ct["n"]
    rng = np.random.default_rng(7)
    a, b = z0 + 0.1 * rng.standard_normal(4 * n), z0 + 0.1 * rng.standard_normal(4 * n)
    e1 = np.max(abs(gbar(ct, a, b) @ (b - a) - (ev(ct["g"], b) - ev(ct["g"], a))))
    e1s = np.max(abs(gbar(ct, a, b) - gbar(ct, b, a)))
    print("%s: |Gbar (b - a) - (g(b) - g(a))| = %.1e, |Gbar(a,b) - Gbar(b,a)| = %.1e" % (name, e1, e1s))
    assert e1 < 1e-14 and e1s < 1e-14
    h = T / Ns[0]
    y = substep(ct, z0, G1 * h, np.r_[z0, np.zeros(2 * ct["nc"])])
    yb = substep(ct, y[:4 * n], -G1 * h, np.r_[z0, np.zeros(2 * ct["nc"])])
    e2 = np.max(abs(yb[:4 * n] - z0)), np.max(abs(yb[4 * n:] - y[4 * n:]))
    print("%s: symmetric: back from b with -c h: |a' - a| = %.1e, |kappa' - kappa| = %.1e" % (name, *e2))
    assert max(e2) < 1e-12
    zr = reference(ct, z0, T)
    qr, ur = zr[:n], ev(ct["u"], zr)
    errs = []
    for N in Ns:
        zs = march(ct, z0, T, N)
        Hs = np.array([float(ct["H"](*w)) for w in zs])
        gs = max(np.max(abs(ev(ct["g"], w))) for w in zs)
        spread = (Hs.max() - Hs.min()) / max(1, abs(Hs[0]))
        eq, eu = np.max(abs(zs[-1][:n] - qr)), np.max(abs(ev(ct["u"], zs[-1]) - ur))
        errs.append((eq, eu))
        print("%s: N = %4d  HH spread %.1e  max|g| %.1e  |q - q_ref| %.3e  |u - u_ref| %.3e" % (name, N, spread, gs,
                                                                                         eq, eu))
        assert spread < 1e-13 and gs < 1e-13
    for i in range(1, len(Ns)):
        o = [np.log2(errs[i - 1][j] / errs[i][j]) for j in range(2)]
        print("%s: orders N = %d -> %d: q %.2f, u %.2f" % (name, Ns[i - 1], Ns[i], *o))
        assert all(abs(x - 4) < 0.2 for x in o), o
    zs = march(ct, z0, T, Ns[0], midpoint=True)
    Hs = np.array([float(ct["H"](*w)) for w in zs])
    drift = (Hs.max() - Hs.min()) / max(1, abs(Hs[0]))
    print("%s: with the midpoint gradient of g instead (N = %d): HH spread %.1e" % (name, Ns[0], drift))
    assert drift > 1e-8


def main():
    bead = build(2, 1, lambda q: [q[1] - sp.cosh(q[0])], lambda q: sp.eye(2), lambda q: 9.81 * q[1],
                 lambda q: sp.Matrix([[1], [0]]), sp.eye(1))
    x = -0.6
    z0 = consistent(bead, np.array([x, np.cosh(x), 0.4, 0.4 * np.sinh(x), 1.3, -0.7, 0.9, -0.2]))
    check("bead", bead, z0, 1.0, [10, 20, 40, 80])
    q0 = lambda q: q[0]  # noqa: E731
    gen = build(3, 2,
                lambda q: [(q.T * q)[0] / 2 - sp.Rational(1, 2) + q0(q) ** 3 / 5, q[2] - sp.sin(q[0]) / 2],
                lambda q: (1 + q[1] ** 2 / 4) * sp.eye(3) + q * q.T / 5,
                lambda q: 9.81 * q[1] + q[0] ** 4 / 4,
                lambda q: sp.Matrix([[1 + q[1] ** 2 / 3, q[2]], [sp.sin(q[0]), 1], [0, q[0] * q[1]]]),
                sp.diag(1, sp.Rational(1, 2)))
    z0 = consistent(gen, np.array([0.5, -0.8, 0.25, 0.3, 0.2, -0.1, 0.7, -0.4, 0.5, 0.3, 0.6, -0.2]))
    check("generic", gen, z0, 1.0, [10, 20, 40, 80])
    print("order4_extended: all checks passed")


if __name__ == "__main__":
    main()
