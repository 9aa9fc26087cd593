#!/usr/bin/env python3
r"""Independent cross-check: the CONTINUOUS optimal free final time T* and cost J*
of optimal-control problems whose data depend on the final time T itself
(tests/data/pendulum_T_data.ocp, tests/data/di_T_data.ocp), computed with
numpy + scipy only, derived here from first principles (not from the C sources).

Problem class (one coordinate q, one control u; T is ONE number, a constant
parameter of the data, not the running time t -- the problem is autonomous in t):

    x = (q, p),   qdot = p / M(T),   pdot = -V_q(q; T) + B(T) u
    J = int_0^T L(x, u; T) dt,       L = 1/2 R(T) u^2 + ell(q; T)
    x(0) = x0(T),   x(T) = xT   (both fixed),   T free,   no terminal cost.

Conventions: maximum-principle Hamiltonian (normal case, lambda_0 = 1)

    H(x, u, lam; T) = -L + lam . f
                    = -1/2 R u^2 - ell + lq p / M + lp (-V_q + B u)
    dH/du = 0        ->  u = B lp / R
    lam_dot = -dH/dx ->  lq_dot = ell_q + lp V_qq,   lp_dot = -lq / M.

H is constant along an extremal (no explicit t).

Condition on T (derivation).  lam is the maximum-principle costate (minus the
costate of the minimum convention, minus the gradient of the value function).
Adjoin the dynamics and the boundary conditions to -J (the maximized quantity):

    Lag = int_0^T [ H(x,u,lam;T) - lam . xdot ] dt
          + nu0 . (x(0) - x0(T)) + nuT . (x(T) - xT)            ( = -J on feasible x )

Integrating -lam.xdot by parts,
    Lag = int_0^T [H + lam_dot . x] dt - lam(T).x(T) + lam(0).x(0)
          + nu0 . (x(0) - x0(T)) + nuT . (x(T) - xT).
Stationarity in x(0), x(T):  nu0 = -lam(0),  nuT = lam(T).  At an extremal
Lag is stationary in x(.), u(.), lam(.), so (envelope theorem) the total
derivative of -J*(T) is the partial derivative of Lag in T, with the
trajectories extended smoothly past T:
    d(-J*)/dT = [H + lam_dot.x]_{t=T} - d/dT[lam(T).x(T)] + nuT . xdot(T)
                + int_0^T dH/dT|_explicit dt - nu0 . x0'(T)
              = H(T) + int_0^T dH/dT|_explicit dt + lam(0) . x0'(T)
(the lam_dot.x and lam.xdot terms cancel because nuT = lam(T)).  Hence

    dJ*/dT = -H(T) - int_0^T dH/dT|_explicit dt - lam(0) . x0'(T)

and the optimality condition for a free T (with a terminal cost phi(x(T);T)
one would add dphi/dT to dJ*/dT) reads

    H(T) + int_0^T dH/dT|_explicit dt = dphi/dT + nu0 . x0'(T),  nu0 = -lam(0)

which, with H constant along the extremal, is the continuous limit of the
discrete condition (1/N) sum_k H^d_k + h sum_k dH^d_k/dT = dphi/dT + nu0 . dx0/dT.
Sanity checks: with T-independent data it is the classical H = 0; and
dJ*/dx0 = -lam(0) (lam = -grad of the value function) gives the x0(T) term.
Explicit T-derivative (u held fixed; dH/du = 0 so it does not matter):

    dH/dT = -1/2 R' u^2 - ell_T - lq p M' / M^2 + lp (-V_qT + B' u).

The pendulum's fixed-T optimum J*(T) has several local minima in T (near 2,
3.2, 4.3); the one of the .ocp guess T = 3 is meant.  Dropping or flipping the
x0'(T) term, or dropping the integral, moves T* by 0.03 to 0.1, so route (a)
discriminates the condition sharply.

Numerical routes.  Time is rescaled t = T tau, tau in [0, 1]; d/dtau = T d/dt.
 (a) fixed T: the BVP (q, p, lq, lp, Jacc) with dJacc/dtau = T L, Jacc(0) = 0,
     x(0) = x0(T), x(1) = xT, solved by solve_bvp (tol 3e-10, or 1e-9 where its
     mesh refinement runs into round-off; continuation in T); J*(T) = Jacc(1).
     dJ*/dT from central differences at delta = 0.005 and 0.0025, Richardson-
     extrapolated (error O(delta^4)); its root by the secant method from
     T = T_guess, T_guess + 0.1.  No condition on T is used: this route checks
     the derivation of route (b).
 (b) free T: ONE BVP for (q, p, lq, lp, Jacc, I) with dI/dtau = T dH/dT|_explicit,
     I(0) = 0, the unknown parameter T of solve_bvp and the extra boundary condition
         H(y(1); T) + I(1) + lam(0) . x0'(T) = 0
     (started from the fixed-T extremal at T_guess, which selects the local
     optimum near the guess; same tolerances), then polished by single shooting
     (DOP853, rtol 1e-13, Newton on (lq(0), lp(0), T)) on the same conditions.
     Reported T, J are the polished ones; route_b.bvp_minus_shooting is the
     solve_bvp error estimate.
 di_T_data also has the analytic answer
     J(T) = 6 R M^2 D^2 / (B^2 T^3) + (c + w T) T,  D = d + s T,
 minimized by brentq on the hand-derived dJ/dT.

Output: one JSON object on stdout; "T", "J" of each problem are route (b)'s.
--quick skips route (a).  Exit status 1 if a validation fails (di_T_data route
(b) vs analytic beyond 1e-9 in T; routes (a), (b) beyond 1e-7 in T).
"""
import json
import sys
import time
import warnings
from collections import namedtuple

