#!/usr/bin/env python3
"""The satellite of Siebert's thesis sec. 4.3 / 6.3 (Leyendecker et al., DMOCC) in generalized coordinates: a main
body in 3-1-3 Euler angles (psi, th, ph) and three rotors at relative angles a1, a2, a3 (docs/satellite.md).

    satellite_euler.py --write FILE   writes problems/satellite_euler.ocp (M(q) derived here with sympy)
    satellite_euler.py --write-spin FILE  writes tests/data/satellite_euler_spin.ocp (problems/satellite.ocp's twin)
    satellite_euler.py --check FILE   checks that FILE's mass matrix and boundary data are those derived here
    satellite_euler.py --momentum DIR the spatial angular momentum along a solution's trajectory.csv (max |L|)

The body's orientation is R(t) = C R313(psi, th, ph) with the constant C = R313(0, pi/2, 0)^T: 3-1-3 angles are
singular at th = 0 (det M ~ sin^2 th), which is the identity; a constant factor on the left changes no body angular
velocity, so M(q) is the plain 3-1-3 one and only the end angles move. Needs /usr/bin/python3 (sympy, numpy).
"""
import sys

import numpy as np
import sympy as sp

MB, EB = 1005.3096, (89.3609, 201.0619, 357.4434)  # main body: mass, Euler-tensor principal values
MR, ES, ET = 424.1150, 8.8357, 106.0288  # a rotor: mass, Euler value along its spin axis, across
L = (0.9167, 1.25, 1.5833)  # rotor i's centre on the main body's axis i at distance L[i]
T = 5


def rot313(psi, th, ph, mod=np):
    """R = Rz(psi) Rx(th) Rz(ph) (body to space)."""
    def rz(a):
        return mod.Matrix([[mod.cos(a), -mod.sin(a), 0], [mod.sin(a), mod.cos(a), 0], [0, 0, 1]]) if mod is sp else \
            np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])

    def rx(a):
        return mod.Matrix([[1, 0, 0], [0, mod.cos(a), -mod.sin(a)], [0, mod.sin(a), mod.cos(a)]]) if mod is sp else \
            np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    return rz(psi) * rx(th) * rz(ph) if mod is sp else rz(psi) @ rx(th) @ rz(ph)


def angles313(R):
    """(psi, th, ph) of R = Rz(psi) Rx(th) Rz(ph), th in (0, pi)."""
    th = np.arccos(np.clip(R[2, 2], -1, 1))
    return np.arctan2(R[0, 2], -R[1, 2]), th, np.arctan2(R[2, 0], R[2, 1])


def target():
    """The rotation by the rotation vector pi/sqrt(14) (1, 2, 3) (Rodrigues)."""
    v = np.pi / np.sqrt(14) * np.array([1.0, 2.0, 3.0])
    a = np.linalg.norm(v)
    n = v / a
    K = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    return np.eye(3) + np.sin(a) * K + (1 - np.cos(a)) * K @ K


C = rot313(0, np.pi / 2, 0).T  # R = C R313: the identity is (0, pi/2, 0)


def locked_inertia():
    """The body-frame inertia of the whole system with the rotors locked, about the system's centre of mass."""
    Jb = np.diag([EB[1] + EB[2], EB[0] + EB[2], EB[0] + EB[1]])
    Js, Jt = 2 * ET, ES + ET
    c = MR * np.array(L)  # first moment of the rotors' masses about the main body's centre
    Mtot = MB + 3 * MR
    Jtr = sum(MR * L[i] ** 2 * (np.eye(3) - np.outer(np.eye(3)[i], np.eye(3)[i])) for i in range(3))
    Jtr -= (c @ c * np.eye(3) - np.outer(c, c)) / Mtot  # parallel axes back to the system's centre of mass
    return Jb + (2 * Jt + Js) * np.eye(3) + Jtr, Js


