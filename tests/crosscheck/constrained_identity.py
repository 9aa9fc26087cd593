#!/usr/bin/env python3
"""Symbolic cross-check of two exact algebraic identities of the midpoint
(hamshoot-convention) discrete optimal-control scheme for holonomically
constrained mechanical systems.  Independent of the C solver: everything is
rebuilt here from the scheme's defining formulas.

System (generic, small):  n = 3 coordinates, nc = 2 constraints, m = 2 controls
  M^{-1} = Minv  (symmetric),  R^{-1} = Rinv (symmetric)
  Phi_i(q) = 1/2 q^T A_i q + b_i^T q + c_i      (A_i symmetric)
  G(q) = dPhi/dq, row i = (A_i q + b_i)^T,  Hess Phi_i = A_i
  V(q) = f^T q           (grad V = f)
  B(q) = B0 + sum_l q_l B_l   (n x m),  force B(q) u,  dB/dq_l = B_l

Scheme (all residuals already multiplied by h).  Interval (a, b):
  qbar=(q_a+q_b)/2, pbar=(p_a+p_b)/2, Gbar=G(qbar), Bbar=B(qbar), u=Rinv Bbar^T lp
  r^q = q_b - q_a - h Minv pbar
  r^p = p_b - p_a + h (f + Gbar^T gamma - Bbar u)
  a   = Gbar lp
Node k (neighbours k-1, k+1; intervals "-" = (k-1,k), "+" = (k,k+1)):
  chord=(q_{k-1}+q_{k+1})/2, Ghat=G(chord), c=(q_{k-1}+2q_k+q_{k+1})/4, Bc=B(c)
  c_B,l = 1/2 [ (B_l^T lp_-).Rinv(Bc^T lp_+) + (Bc^T lp_-).Rinv(B_l^T lp_+) ]
  rho^q = lq_+ - lq_- - (h/2) sum_i A_i (gamma_+,i lp_- + gamma_-,i lp_+)
          + h c_B - h Ghat^T nu
  rho^p = lp_+ - lp_- + (h/2) Minv (lq_+ + lq_-)
Discrete Hamiltonian of an interval:
  H^d = -1/2 u^T R u + lq.Minv pbar + lp.(-f - Gbar^T gamma + Bbar u)
      = +1/2 lp^T Bbar Rinv Bbar^T lp + lq.Minv pbar - lp.f - gamma.(Gbar lp)

Identity 1 ("hamiltonian_jump"), for ARBITRARY values of every variable:
  h (H^d_+ - H^d_-) = rho^q.d_q + rho^p.d_p
                      - 1/2 dlq.(r^q_+ + r^q_-) - 1/2 dlp.(r^p_+ + r^p_-)
                      - (h/2)(gamma_+ - gamma_-).(a_+ + a_-)
                      + (h/2) nu.(Phi(q_{k+1}) - Phi(q_{k-1}))
  with d_q=(q_{k+1}-q_{k-1})/2, d_p=(p_{k+1}-p_{k-1})/2, dlq=lq_+-lq_-,
  dlp=lp_+-lp_-.  (Phi(q_k)=0 is NOT assumed.)  Consequence: if all residuals
  vanish and Phi=0 at the nodes, H^d_+ = H^d_- (discrete H conserved).

Identity 2 ("energy_balance"), per interval, E(q,p) = 1/2 p^T Minv p + f.q,
for ARBITRARY values of every variable (u = Rinv Bbar^T lp, but the identity
holds for any u):
  E_b - E_a - (q_b-q_a)^T Bbar u
      = pbar^T Minv r^p + r^q.(f + Gbar^T gamma - Bbar u)
        - gamma.(Phi(q_b) - Phi(q_a))
  (uses Gbar (q_b - q_a) = Phi(q_b) - Phi(q_a), exact for quadratic Phi).
  Equivalent h-scaled form (also checked, "energy_balance_h"):
  h (E_b - E_a - (q_b-q_a)^T Bbar u)
      = (q_b - q_a - r^q).r^p + h r^q.(f + Gbar^T gamma - Bbar u)
        - h gamma.(Phi(q_b) - Phi(q_a))

Also checked ("midpoint_constraint"): Gbar (q_b-q_a) == Phi(q_b)-Phi(q_a).

Non-vacuity ("sanity"): flipping the sign of the A_i (constraint-Hessian)
term of rho^q, of the c_B term, or of the nu term must make identity 1 FAIL;
flipping the sign of the gamma.(Phi_b - Phi_a) term must make identity 2 FAIL.

The check is exact polynomial arithmetic over QQ (sympy sparse polynomial
ring), i.e. the residual is expanded and compared to the zero polynomial.
Draws:
  "symbolic": every constant (Minv, Rinv, A_i, b_i, c_i, f, B0, B_l) is a free
              symbol too -- fully generic.
  "random#1", "random#2": constants are random small integers/rationals
              (two seeded draws); the variables stay symbolic.

Prints one line per identity and draw; exit code 0 iff all hold.
"""
import random
import sys
import time