import numpy as np
from scipy.integrate import solve_bvp, solve_ivp
from scipy.optimize import brentq

warnings.filterwarnings("ignore")

# A problem's data as functions of (q, T), vectorized in q.  Suffixes: _q, _qq, _T
# are partial derivatives; dM, dB, dR are d/dT; dx0 = x0'(T).
Problem = namedtuple("Problem", "name T_guess M dM B dB R dR V_q V_qq V_qT ell ell_q ell_T x0 dx0 xT")


# ---------------------------------------------------------------- problem data
def pendulum_T_data(m=1.0, l=1.0, g=9.81, c=1.0, k=0.5):
    """tests/data/pendulum_T_data.ocp: V = -m g l sin(q) (1 + 0.05 T)."""
    a = m * g * l
    return Problem(
        name="pendulum_T_data", T_guess=3.0,
        M=lambda T: m * l * l * (1 + 0.1 * T), dM=lambda T: 0.1 * m * l * l,
        B=lambda T: 1 + 0.1 * T, dB=lambda T: 0.1,
        R=lambda T: 1 + 0.2 * T, dR=lambda T: 0.2,
        V_q=lambda q, T: -a * np.cos(q) * (1 + 0.05 * T),
        V_qq=lambda q, T: a * np.sin(q) * (1 + 0.05 * T),
        V_qT=lambda q, T: -a * np.cos(q) * 0.05,
        ell=lambda q, T: c + 0.1 * k * T * q * q,
        ell_q=lambda q, T: 0.2 * k * T * q,
        ell_T=lambda q, T: 0.1 * k * q * q,
        x0=lambda T: np.array([-0.05 * T, 0.0]), dx0=lambda T: np.array([-0.05, 0.0]),
        xT=np.array([np.pi / 2, 0.0]))


DI = dict(d=1.0, c=1.0, a=0.1, b=0.2, e=0.15, s=0.1, w=0.05)