def derive():
    """(q, M(q)) from T = 1/2 w^T J_A w + sum Js w_i a_i' + 1/2 sum Js a_i'^2, w the body angular velocity."""
    psi, th, ph, a1, a2, a3 = q = sp.symbols("psi th ph a1 a2 a3")
    qd = sp.symbols("psid thd phd a1d a2d a3d")
    w = [qd[0] * sp.sin(th) * sp.sin(ph) + qd[1] * sp.cos(ph), qd[0] * sp.sin(th) * sp.cos(ph) - qd[1] * sp.sin(ph),
         qd[0] * sp.cos(th) + qd[2]]
    JA, Js = locked_inertia()
    JA = sp.Matrix(3, 3, [sp.Float(x, 17) for x in JA.flatten()])
    Js = sp.Float(Js, 17)
    wv = sp.Matrix(w)
    ad = sp.Matrix(qd[3:])
    Tk = (wv.T * JA * wv)[0] / 2 + Js * (wv.T * ad)[0] + Js * (ad.T * ad)[0] / 2
    M = sp.hessian(sp.expand(Tk), qd)
    return q, M.applyfunc(lambda e: sp.simplify(sp.trigsimp(e)))


def boundary():
    """x0 and xT (xT as strings: free components '*')."""
    a0 = angles313(C.T)
    aT = angles313(C.T @ target())
    assert np.allclose(C @ rot313(*aT), target()) and np.allclose(C @ rot313(*a0), np.eye(3))
    x0 = list(a0) + [0, 0, 0] + [0] * 6
    xT = ["%.17g" % x for x in aT] + ["*"] * 3 + ["*"] * 3 + ["0"] * 3
    return x0, xT


HEADER = """# The satellite of Siebert's thesis sections 4.3 and 6.3 (Leyendecker et al., DMOCC) in generalized coordinates,
# docs/satellite.md: a main body (m = 1005.3096, Euler-tensor principal values 89.3609, 201.0619, 357.4434) with
# three rotors (m = 424.1150, Euler value 8.8357 along the spin axis, 106.0288 across) on its axes i at distances
# 0.9167, 1.25, 1.5833, each turned against the main body by a motor torque u_i. Coordinates: 3-1-3 Euler angles
# (psi, th, ph) of the main body and the rotor angles a_i relative to it. No external force: the centre of mass of
# the whole system stays at rest and decouples; the inertia below is about it (the main body's centre moves, see
# docs/satellite.md). The orientation is R = C R313(psi, th, ph) with the constant C = R313(0, pi/2, 0)^T: 3-1-3
# angles are singular at th = 0 (the identity; det M ~ sin(th)^2), C moves the identity to (0, pi/2, 0) and changes
# no body angular velocity, so M is the plain 3-1-3 one. Rest to rest in T = 5 from the identity to the rotation by
# the rotation vector pi/sqrt(14) (1, 2, 3) (th(T) = 0.54, away from the singularity); final rotor angles free;
# rest at T is p_a = 0 (the rotors' spin momenta): the main body's momenta follow from the angular momentum (0,
# conserved for every control) and are left free (fixing them is redundant: docs/problem-format.md).
# Generated by tests/crosscheck/satellite_euler.py --write (sympy); do not edit by hand.
"""


def fmt(e):
    return sp.sstr(e, full_prec=False).replace("**", "^")


SPIN_HEADER = """# The twin of problems/satellite.ocp (the satellite in directors, docs/satellite.md) in the Euler angles of
# problems/satellite_euler.ocp: the same continuous problem. Final rotor angles fixed (the values satellite.ocp fixes,
# tests/crosscheck/satellite_natural.py's A_T), all momenta free at T, and rest imposed by the terminal penalty
# w/2 (p_a1^2 + p_a2^2 + p_a3^2) on the rotors' spin momenta (with the angular momentum 0 they vanish only at rest).
# Generated by tests/crosscheck/satellite_euler.py --write-spin (sympy); do not edit by hand.
"""