from sympy import QQ
from sympy.polys.rings import ring

n, nc, m = 3, 2, 2


# ---------------------------------------------------------------- helpers
def vec(names):
    return list(names)


def dot(a, b):
    s = 0
    for x, y in zip(a, b):
        s = s + x * y
    return s


def matvec(A, x):  # A: list of rows
    return [dot(row, x) for row in A]


def transpose(A):
    return [list(col) for col in zip(*A)]


def add(*vs):
    out = list(vs[0])
    for v in vs[1:]:
        out = [x + y for x, y in zip(out, v)]
    return out


def sub(a, b):
    return [x - y for x, y in zip(a, b)]


def scal(s, v):
    return [s * x for x in v]


def madd(A, B):
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(A, B)]


def mscal(s, A):
    return [[s * x for x in r] for r in A]


# ---------------------------------------------------------------- build
def build(mode, rng):
    """Return (ring, generators dict, constants dict)."""
    var_names = []

    def names(prefix, k):
        return ["%s_%d" % (prefix, i) for i in range(k)]

    # variables
    for s in ("q0", "q1", "q2", "p0", "p1", "p2", "lqm", "lpm", "lqp", "lpp"):
        var_names += names(s, n)
    var_names += names("gm", nc) + names("gp", nc) + names("nu", nc) + ["h"]

    const_names = []
    if mode == "symbolic":
        sym_pairs = [(i, j) for i in range(n) for j in range(i, n)]
        const_names += ["Minv_%d%d" % ij for ij in sym_pairs]
        const_names += ["Rinv_%d%d" % (i, j) for i in range(m) for j in range(i, m)]
        for c in range(nc):
            const_names += ["A%d_%d%d" % (c, i, j) for (i, j) in sym_pairs]
            const_names += ["b%d_%d" % (c, i) for i in range(n)]
            const_names += ["c%d" % c]
        const_names += names("f", n)
        for l in range(n + 1):  # B0 and B_1..B_n (stored as index 0..n)
            const_names += ["B%d_%d%d" % (l, i, j) for i in range(n) for j in range(m)]

    R, *gens = ring(",".join(var_names + const_names), QQ)
    g = dict(zip(var_names + const_names, gens))

    def V(prefix, k):
        return [g["%s_%d" % (prefix, i)] for i in range(k)]

    X = {s: V(s, n) for s in ("q0", "q1", "q2", "p0", "p1", "p2",
                              "lqm", "lpm", "lqp", "lpp")}
    X["gm"], X["gp"], X["nu"] = V("gm", nc), V("gp", nc), V("nu", nc)
    X["h"] = g["h"]

    def rnd():  # small nonzero-ish rational
        return QQ(rng.randint(-5, 5), rng.choice([1, 1, 2, 3]))

    def symmat(k, getter):
        A = [[None] * k for _ in range(k)]
        for i in range(k):
            for j in range(i, k):
                A[i][j] = A[j][i] = getter(i, j)
        return A

    C = {}
    if mode == "symbolic":
        C["Minv"] = symmat(n, lambda i, j: g["Minv_%d%d" % (i, j)])
        C["Rinv"] = symmat(m, lambda i, j: g["Rinv_%d%d" % (i, j)])
        C["A"] = [symmat(n, lambda i, j, c=c: g["A%d_%d%d" % (c, i, j)]) for c in range(nc)]
        C["b"] = [[g["b%d_%d" % (c, i)] for i in range(n)] for c in range(nc)]
        C["c"] = [g["c%d" % c] for c in range(nc)]
        C["f"] = V("f", n)
        Bs = [[[g["B%d_%d%d" % (l, i, j)] for j in range(m)] for i in range(n)]
              for l in range(n + 1)]
    else:
        def lift(x):
            return R(x)
        C["Minv"] = symmat(n, lambda i, j: lift(rnd()))
        C["Rinv"] = symmat(m, lambda i, j: lift(rnd()))
        C["A"] = [symmat(n, lambda i, j: lift(rnd())) for _ in range(nc)]
        C["b"] = [[lift(rnd()) for _ in range(n)] for _ in range(nc)]
        C["c"] = [lift(rnd()) for _ in range(nc)]
        C["f"] = [lift(rnd()) for _ in range(n)]
        Bs = [[[lift(rnd()) for _ in range(m)] for _ in range(n)]
              for _ in range(n + 1)]
    C["B0"], C["Bl"] = Bs[0], Bs[1:]
    return R, X, C


