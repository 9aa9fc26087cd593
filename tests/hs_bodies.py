"""hamshoot system tests of issue 40, item 1: rigid bodies and joints as building blocks of a problem file
(problems/bodies.c, docs/multibody.md). Standard library only."""
import math
import os
import random
import subprocess
import tempfile

from hs_util import ENV, HAMSHOOT, check, rel, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ARM_NATURAL = os.path.join(ROOT, "problems", "manipulator3_natural.ocp")
ARM_BODIES = os.path.join(ROOT, "problems", "manipulator3_bodies.ocp")
BOOM = os.path.join(ROOT, "problems", "boom_spatial.ocp")
BOOM_ANGLES = os.path.join(HERE, "data", "boom_angles.ocp")
BOOM_NUMERIC = os.path.join(HERE, "data", "boom_numeric.ocp")
ARM_POSES = os.path.join(HERE, "data", "manipulator3_poses.ocp")
CART = os.path.join(ROOT, "problems", "cart_pendulum_bodies.ocp")
CART_ANGLES = os.path.join(HERE, "data", "cart_pendulum_angles.ocp")
CART_SPATIAL = os.path.join(HERE, "data", "cart_pendulum_spatial.ocp")
NO_EXTRA = ["-hs_check_extremal", "no"]
SATELLITE = os.path.join(HERE, "data", "satellite_penalty.ocp")
SAT_BODIES = os.path.join(HERE, "data", "satellite_bodies.ocp")


def _states(s):
    """The trajectory's q and p columns, in their order (the names differ between the two files)."""
    rows = s["_rows"]
    keys = [k for k in rows[0] if k.startswith("q_") or k.startswith("p_")]
    return [[float(r[k]) for k in keys] for r in rows], keys