def di_T_data(d=1.0, c=1.0, a=0.1, b=0.2, e=0.15, s=0.1, w=0.05):
    """tests/data/di_T_data.ocp (its B coefficient is called f there)."""
    zero = lambda q, T: 0.0 * q
    return Problem(
        name="di_T_data", T_guess=2.0,
        M=lambda T: 1 + b * T, dM=lambda T: b,
        B=lambda T: 1 + e * T, dB=lambda T: e,
        R=lambda T: 1 + a * T, dR=lambda T: a,
        V_q=zero, V_qq=zero, V_qT=zero,
        ell=lambda q, T: c + w * T + 0.0 * q,
        ell_q=zero,
        ell_T=lambda q, T: w + 0.0 * q,
        x0=lambda T: np.array([-s * T, 0.0]), dx0=lambda T: np.array([-s, 0.0]),
        xT=np.array([d, 0.0]))


def di_analytic(d=1.0, c=1.0, a=0.1, b=0.2, e=0.15, s=0.1, w=0.05):
    """T* and J* of J(T) = 6 R M^2 D^2/(B^2 T^3) + (c + w T) T by brentq on dJ/dT:
    with F = R M^2 D^2 B^-2 T^-3,  F' = F (a/R + 2b/M + 2s/D - 2e/B - 3/T)."""
    def F(T):
        R, M, B, D = 1 + a * T, 1 + b * T, 1 + e * T, d + s * T
        return R * M * M * D * D / (B * B * T ** 3)

    def J(T):
        return 6 * F(T) + (c + w * T) * T

    def dJ(T):
        R, M, B, D = 1 + a * T, 1 + b * T, 1 + e * T, d + s * T
        return 6 * F(T) * (a / R + 2 * b / M + 2 * s / D - 2 * e / B - 3 / T) + c + 2 * w * T

    T = brentq(dJ, 0.5, 10.0, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    return T, J(T)


# ---------------------------------------------------------------- extremal field
def control(P, y, T):
    return P.B(T) * y[3] / P.R(T)


def lagrangian(P, y, T):
    u = control(P, y, T)
    return 0.5 * P.R(T) * u * u + P.ell(y[0], T)


def hamiltonian(P, y, T):
    """H = -L + lam . f (maximum-principle sign)."""
    q, p, lq, lp = y[0], y[1], y[2], y[3]
    u = control(P, y, T)
    return -lagrangian(P, y, T) + lq * p / P.M(T) + lp * (-P.V_q(q, T) + P.B(T) * u)


def dH_dT(P, y, T):
    """Explicit partial derivative of H in T at fixed (x, u, lam)."""
    q, p, lq, lp = y[0], y[1], y[2], y[3]
    u = control(P, y, T)
    M = P.M(T)
    return (-0.5 * P.dR(T) * u * u - P.ell_T(q, T) - lq * p * P.dM(T) / (M * M)
            + lp * (-P.V_qT(q, T) + P.dB(T) * u))


def extremal_rhs(P, y, T):
    """d/dt of (q, p, lq, lp, Jacc, I): state, costate, running cost, int dH/dT."""
    q, p, lq, lp = y[0], y[1], y[2], y[3]
    u = control(P, y, T)
    M = P.M(T)
    return np.vstack([
        p / M,
        -P.V_q(q, T) + P.B(T) * u,
        P.ell_q(q, T) + lp * P.V_qq(q, T),
        -lq / M,
        lagrangian(P, y, T),
        dH_dT(P, y, T),
    ])


def scaled_rhs(P, T):
    """d/dtau = T d/dt on tau in [0, 1]."""
    return lambda tau, y: T * extremal_rhs(P, y, T)


def initial_guess(P, T, n=201):
    tau = np.linspace(0.0, 1.0, n)
    x0 = P.x0(T)
    y = np.zeros((6, n))
    y[0] = x0[0] + (P.xT[0] - x0[0]) * tau
    return tau, y


# ---------------------------------------------------------------- BVP solves
BVP_TOLS = (3e-10, 1e-9)  # tightest first; near 1e-10 solve_bvp's residual hits a round-off
                          # floor and its mesh refinement can run away, then the next is used
MAX_NODES = 15000


def bvp(fun, bc, tau, y, **kw):
    """solve_bvp at the tightest tolerance of BVP_TOLS that converges; (sol, tol)."""
    for tol in BVP_TOLS:
        sol = solve_bvp(fun, bc, tau, y, tol=tol, bc_tol=1e-13, max_nodes=MAX_NODES, **kw)
        if sol.status == 0:
            return sol, tol
    raise RuntimeError("solve_bvp failed: " + sol.message)


def resample(sol, n=401):
    """The solution on a fresh uniform mesh: a continuation guess that does not
    inherit (and keep growing) the previous refined mesh."""
    tau = np.linspace(0.0, 1.0, n)
    return tau, sol.sol(tau)


def fixed_T_bc(P, T):
    x0 = P.x0(T)

    def bc(ya, yb):
        return np.array([ya[0] - x0[0], ya[1] - x0[1], yb[0] - P.xT[0], yb[1] - P.xT[1], ya[4]])
    return bc


def solve_fixed(P, T, tau, y):
    """Fixed-T extremal (q, p, lq, lp, Jacc) on tau in [0, 1]; (sol, tol)."""
    f = lambda tau, y: scaled_rhs(P, T)(tau, np.vstack([y, np.zeros_like(y[:1])]))[:5]
    return bvp(f, fixed_T_bc(P, T), tau, y[:5])


def free_T_bc(P):
    def bc(ya, yb, prm):
        T = prm[0]
        return np.array([
            ya[0] - P.x0(T)[0], ya[1] - P.x0(T)[1],
            yb[0] - P.xT[0], yb[1] - P.xT[1],
            ya[4], ya[5],
            hamiltonian(P, yb, T) + yb[5] + ya[2:4] @ P.dx0(T),
        ])
    return bc


def solve_free(P, tau, y, T):
    """Free-T extremal (q, p, lq, lp, Jacc, I), parameter T; (sol, tol)."""
    fun = lambda tau, y, prm: scaled_rhs(P, prm[0])(tau, y)
    return bvp(fun, free_T_bc(P), tau, y, p=[T])


# ---------------------------------------------------------------- shooting polish
def shoot(P, z, T, rtol=1e-13):
    """Integrate the extremal from x0(T), lam(0) = z over t in [0, T]; returns y(T)."""
    y0 = np.concatenate([P.x0(T), z, [0.0, 0.0]])
    f = lambda t, y: extremal_rhs(P, y[:, None], T)[:, 0]
    s = solve_ivp(f, (0.0, T), y0, method="DOP853", rtol=rtol, atol=1e-15)
    return s.y[:, -1]


def newton(res, z, steps=20, tol=1e-14, h=1e-7):
    """Newton with a central finite-difference Jacobian (polishing only)."""
    for _ in range(steps):
        r = res(z)
        Jm = np.empty((r.size, z.size))
        for j in range(z.size):
            dz = np.zeros_like(z)
            dz[j] = h * max(1.0, abs(z[j]))
            Jm[:, j] = (res(z + dz) - res(z - dz)) / (2 * dz[j])
        step = np.linalg.solve(Jm, -r)
        z = z + step
        if np.max(np.abs(step)) <= tol * max(1.0, np.max(np.abs(z))):
            break
    return z, float(np.max(np.abs(res(z))))


# ---------------------------------------------------------------- route (b): free T
def solve_free_T(P, polish=True):
    """Route (b): the fixed-T extremal at the guess T (so that the free-T BVP starts
    on the branch of the guess), then the free-T BVP, then a shooting polish."""
    T = P.T_guess
    sol, _ = solve_fixed(P, T, *initial_guess(P, T))
    tau, y5 = resample(sol)
    sol, tol = solve_free(P, tau, np.vstack([y5, np.zeros_like(y5[:1])]), T)
    T_bvp, J_bvp = float(sol.p[0]), float(sol.y[4, -1])
    H = hamiltonian(P, sol.y, T_bvp)
    out = dict(T_bvp=T_bvp, J_bvp=J_bvp, bvp_tol=tol, bvp_nodes=int(sol.x.size),
               H=float(np.mean(H)), H_spread=float(H.max() - H.min()),
               int_dHdT=float(sol.y[5, -1]), lambda0=[float(v) for v in sol.y[2:4, 0]])
    out["T"], out["J"] = T_bvp, J_bvp
    if polish:
        def res(z):  # z = (lq(0), lp(0), T)
            yT = shoot(P, z[:2], z[2])
            return np.array([yT[0] - P.xT[0], yT[1] - P.xT[1],
                             hamiltonian(P, yT, z[2]) + yT[5] + z[:2] @ P.dx0(z[2])])

        z, r = newton(res, np.array([sol.y[2, 0], sol.y[3, 0], T_bvp]))
        out.update(T=float(z[2]), J=float(shoot(P, z[:2], z[2])[4]), shooting_residual=r,
                   bvp_minus_shooting=dict(T=T_bvp - z[2], J=J_bvp - shoot(P, z[:2], z[2])[4]))
    return out


# ---------------------------------------------------------------- route (a): fixed T
class FixedT:
    """J*(T) for fixed T by solve_bvp (no condition on T involved); the last
    solution, resampled, is the next initial guess (continuation in T).
    One instance per computation, no global state."""

    def __init__(self, P):
        self.P = P
        self.guess = initial_guess(P, P.T_guess)
        self.tols = []

    def J(self, T):
        sol, tol = solve_fixed(self.P, T, *self.guess)
        self.tols.append(tol)
        self.guess = resample(sol)
        return float(sol.y[4, -1])

    def dJ(self, T, delta):
        """Central differences at delta and delta/2, Richardson (error O(delta^4))."""
        D = [(self.J(T + d) - self.J(T - d)) / (2 * d) for d in (delta, delta / 2)]
        return (4 * D[1] - D[0]) / 3


def solve_fixed_T_route(P, T0, T1, delta=0.005):
    """Route (a): secant iteration on the Richardson dJ*/dT = 0 from T0, T1."""
    ft = FixedT(P)
    g0, g1 = ft.dJ(T0, delta), ft.dJ(T1, delta)
    for _ in range(30):
        T0, g0, T1 = T1, g1, T1 - g1 * (T1 - T0) / (g1 - g0)
        if abs(T1 - T0) < 1e-11:
            break
        g1 = ft.dJ(T1, delta)
    J = ft.J(T1)
    return dict(T=float(T1), J=J, dJdT=float(g1), bvp_solves=len(ft.tols), bvp_tol_max=max(ft.tols))


# ---------------------------------------------------------------- main
def pendulum_report(quick):
    P = pendulum_T_data()
    b = solve_free_T(P)
    rec = dict(T=b["T"], J=b["J"], route_b=b)
    ok = True
    if not quick:
        a = solve_fixed_T_route(P, P.T_guess, P.T_guess + 0.1)
        rec["route_a"] = a
        rec["method_agreement"] = dict(dT=abs(a["T"] - b["T"]), dJ=abs(a["J"] - b["J"]))
        ok = rec["method_agreement"]["dT"] <= 1e-7
    return P.name, rec, ok


def di_report(quick):
    P = di_T_data(**DI)
    Tan, Jan = di_analytic(**DI)
    b = solve_free_T(P)
    rec = dict(T=b["T"], J=b["J"], T_analytic=Tan, J_analytic=Jan, route_b=b,
               method_agreement=dict(dT=abs(Tan - b["T"]), dJ=abs(Jan - b["J"])))
    ok = rec["method_agreement"]["dT"] <= 1e-9
    if not quick:
        a = solve_fixed_T_route(P, P.T_guess, P.T_guess + 0.1)
        rec["route_a"] = a
        rec["method_agreement_a"] = dict(dT=abs(Tan - a["T"]), dJ=abs(Jan - a["J"]))
        ok = ok and rec["method_agreement_a"]["dT"] <= 1e-7
    return P.name, rec, ok


def main():
    quick = "--quick" in sys.argv[1:]
    t0 = time.time()
    out, ok = {}, True
    for report in (pendulum_report, di_report):
        name, rec, good = report(quick)
        out[name] = rec
        ok = ok and good
    out.update(quick=quick, validated=ok, seconds=time.time() - t0)
    print(json.dumps(out, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