# ---------------------------------------------------------------- scheme
class Scheme:
    def __init__(self, R, X, C):
        self.R, self.X, self.C = R, X, C
        self.half = R(QQ(1, 2))

    def Phi(self, q):
        C = self.C
        return [self.half * dot(q, matvec(C["A"][i], q)) + dot(C["b"][i], q) + C["c"][i]
                for i in range(nc)]

    def G(self, q):  # nc x n
        C = self.C
        return [add(matvec(C["A"][i], q), C["b"][i]) for i in range(nc)]

    def Bmat(self, q):  # n x m
        C = self.C
        Bq = [list(r) for r in C["B0"]]
        for l in range(n):
            Bq = madd(Bq, mscal(q[l], C["Bl"][l]))
        return Bq

    def interval(self, qa, qb, pa, pb, lq, lp, gam):
        C, h, half = self.C, self.X["h"], self.half
        qbar = scal(half, add(qa, qb))
        pbar = scal(half, add(pa, pb))
        Gb = self.G(qbar)
        Bb = self.Bmat(qbar)
        BbT = transpose(Bb)
        u = matvec(C["Rinv"], matvec(BbT, lp))
        Minv_pbar = matvec(C["Minv"], pbar)
        GbT_gam = matvec(transpose(Gb), gam)
        Bb_u = matvec(Bb, u)
        rq = sub(sub(qb, qa), scal(h, Minv_pbar))
        rp = add(sub(pb, pa), scal(h, sub(add(C["f"], GbT_gam), Bb_u)))
        a = matvec(Gb, lp)
        # H^d = -1/2 u^T R u + lq.Minv pbar + lp.(-f - Gbar^T gamma + Bbar u),
        # with u^T R u = (Bbar^T lp)^T Rinv (Bbar^T lp) = lp.Bbar u
        uRu = dot(lp, Bb_u)
        Hd = -half * uRu + dot(lq, Minv_pbar) + dot(lp, add(sub(scal(-1, C["f"]), GbT_gam), Bb_u))
        return dict(qbar=qbar, pbar=pbar, Gb=Gb, Bb=Bb, u=u, rq=rq, rp=rp, a=a, Hd=Hd,
                    GbT_gam=GbT_gam, Bb_u=Bb_u)

    def node(self, q0, q1, q2, lqm, lpm, lqp, lpp, gm, gp, nu,
             sA=1, sB=1, snu=1):
        """rho^q, rho^p; sA/sB/snu = signs of the A-, c_B-, nu-terms (for sanity)."""
        C, h, half = self.C, self.X["h"], self.half
        chord = scal(half, add(q0, q2))
        Ghat = self.G(chord)
        quarter = self.R(QQ(1, 4))
        cpt = scal(quarter, add(q0, scal(2, q1), q2))
        Bc = self.Bmat(cpt)
        BcT = transpose(Bc)
        a, b = lpm, lpp
        BcTa, BcTb = matvec(BcT, a), matvec(BcT, b)
        cB = []
        for l in range(n):
            BlT = transpose(C["Bl"][l])
            cB.append(half * (dot(matvec(BlT, a), matvec(C["Rinv"], BcTb))
                              + dot(BcTa, matvec(C["Rinv"], matvec(BlT, b)))))
        Aterm = [0] * n
        for i in range(nc):
            Aterm = add(Aterm, matvec(C["A"][i], add(scal(gp[i], lpm), scal(gm[i], lpp))))
        rho_q = add(sub(lqp, lqm),
                    scal(-sA * half * h, Aterm),
                    scal(sB * h, cB),
                    scal(-snu * h, matvec(transpose(Ghat), nu)))
        rho_p = add(sub(lpp, lpm), scal(half * h, matvec(C["Minv"], add(lqp, lqm))))
        return rho_q, rho_p


# ---------------------------------------------------------------- identities
def identity_hamiltonian_jump(S, **signs):
    X, h, half = S.X, S.X["h"], S.half
    q0, q1, q2, p0, p1, p2 = (X[k] for k in ("q0", "q1", "q2", "p0", "p1", "p2"))
    lqm, lpm, lqp, lpp = X["lqm"], X["lpm"], X["lqp"], X["lpp"]
    gm, gp, nu = X["gm"], X["gp"], X["nu"]
    Im = S.interval(q0, q1, p0, p1, lqm, lpm, gm)
    Ip = S.interval(q1, q2, p1, p2, lqp, lpp, gp)
    rho_q, rho_p = S.node(q0, q1, q2, lqm, lpm, lqp, lpp, gm, gp, nu, **signs)
    d_q = scal(half, sub(q2, q0))
    d_p = scal(half, sub(p2, p0))
    dlq, dlp = sub(lqp, lqm), sub(lpp, lpm)
    lhs = h * (Ip["Hd"] - Im["Hd"])
    rhs = (dot(rho_q, d_q) + dot(rho_p, d_p)
           - half * dot(dlq, add(Ip["rq"], Im["rq"]))
           - half * dot(dlp, add(Ip["rp"], Im["rp"]))
           - half * h * dot(sub(gp, gm), add(Ip["a"], Im["a"]))
           + half * h * dot(nu, sub(S.Phi(q2), S.Phi(q0))))
    return lhs - rhs