# The spatial angular momentum L = C R313 K^-T p_body as monitored invariants (docs/satellite.md): with the 3-1-3
# generators, L313.e_z = p_psi, L313.n = p_th (n = (cos psi, sin psi, 0), the line of nodes), L313.R e_z = p_ph, solved
# for L313 (sympy agrees: momentum() below), and C = Rx(pi/2)^T maps (x, y, z) to (x, z, -y). The rotor angles are
# relative to the main body: a rotation of everything leaves them unchanged, so they do not enter L.
INVARIANTS = ["invariant L_x: p_th*cos(psi) + sin(psi)*(p_ph - p_psi*cos(th))/sin(th)", "invariant L_y: p_psi",
              "invariant L_z: cos(psi)*(p_ph - p_psi*cos(th))/sin(th) - p_th*sin(psi)"]


def write(path, spin=False):
    q, M = derive()
    x0, xT = boundary()
    if spin:
        from satellite_natural import A_T, W
        xT = xT[:3] + ["%.17g" % a for a in A_T] + ["*"] * 6
    lines = [(SPIN_HEADER + "problem: satellite_euler_spin\nparam w: %g in (0, inf)" % W) if spin else
             (HEADER + "problem: satellite_euler"), "coordinates: " + ", ".join(map(str, q)), "controls: 3",
             "mass: " + ", ".join(fmt(M[i, j]) for i in range(6) for j in range(6)), "potential: 0",
             "B: 0, 0, 0,  0, 0, 0,  0, 0, 0,  1, 0, 0,  0, 1, 0,  0, 0, 1", "R: 1, 0, 0,  0, 1, 0,  0, 0, 1",
             "T: %g" % T, "N: 20", "x0: " + ", ".join("%.17g" % x for x in x0), "xT: " + ", ".join(xT)]
    if spin:
        lines.append("terminal_cost: 0.5*w*(p_a1^2 + p_a2^2 + p_a3^2)")
    lines += INVARIANTS
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def check_file(path):
    """Compares the file's mass matrix (numerically, at random q) and boundary data with the derivation."""
    keys = dict(l.split(":", 1) for l in open(path) if ":" in l and not l.startswith("#"))
    q, M = derive()
    Mf = sp.Matrix(6, 6, [sp.sympify(s.replace("^", "**")) for s in keys["mass"].split(",")])
    rng = np.random.default_rng(1)
    err = 0
    for _ in range(5):
        sub = dict(zip(q, rng.uniform(-3, 3, 6)))
        err = max(err, float(max(abs(x) for x in (M - Mf).subs(sub).evalf())))
    x0, xT = boundary()
    ok = err < 1e-9 and [float(x) for x in keys["x0"].split(",")] == [float(x) for x in x0] and \
        [s.strip() for s in keys["xT"].split(",")] == xT
    print("mass matrix difference %.3g, boundary data %s" % (err, "equal" if ok else "DIFFER"))
    return ok


def momentum(outdir):
    """max over the nodes of |L|, L the spatial angular momentum C R313 (J_A w + Js a'), from the momenta:
    the body-frame angular momentum is K^-T p_body (K: w = K(q) (psi', th', ph')) -- no velocities needed."""
    import csv
    rows = list(csv.DictReader(open(outdir + "/trajectory.csv")))
    worst = 0.0
    for r in rows:
        psi, th, ph = (float(r["q_" + k]) for k in ("psi", "th", "ph"))
        p = np.array([float(r["p_" + k]) for k in ("psi", "th", "ph")])
        K = np.array([[np.sin(th) * np.sin(ph), np.cos(ph), 0], [np.sin(th) * np.cos(ph), -np.sin(ph), 0],
                      [np.cos(th), 0, 1]])
        Lb = np.linalg.solve(K.T, p)  # p_body = K^T (J_A w + Js a') = K^T L_body
        worst = max(worst, np.linalg.norm(C @ rot313(psi, th, ph) @ Lb))
    print("max |L| over %d nodes: %.3g" % (len(rows), worst))
    return worst


if __name__ == "__main__":
    if sys.argv[1] == "--write":
        write(sys.argv[2])
    elif sys.argv[1] == "--write-spin":
        write(sys.argv[2], spin=True)
    elif sys.argv[1] == "--check":
        sys.exit(0 if check_file(sys.argv[2]) else 1)
    else:
        momentum(sys.argv[2])