def t_bodies_arm():
    """The 3-link arm from bodies and joints (problems/manipulator3_bodies.ocp) against the hand-written natural
    coordinates (problems/manipulator3_natural.ocp): the generated coordinates come in the hand-written order, and the
    solutions agree to round-off (J to 1e-12 relative, every state at every node to 1e-9 absolute, the states being
    O(10)) on 1 and 2 ranks; -problem_print_expanded prints the generated coordinates and the hand-written B. The
    same arm with its end states from start and end lines (tests/data/manipulator3_poses.ocp: centres and angles)
    gives the same J to 1e-12."""
    ref, _, _ = run(["-problem", ARM_NATURAL] + NO_EXTRA)
    if not ref or not ref["converged"]:
        return check(False, "manipulator3_natural: not converged")
    xr, kr = _states(ref)
    for ranks in (1, 2):
        s, _, _ = run(["-problem", ARM_BODIES] + NO_EXTRA, ranks=ranks)
        if not s or not s["converged"]:
            check(False, "manipulator3_bodies on %d ranks: not converged" % ranks)
            continue
        x, k = _states(s)
        check(len(k) == len(kr) == 36 and k[0] == "q_arm1_x" and k[17] == "q_arm3_2y",
              "manipulator3_bodies: columns %s" % k[:3])
        check(abs(s["J"] - ref["J"]) <= 1e-12 * abs(ref["J"]),
              "manipulator3_bodies on %d ranks: J = %.17g, the natural file's %.17g" % (ranks, s["J"], ref["J"]))
        dev = max(abs(a - b) for ra, rb in zip(x, xr) for a, b in zip(ra, rb))
        check(len(x) == len(xr) and dev <= 1e-9, "manipulator3_bodies on %d ranks: states differ by %.3g" % (ranks, dev))
        check(s["constraints"]["count"] == 15 and s["constraints"]["max_phi"] < 1e-13,
              "manipulator3_bodies: constraints %s" % s["constraints"])
    s, _, _ = run(["-problem", ARM_POSES] + NO_EXTRA)
    check(s is not None and s["converged"] and abs(s["J"] - ref["J"]) <= 1e-12 * abs(ref["J"]),
          "manipulator3_poses: J %s, the natural file's %.17g" % (s and s["J"], ref["J"]))
    p = subprocess.run([HAMSHOOT, "-problem", ARM_BODIES, "-problem_print_expanded", "-quiet"] + NO_EXTRA,
                       env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    with open(ARM_NATURAL) as f:
        B = [ln for ln in f if ln.startswith("B:")][0].split(":", 1)[1].split(",")
    want = ["-0.5*ay1", "0.5*ay1", "0", "0.5*ax1"]  # the hand-written B's row ax1, then ay1's first entry
    got = [ln for ln in p.stdout.splitlines() if ln.startswith("B:")]
    check(p.returncode == 0 and "coordinates: arm1_x, arm1_y, arm1_1x, arm1_1y, arm1_2x, arm1_2y, arm2_x" in p.stdout,
          "-problem_print_expanded: rc %d, no generated coordinates" % p.returncode)
    check([b.strip() for b in B[6:10]] == want and len(got) == 1 and
          [e.strip().replace("arm1_1", "a").replace("arm1_2", "b") for e in got[0][2:].split(",")][6:10] ==
          ["-0.5*ay", "0.5*ay", "0", "0.5*ax"], "-problem_print_expanded: B is not the hand-written one: %s" % got[:1])


def _limits(files):
    """Each file's Richardson limit of J from N = 40, 80, after checking order 2 (error ratio of N = 20, 40, 80).
    Sanitized (HS_SANITIZED) {}: the files after the first (the forms written by hand; the first, from bodies, is the
    caller's own run at its N = 20) solved once at N = 20, their code path; the order and the limits are numerical
    properties the release suite checks (AddressSanitizer's time: the 40 and 80 solves were most of bodies_spatial's
    37 s in CI's sanitized run)."""
    if os.environ.get("HS_SANITIZED"):
        for f in files[1:]:
            s, _, _ = run(["-problem", f, "-N", "20"] + NO_EXTRA)
            check(s is not None and s["converged"], "%s N = 20: not converged" % f)
        return {}
    lim = {}
    for f in files:
        Jn = {}
        for N in (20, 40, 80):
            s, _, _ = run(["-problem", f, "-N", str(N)] + NO_EXTRA)
            if not s or not s["converged"]:
                check(False, "%s N = %d: not converged" % (f, N))
                return None
            Jn[N] = s["J"]
        ratio = (Jn[20] - Jn[40]) / (Jn[40] - Jn[80])
        check(3.5 < ratio < 4.5, "%s: J error ratio %.3g, expected 4 (order 2)" % (os.path.basename(f), ratio))
        lim[f] = (4 * Jn[80] - Jn[40]) / 3
    return lim


def t_bodies_prismatic():
    """A cart on a rail (prismatic joint to the ground) carrying a pendulum (revolute joint), a force along the rail
    and a torque at the hinge (problems/cart_pendulum_bodies.ocp, 12 coordinates, 10 constraints): converges on 1 and
    2 ranks (the same J), H^d spread, E - W and max|Phi| at round-off, and its J converges at order 2 to the limit of
    the same problem in (x, theta) with the kinetic energy written by hand (tests/data/cart_pendulum_angles.ocp): the
    Richardson limits of N = 40, 80 agree to 1e-5 relative (measured 1.8e-6; each form's error at N = 80: 6e-4).
    The same system from spatial bodies in the x-z plane (tests/data/cart_pendulum_spatial.ocp: a spatial prismatic
    and a spatial revolute joint, 24 coordinates, 22 constraints) gives the planar J to 1e-12 relative and the rod's
    centre (x, z) = the planar (x, y) at every node to 1e-9."""
    J, rod = {}, {}
    for ranks, f in ((1, CART), (2, CART), (1, CART_SPATIAL)):
        s, _, _ = run(["-problem", f] + NO_EXTRA, ranks=ranks)
        if not s or not s["converged"]:
            return check(False, "%s on %d ranks: not converged" % (os.path.basename(f), ranks))
        J[ranks if f == CART else 3] = s["J"]
        ycol = "q_rod_y" if f == CART else "q_rod_z"
        rod[f] = [(float(r["q_rod_x"]), float(r[ycol])) for r in s["_rows"]]
        check(s["H_spread_relative"] < 1e-11, "cart_pendulum: H^d spread %.3g relative" % s["H_spread_relative"])
        check(s["energy_work_spread"] < 1e-10, "cart_pendulum: E - W spread %.3g" % s["energy_work_spread"])
        c = s["constraints"]
        check(c["count"] == (10 if f == CART else 22) and c["class"] == "exact" and c["max_phi"] < 1e-12, "cart_pendulum: constraints %s" % c)
    check(rel(J[2], J[1]) < 1e-12, "cart_pendulum: J on 2 ranks %.17g, on 1 %.17g" % (J[2], J[1]))
    check(abs(J[3] - J[1]) < 1e-12 * J[1], "cart_pendulum_spatial: J %.17g, planar %.17g" % (J[3], J[1]))
    dev = max(abs(a - b) for pa, pb in zip(rod[CART], rod[CART_SPATIAL]) for a, b in zip(pa, pb))
    check(len(rod[CART]) == len(rod[CART_SPATIAL]) and dev < 1e-9, "cart_pendulum_spatial: rod centre off by %.3g" % dev)
    lim = _limits((CART, CART_ANGLES))
    if lim:
        check(abs(lim[CART] - lim[CART_ANGLES]) < 1e-5 * abs(lim[CART_ANGLES]),
              "cart_pendulum: Richardson limit %.10g from bodies, %.10g in (x, theta)" % (lim[CART], lim[CART_ANGLES]))


def t_bodies_spatial():
    """A spatial arm from bodies and revolute joints (problems/boom_spatial.ocp: a column yawing about the vertical, a
    boom pitching about the column's director d1; 24 coordinates, 22 constraints): converges from the default guess
    on 1 and 2 ranks (the same J), H^d spread, E - W and max|Phi| at round-off; and its J converges at order 2 to the
    limit of the same problem in generalized coordinates (tests/data/boom_angles.ocp, its kinetic energy derived by
    hand): the Richardson limits of N = 40, 80 agree to 1e-5 relative (measured 7e-7; each form's own O(h^2) error
    at N = 80 is 3e-4). Its start and end lines (centres and quaternions) give the same J (1e-12) as the numbers
    computed independently with rotation matrices (tests/data/boom_numeric.ocp)."""
    J = {}
    for ranks in (1, 2):
        s, _, _ = run(["-problem", BOOM] + NO_EXTRA, ranks=ranks)
        if not s or not s["converged"]:
            return check(False, "boom_spatial on %d ranks: not converged" % ranks)
        J[ranks] = s["J"]
        check(s["H_spread_relative"] < 1e-12, "boom_spatial: H^d spread %.3g relative" % s["H_spread_relative"])
        check(s["energy_work_spread"] < 1e-10, "boom_spatial: E - W spread %.3g" % s["energy_work_spread"])
        c = s["constraints"]
        check(c["count"] == 22 and c["class"] == "exact" and c["max_phi"] < 1e-13, "boom_spatial: constraints %s" % c)
    check(rel(J[2], J[1]) < 1e-12, "boom_spatial: J on 2 ranks %.17g, on 1 %.17g" % (J[2], J[1]))
    s, _, _ = run(["-problem", BOOM_NUMERIC] + NO_EXTRA)
    check(s is not None and s["converged"] and abs(s["J"] - J[1]) < 1e-12 * J[1],
          "boom_numeric: J %s, from the poses %.17g" % (s and s["J"], J[1]))
    lim = _limits((BOOM, BOOM_ANGLES))
    if lim == {}:  # sanitized: no limits (_limits)
        return
    check(lim and abs(lim[BOOM] - lim[BOOM_ANGLES]) < 1e-5 * abs(lim[BOOM_ANGLES]),
          "boom: Richardson limits %s" % lim)


BASE = """param m: 1
body a: planar, m, 1, 2
body b: planar, m, 1, 2
point O: ground, 0, 0
point pa: a, 0, -1
point ta: a, 0, 1
point pb: b, 0, -1
joint j1: revolute, O, pa
joint j2: revolute, ta, pb
torque u1: j1
torque u2: j2
gravity: 0, -1
R: 1, 0, 0, 1
T: 1
x0: 0, 1, 1, 0, 0, 1, 0, 3, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
xT: 0, 1, 1, 0, 0, 1, 0, 3, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
"""
# (line to replace (1-based; 0: append), its new text, the line the message names, words the message holds)
BAD = [
    (3, "body a: planar, m, 1, 2", 3, "duplicate body name 'a'"),
    (5, "point pa: c, 0, -1", 5, "unknown body 'c'"),
    (9, "joint j2: revolute, ta, pc", 9, "unknown point 'pc'"),
    (3, "body b: spatial, m, 1, 2, 3", 3, "all bodies of a file are planar or all spatial"),
    (2, "body a: planar, m, 1", 2, "mass and 2 Euler-tensor values"),
    (9, "joint j2: revolute, ta, pa", 9, "on the same body a"),
    (9, "joint j2: spherical, ta, pb", 9, "planar bodies join by 'revolute"),
    (11, "torque u2: j3", 11, "expected the name of a joint or rotor declared above"),
    (11, "torque u2: j1", 11, "already has torque u1"),
    (12, "gravity: 0, -1, 0", 12, "gravity: 3 components for planar bodies"),
    (0, "coordinates: x", 17, "generated from the body, point and joint lines"),
    (0, "B: 1, 0", 17, "generated from the torque lines"),
    (4, "point O: a b, 0, 0", 4, "unknown body 'a b'"),
    (2, "body 2a: planar, m, 1, 2", 2, "is not a name"),
    (2, "body a: planar, mm, 1, 2", 2, "in the 'mass' generated from the bodies"),
    (12, "gravity: 0, -gg", 12, "in the 'potential' generated from the bodies"),
    (5, "point pa: a, 0, -(1", 5, "unbalanced parentheses"),
    (2, "body %s: planar, m, 1, 2" % ("a" * 61), 2, "a name of at most 60 characters"),
    (0, "rotor w: a, 1, 1, 1, 1, 1", 17, "'a' is not a spatial body"),
    (0, "start a: 0, 1, 0\nstart b: 0, 3, 0", 15, "x0: the start lines (line 17) give it"),
    (0, "start a: 0, 1, 0", 17, "body 'b' has none"),
    (0, "start c: 0, 1, 0", 17, "start c: no body or rotor of that name"),
    (0, "end a: 0, 1", 17, "expected the centre and the angle of d1 from e1"),
    (0, "end a: 0, 1, 0\nend a: 0, 1, 0", 18, "end a: given twice (line 17)"),
]
SPATIAL_BAD = [
    ("rotor w: a, 1, 1, 1, 1, 1\nstart a: 0, 0, 0, 1, 0, 0, 0", "rotor 'w' has none"),
    ("joint j: revolute, O, p", "needs 'axis I J'"),
    ("rotor w: a, 4, 1, 1, 1, 1", "is not a director's number"),
    ("joint j: prismatic, O, p", "a prismatic joint needs 'axis I'"),
    ("joint j: prismatic, O, p, axis 4", "a prismatic joint needs 'axis I'"),
    ("rotor w: b, 1, 1, 1, 1, 1", "'b' is not a spatial body declared above"),
    ("rotor w: a, 1, 1, 1, 1", "(6 items), found 5"),
    ("joint w: spherical, O, p\nrotor w: a, 1, 1, 1, 1, 1", "duplicate joint name 'w'"),
    ("rotor w: a, 1, 1, 1, 1, 1\ntorque u: w\ntorque v: w", "w already has torque u"),
    ("joint j: spherical, O, p\ntorque u: j", "a torque acts about a revolute joint's axis"),
]


def t_bodies_errors():
    """Bad body, point, joint, torque and gravity lines: exit status 1 and a message naming the file's line and the
    defect (unknown body or point, duplicate name, planar/spatial mix, a joint on one body, a torque on a missing or
    spherical joint or twice, a key the bodies generate given by hand, an error in an expression of a body line
    reported at that line); the base file itself solves (so that each failure is the one line's)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "b.ocp")
        with open(path, "w") as f:
            f.write(BASE)
        s, _, _ = run(["-problem", path, "-N", "4"] + NO_EXTRA)
        check(s is not None and s["converged"], "bodies_errors: the base file does not solve")
        for line, text, at, words in BAD:
            lines = BASE.splitlines()
            if line:
                lines[line - 1] = text
            else:
                lines += text.split("\n")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            _, out, rc = run(["-problem", path], expect_rc=1)
            check("%s:%d:" % (path, at) in out and words in out,
                  "bodies_errors: '%s' -> expected line %d and '%s', got: %s" % (text, at, words, out.strip()[-300:]))
        for text, words in SPATIAL_BAD:
            with open(path, "w") as f:
                f.write("body a: spatial, 1, 1, 1, 1\npoint p: a, 0, 0, 1\npoint O: ground, 0, 0, 0\n%s\n" % text)
            _, out, rc = run(["-problem", path], expect_rc=1)
            check(words in out and "%s:%d:" % (path, 3 + len(text.splitlines())) in out, "bodies_errors: '%s' -> %s" % (text, out.strip()[-300:]))


def _keys(text):
    out = {}
    for ln in text.splitlines():
        ln = ln.split("#")[0]
        if ":" in ln:
            k, v = ln.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def _items(v):
    """A list value split at the commas outside parentheses."""
    res, depth, cur = [], 0, ""
    for ch in v:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            res.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return res + [cur.strip()]


def _ev(e, env):
    return eval(e.replace("^", "**"), {"__builtins__": {}}, env)  # numbers, names (env), + - * / ^ ( ), calls in env


def t_bodies_rotors():
    """The satellite from a body and three rotors (tests/data/satellite_bodies.ocp, 30 coordinates: the main body's
    centre kept) against the hand-written tests/data/satellite_penalty.ocp (27: the centre eliminated by the centre of mass at
    the origin, phi = -sum_k m_k l_k d_k / m_total), at random coordinates: the generated mass matrix reduced by that
    elimination (T^T M T) equals the hand-written one to 1e-14 relative, and the generated 21 constraints and B
    (director rows; the centre's rows 0) equal the hand-written ones exactly (the same expressions)."""
    p = subprocess.run([HAMSHOOT, "-problem", SAT_BODIES, "-problem_print_expanded", "-quiet"] + NO_EXTRA, env=ENV,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    check(p.returncode == 0, "satellite_bodies: exit %d" % p.returncode)
    gen = _keys(p.stdout)
    with open(SATELLITE) as f:
        hand = _keys(f.read())
    if not all(k in gen for k in ("coordinates", "mass", "constraints", "B")):
        return check(False, "satellite_bodies: no generated keys in: %s" % p.stdout[-300:])
    cg, ch = _items(gen["coordinates"]), _items(hand["coordinates"])
    n, nh = len(cg), len(ch)
    check(n == 30 and nh == 27, "satellite_bodies: %d and %d coordinates" % (n, nh))
    rnd = random.Random(1)
    vals = [rnd.uniform(-1, 1) for _ in range(nh)]
    envh, envg = dict(zip(ch, vals)), dict(zip(cg, [0.0] * 3 + vals))
    Mg, Mh = [_ev(e, envg) for e in _items(gen["mass"])], [_ev(e, envh) for e in _items(hand["mass"])]
    mr, ls, mtot = 424.1150, (0.9167, 1.25, 1.5833), 1005.3096 + 3 * 424.1150  # thesis Table 4.1
    T = [[0.0] * nh for _ in range(n)]
    for i in range(nh):
        T[3 + i][i] = 1.0
    for k in range(3):
        for c in range(3):
            T[c][3 * k + c] = -mr * ls[k] / mtot
    MT = [[sum(Mg[a * n + b] * T[b][j] for b in range(n)) for j in range(nh)] for a in range(n)]
    dev = max(abs(sum(T[a][i] * MT[a][j] for a in range(n)) - Mh[i * nh + j]) for i in range(nh) for j in range(nh))
    check(dev <= 1e-14 * max(abs(x) for x in Mh), "satellite_bodies: reduced mass matrix off by %.3g" % dev)
    pg, ph = [_ev(e, envg) for e in _items(gen["constraints"])], [_ev(e, envh) for e in _items(hand["constraints"])]
    check(len(pg) == len(ph) == 21 and pg == ph, "satellite_bodies: constraints differ")
    Bg, Bh = [_ev(e, envg) for e in _items(gen["B"])], [_ev(e, envh) for e in _items(hand["B"])]
    check(len(Bg) == 90 and Bg[:9] == [0] * 9 and Bg[9:] == Bh, "satellite_bodies: B differs")


def t_bodies_poses():
    """Start and end lines of a spatial body and its rotors against numbers computed elsewhere: the satellite's
    main body at rest at the identity and, at the end, rotated by pi about (1, 2, 3)/sqrt(14) (the quaternion
    0, 1, 2, 3, left unnormalized: hamshoot normalizes it), each rotor at angle 0 and at the end at the angle (here
    from atan2) of tests/data/satellite_penalty.ocp's final rotor directors; the generated x0 and xT (their directors) equal
    tests/data/satellite_penalty.ocp's (written by tests/crosscheck/satellite_natural.py from rotation matrices) to 1e-12."""
    with open(SAT_BODIES) as f:
        src = f.read()
    with open(SATELLITE) as f:
        hand = _keys(f.read())
    x0 = [float(v) for v in _keys(src)["x0"].split(",")]
    hx0 = [float(v) for v in _items(hand["x0"])[:27]]
    hxT = [float(v) for v in _items(hand["xT"])[:27]]
    d = [hxT[0:3], hxT[3:6], hxT[6:9]]
    lines = ["start main: %r, %r, %r, 1, 0, 0, 0" % tuple(x0[:3]), "end main: %r, %r, %r, 0, 1, 2, 3" % tuple(x0[:3])]
    for k in range(3):
        e1, b1, b2 = hxT[9 + 6 * k:12 + 6 * k], d[(k + 1) % 3], d[(k + 2) % 3]
        a = math.atan2(sum(x * y for x, y in zip(e1, b2)), sum(x * y for x, y in zip(e1, b1)))
        lines += ["start r%d: 0" % (k + 1), "end r%d: %r" % (k + 1, a)]
    text = "".join(ln + "\n" for ln in src.splitlines() if not ln.startswith(("x0:", "xT:"))) + "\n".join(lines) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "poses.ocp")
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([HAMSHOOT, "-problem", path, "-problem_print_expanded", "-snes_max_it", "1", "-quiet"]
                           + NO_EXTRA, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    gen = _keys(p.stdout)
    if "x0" not in gen or "xT" not in gen:
        return check(False, "poses: no generated x0, xT: %s" % p.stdout[-300:])
    env = {"cos": math.cos, "sin": math.sin, "pi": math.pi}
    gx0 = [_ev(e, env) for e in _items(gen["x0"])]
    gxT = [_ev(e, env) for e in _items(gen["xT"])]
    check(len(gx0) == len(gxT) == 60 and gx0[30:] == [0] * 30 and gxT[30:] == [0] * 30,
          "poses: %d and %d entries, momenta not 0" % (len(gx0), len(gxT)))
    dev = max(abs(a - b) for a, b in zip(gx0[3:30] + gxT[3:30], hx0 + hxT))
    check(dev < 1e-12, "poses: the generated directors differ from satellite_penalty.ocp's by %.3g" % dev)