def _energy(S, q, p):
    return S.half * dot(p, matvec(S.C["Minv"], p)) + dot(S.C["f"], q)


def identity_energy_balance(S, sphi=1):
    X = S.X
    qa, qb, pa, pb = X["q0"], X["q1"], X["p0"], X["p1"]
    lq, lp, gam = X["lqm"], X["lpm"], X["gm"]
    I = S.interval(qa, qb, pa, pb, lq, lp, gam)
    dq = sub(qb, qa)
    lhs = _energy(S, qb, pb) - _energy(S, qa, pa) - dot(dq, I["Bb_u"])
    force = sub(add(S.C["f"], I["GbT_gam"]), I["Bb_u"])
    rhs = (dot(I["pbar"], matvec(S.C["Minv"], I["rp"])) + dot(I["rq"], force)
           - sphi * dot(gam, sub(S.Phi(qb), S.Phi(qa))))
    return lhs - rhs


def identity_energy_balance_h(S):
    X, h = S.X, S.X["h"]
    qa, qb, pa, pb = X["q0"], X["q1"], X["p0"], X["p1"]
    lq, lp, gam = X["lqm"], X["lpm"], X["gm"]
    I = S.interval(qa, qb, pa, pb, lq, lp, gam)
    dq = sub(qb, qa)
    lhs = h * (_energy(S, qb, pb) - _energy(S, qa, pa) - dot(dq, I["Bb_u"]))
    force = sub(add(S.C["f"], I["GbT_gam"]), I["Bb_u"])
    rhs = (dot(sub(dq, I["rq"]), I["rp"]) + h * dot(I["rq"], force)
           - h * dot(gam, sub(S.Phi(qb), S.Phi(qa))))
    return lhs - rhs


def identity_midpoint_constraint(S):
    X = S.X
    qa, qb = X["q0"], X["q1"]
    qbar = scal(S.half, add(qa, qb))
    lhsv = matvec(S.G(qbar), sub(qb, qa))
    rhsv = sub(S.Phi(qb), S.Phi(qa))
    # combine the nc components with independent weights (the nu symbols)
    return dot(X["nu"], sub(lhsv, rhsv))


# ---------------------------------------------------------------- main
def main():
    t0 = time.time()
    ok = True
    draws = [("symbolic", None), ("random#1", 20240601), ("random#2", 987654321)]
    for mode, seed in draws:
        rng = random.Random(seed)
        R, X, C = build("symbolic" if mode == "symbolic" else "random", rng)
        S = Scheme(R, X, C)
        checks = [
            ("hamiltonian_jump", lambda: identity_hamiltonian_jump(S)),
            ("energy_balance", lambda: identity_energy_balance(S)),
            ("energy_balance_h", lambda: identity_energy_balance_h(S)),
            ("midpoint_constraint", lambda: identity_midpoint_constraint(S)),
        ]
        for name, fn in checks:
            t = time.time()
            res = fn()
            if res == 0:
                print("identity %s [%s]: exact (residual expands to 0)  (%.2fs)"
                      % (name, mode, time.time() - t))
            else:
                ok = False
                terms = len(res.terms()) if hasattr(res, "terms") else 1
                print("FAILS: identity %s [%s]: residual has %d nonzero terms, e.g. %s"
                      % (name, mode, terms, str(res.as_expr())[:300]))
        # non-vacuity: wrong signs must break identity 1
        for label, fn in (
                ("A-term sign flipped", lambda: identity_hamiltonian_jump(S, sA=-1)),
                ("c_B sign flipped", lambda: identity_hamiltonian_jump(S, sB=-1)),
                ("nu sign flipped", lambda: identity_hamiltonian_jump(S, snu=-1)),
                ("energy gamma.dPhi sign flipped", lambda: identity_energy_balance(S, sphi=-1))):
            res = fn()
            if res == 0:
                ok = False
                print("FAILS: sanity [%s]: %s but the identity still holds (check is vacuous)"
                      % (mode, label))
            else:
                print("sanity [%s]: %s -> identity breaks (%d terms), as expected"
                      % (mode, label, len(res.terms())))
    print("total time %.2fs" % (time.time() - t0))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
