"""hamshoot system tests (tests/hstest.py), the solver internals of issue 11 against PETSc's and
MUMPS' own: PC hsband (bvp/petscext/pcband.c, in place and AVX2 to the byte), PC hsdrop (bvp/petscext/pcdrop.c), the
line search hsbt (bvp/petscext/linesearch.c), and shooting's rankblock Krylov solver (-hs_shoot_ksp).
"""
import filecmp
import os
import re
import shutil
import tempfile

from hs_util import check, run


def t_krylov():
    """-hs_shoot_ksp rankblock: GMRES iterations per Newton step stay bounded by 2 dim (P-1) + 1
    as the number of segments M grows (pendulum dim = 2, kepler dim = 6), and the answer equals
    the direct solve's."""
    for prob, N, Ms, dim in (("pendulum", 320, (20, 80, 320), 2), ("kepler", 160, (10, 40, 160), 6)):
        base, _, _ = run(["-problem", prob, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(Ms[-1])])
        for P in (1, 2, 4):
            per = []
            for M in Ms:
                s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(M),
                               "-hs_shoot_ksp", "rankblock"], ranks=P)
                if not (s and s["converged"]):
                    check(False, "%s P=%d M=%d rankblock: %s" % (prob, P, M, s and s["diagnosis"]))
                    continue
                per.append(s["ksp_iterations"] / s["newton_iterations"])
                rel = abs(s["J"] - base["J"]) / abs(base["J"])
                check(rel < 1e-10, "%s P=%d M=%d: J differs from the direct solve by %.2e" % (prob, P, M, rel))
            bound = 2 * dim * (P - 1) + 1
            print("%-9s N=%d ranks=%d: GMRES iterations per Newton step for M = %s: %s (bound %d)"
                  % (prob, N, P, Ms, " ".join("%.1f" % x for x in per), bound))
            check(per and max(per) <= bound, "%s P=%d: %s iterations per Newton step exceed %d" % (prob, P, per, bound))
        # matrix-free operator (PETSc's -snes_mf_operator: J v by differencing the re-marched residual),
        # preconditioned by the assembled Jacobian
        s, _, _ = run(["-problem", prob, "-N", str(N), "-hs_bvp_type", "shooting", "-hs_shoot_segments", str(Ms[1]),
                       "-hs_shoot_ksp", "rankblock", "-snes_mf_operator"], ranks=2)
        ok = s and s["converged"] and abs(s["J"] - base["J"]) / abs(base["J"]) < 1e-10
        print("%-9s matrix-free operator, 2 ranks: converged %s, %s Newton, %s GMRES iterations"
              % (prob, s and s["converged"], s and s["newton_iterations"], s and s["ksp_iterations"]))
        check(ok, "%s -snes_mf_operator: %s" % (prob, s and (s["snes_reason"], s["J"], base["J"])))
    # exact matrix-free operator (-hs_shoot_mf): the stored Jacobian blocks applied without a global
    # matrix; Newton must take the same number of iterations as with the assembled Jacobian
    for P in (1, 2, 4):
        a, _, _ = run(["-problem", "kepler", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8"], ranks=P)
        s, _, _ = run(["-problem", "kepler", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8", "-hs_shoot_mf"], ranks=P)
        ok = a and s and s["converged"] and s["newton_iterations"] == a["newton_iterations"] and abs(s["J"] - a["J"]) < 1e-10 * abs(a["J"])
        print("kepler -hs_shoot_mf, %d ranks: %s Newton (assembled: %s), %s GMRES iterations, J rel %.1e"
              % (P, s and s["newton_iterations"], a and a["newton_iterations"], s and s["ksp_iterations"],
                 abs(s["J"] - a["J"]) / abs(a["J"]) if ok else float("nan")))
        check(ok, "-hs_shoot_mf on %d ranks" % P)
    # profiling: -log_view shows the shooting events next to PETSc's linear solve
    _, out, _ = run(["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4", "-log_view"], ranks=2)
    for ev in ("HsShootMarch", "HsShootSens", "HsShootAssembly", "KSPSolve", "SNESSolve"):
        check(re.search(r"^%s\s+\d+" % ev, out, re.M) is not None, "-log_view lacks the event %s" % ev)


def t_drop():
    """Issue 11, the many-body regime: -pc_type hsdrop (bvp/petscext/pcdrop.c), GMRES on the exact Jacobian
    preconditioned by the LU (MUMPS) of its entries above 1e-14 of their row's largest. The node blocks
    are stored whole (4n x 4n); for ncar (quadratic E and ell) all but their few structural entries are
    zero or round-off (c_a of the Gonzalez terms), so the factored matrix is a few percent of the stored
    one. Against -hs_linear_solver mumps (LU of everything) on the same runs: the same Newton iterations,
    J^d to 1e-12 and every state, costate and control to 1e-10 of the largest; on ncar with 12 cars
    (beta = 1e-9 too: stiff, where GMRES must still converge in a few iterations) on 1 and 2 ranks, and
    on the nonlinear planar chain (problems/chain2d.ocp, whose Gonzalez terms vanish at the first iterate,
    lambda = 0, and then appear: the factored pattern must grow, 'pattern 2' or more in -ksp_view). What is
    dropped changes iterations, never the answer: with -pc_hsdrop_tol 1e-3 the chain's factored matrix
    keeps 5 % of the stored entries instead of 45 %, and the same solution is reached with more Krylov
    iterations. GMRES is right-preconditioned, so that its test is on the true residual (left-
    preconditioned, a P made nearly singular by what it drops "converged" to a wrong step: tried). In a
    stiff problem small entries matter: ncar with beta = 1e-9 and -pc_hsdrop_tol 1e-7 (which drops the
    1000 entries between 1e-14 and 1e-7 of their rows' largest) fails, and the run says so (exit 2, no
    converged claim). With beta = 1e-9 and 12 cars the LQ system is so ill-conditioned that any two
    exact solvers differ by cond(J) eps: measured, all with residuals 1.6e-14 .. 9.6e-14, hsdrop against
    MUMPS 4.9e-8, hsdrop against hsband 2.8e-8, MUMPS against hsband 2.1e-8 (of the largest value, 5):
    there 1e-7, and a residual within 10x MUMPS'; on 1 rank the first Newton step's true residual stays
    above 1e-12 though GMRES's own estimate is below 1e-12 relative (also with -ksp_rtol 1e-14), so Newton
    takes a second step (2 against MUMPS' 1; measured): there one more Newton iteration is allowed. The default
    (-hs_linear_solver auto) is hsdrop for the transcription when n > 32 and MUMPS for shooting there;
    -hs_linear_solver drop with shooting is an error naming the option. The branch-point test reads
    hsdrop's determinant (its LU's): along an arclength continuation with 33 cars it equals MUMPS' to 1e-9."""
    chain = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "problems", "chain2d.ocp")
    cases = [(["-problem", "ncar", "-p_cars", "12", "-N", "200"], (1, 2)),
             (["-problem", "ncar", "-p_cars", "12", "-N", "200", "-p_beta", "1e-9"], (1, 2)),
             (["-problem", chain, "-N", "100"], (1, 2)),
             (["-problem", chain, "-N", "100", "-pc_hsdrop_tol", "1e-3"], (2,))]
    if os.environ.get("HS_SANITIZED"):  # AddressSanitizer's time (63 s of CI's sanitized run): each path once, ncar on
        # 1 and 2 ranks, the chain's growing pattern on 2; beta = 1e-9 (the same code on a stiffer LQ system, a numerical
        # property) only in its failure with -pc_hsdrop_tol 1e-7 below
        cases = [cases[0], (cases[2][0], (2,)), cases[3]]
    its_chain = {}
    for args, ranks in cases:
        args = args + ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
        for r in ranks:
            m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=r)
            d, out, _ = run(args + ["-hs_linear_solver", "drop", "-ksp_view"], ranks=r)
            if not (m and d):
                check(False, "%s on %d ranks: no output" % (args, r))
                continue
            check(m["linear_solver"] == "preonly+lu(mumps)" and d["linear_solver"] == "gmres+hsdrop(mumps)",
                  "linear solvers: %s, %s" % (m["linear_solver"], d["linear_solver"]))
            kept = re.findall(r"keeps (\d+) of (\d+) entries \(([0-9.e+-]+)%; pattern (\d+)\)", out)
            keys = [k for k in m["_rows"][0] if k.startswith(("q", "p", "lambda", "u", "x"))]
            vals = [(float(x[k]), float(y[k])) for x, y in zip(m["_rows"], d["_rows"]) for k in keys if x[k] != ""]
            scale = max([1.0] + [abs(a) for a, _ in vals])
            diff = max([0.0] + [abs(a - c) for a, c in vals]) / scale
            print("%-62s %d ranks: Newton %d / %d, Krylov its %d, J^d %.12g / %.12g, max diff %.1e, kept %s"
                  % (" ".join(args[:8]), r, m["newton_iterations"], d["newton_iterations"], d["ksp_iterations"], m["J"],
                     d["J"], diff, kept[-1] if kept else None))
            hd = d.get("hsdrop")
            check(kept and int(kept[-1][0]) < int(kept[-1][1]) and hd and
                  [hd["kept"], hd["stored"], hd["patterns"]] == [int(kept[-1][0]), int(kept[-1][1]), int(kept[-1][3])],
                  "%s: -ksp_view and summary.json say what hsdrop keeps: %s, %s" % (args, kept[-1:], hd))
            tol, its = (1e-7, 1) if "1e-9" in args else (1e-10, 0)
            check(m["converged"] and d["converged"] and abs(m["newton_iterations"] - d["newton_iterations"]) <= its
                  and abs(m["J"] - d["J"]) <= 1e-12 * max(1, abs(m["J"])) and diff <= tol and len(vals) > 100
                  and d["residual_norm"] <= 10 * m["residual_norm"] + 1e-13,
                  "%s on %d ranks: hsdrop against MUMPS" % (args, r))
            if "ncar" in args and "-pc_hsdrop_tol" not in args:
                check(kept and float(kept[-1][2]) < 10 and d["ksp_iterations"] <= 2 * d["newton_iterations"],
                      "ncar: hsdrop keeps few entries and GMRES needs 1-2 iterations: %s" % (kept,))
            if args[1] == chain and "-pc_hsdrop_tol" in args:
                check(kept and float(kept[-1][2]) < 10 and d["ksp_iterations"] > its_chain[r],
                      "chain2d, tol 1e-3: fewer entries kept, more Krylov iterations (%d, default %s)"
                      % (d["ksp_iterations"], its_chain.get(r)))
            elif args[1] == chain:
                its_chain[r] = d["ksp_iterations"]
                check(kept and int(kept[-1][3]) >= 2, "chain2d: hsdrop's pattern grows once the Gonzalez terms appear")
    # the branch-point test's determinant from hsdrop's LU (of J less its dropped, here exactly zero, entries)
    dets = {}
    for ls in ("drop", "mumps"):
        _, out, _ = run(["-problem", "ncar", "-p_cars", "33", "-N", "40", "-p_beta", "0.01", "-hs_continue", "beta",
                         "-hs_continue_from", "1", "-hs_continue_steps", "3", "-hs_continue_type", "arclength",
                         "-hs_check_extremal", "no", "-hs_linear_solver", ls, "-info"], ranks=2)
        dets[ls] = [(float(m) * 2.0 ** int(e), src) for m, e, src in re.findall(r"det J = ([0-9.e+-]+) 2\^(-?\d+) \((\w+)\)", out)]
    print("arclength, 33 cars: determinants by hsdrop %s, by MUMPS %s" % (dets["drop"][:2], dets["mumps"][:2]))
    check(dets["drop"] and len(dets["drop"]) == len(dets["mumps"])
          and all(abs(a - b) <= 1e-9 * abs(b) for (a, _), (b, _) in zip(dets["drop"], dets["mumps"])),
          "hsdrop's determinants equal MUMPS' LU of everything")
    # dropping entries that matter in a stiff problem: an honest failure
    s, out, rc = run(["-problem", "ncar", "-p_cars", "12", "-N", "200", "-p_beta", "1e-9", "-hs_linear_solver", "drop", "-pc_hsdrop_tol", "1e-7",
                      "-hs_check_extremal", "no", "-hs_strategy", "newton"], expect_rc=2)
    check(s and not s["converged"] and rc == 2, "beta 1e-9, tol 1e-7: not converged (rc %s)" % rc)
    # the defaults, and drop where it does not apply
    for args, want in ((["-problem", "ncar", "-p_cars", "33", "-N", "40"], "gmres+hsdrop(mumps)"),
                       (["-problem", "ncar", "-p_cars", "33", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"],
                        "preonly+lu(mumps)"),
                       (["-problem", "ncar", "-p_cars", "33", "-N", "40", "-hs_linear_solver", "mumps"], "preonly+lu(mumps)"),
                       (["-problem", "ncar", "-p_cars", "3", "-N", "40", "-hs_linear_solver", "drop"], "gmres+hsdrop(mumps)")):
        s, _, _ = run(args + ["-hs_check_extremal", "no"])
        check(s and s["linear_solver"] == want, "%s: %s, not %s" % (args, s and s["linear_solver"], want))
    _, out, _ = run(["-problem", "pendulum", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4",
                     "-hs_linear_solver", "drop"], expect_rc=1)
    check("-hs_linear_solver drop" in out and "transcription" in out, "drop with shooting: %r" % out.strip()[-200:])


def t_band():
    """Issue 11, step 1: -pc_type hsband (bvp/petscext/pcband.c), the banded LU with partial pivoting that
    eliminates each rank's interior and solves the interface system on rank 0, against MUMPS
    (-hs_linear_solver mumps) on the same runs: the same Newton iterations, J^d to 1e-12 and every state, costate and
    control to 1e-10 (relative to the largest), with a residual no larger than MUMPS' (x2); on the
    pendulum, kepler, the unstable saddle problem, ncar with beta = 1e-9 (state-costate growth ~
    e^{10 t}), shooting (10 segments) and a free final time at N = 40 (its dense row and column in
    the band); on 1, 2 and 4 ranks. ncar with beta = 1e-9 is solved by one Newton step (an LQ problem):
    there the two solutions differ by cond(J) eps, measured 9.9e-11 (1 rank) and 1.1e-10 (2 ranks)
    relative, while hsband's residual is the smaller (5.2e-14 and 5.4e-14 against MUMPS' 1.6e-12 and
    1.5e-12): 1e-9 there. (In the natural row order hsband needed a step of iterative refinement to get
    there: 1.1e-12 on 2 ranks without. On 4 and 8 ranks the difference is MUMPS' parallel LU's as much as hsband's,
    measured 1.01e-9 and 6.8e-10 on one machine (below 1e-9 on another), hsband's residual the smaller again: 1e-8
    there. In the staircase order it does not: 4.1e-14 and 4.2e-14 without.
    So the default, -pc_hsband_refine -1, refines only where the band is more than half the matrix, the
    free T at N = 40: without, Newton stops at the noise floor one iteration later with 2.4x MUMPS'
    residual; -ksp_view says which; one step asked for in a narrow band is tested on 2 ranks.) A free T at N = 2000 (a band 16005 wide) and 2
    shooting segments on 2 ranks (too few rows per rank) are outside hsband's limits: it factors by
    MUMPS instead (same iterations and J as MUMPS, -ksp_view says why), or with -pc_hsband_fallback
    false stops with an error naming the limit. (A solve that stops at the noise floor, the free T here, may stop one iteration
    earlier or later: measured 10 against 11, both at |F| ~ 1e-11.) The default (-hs_linear_solver
    auto) is hsband for n <= 32 and a fixed T, hsdrop for 33 cars (t_drop), hsband for a free T too (its bordered step, issue 44), MUMPS for a
    -pc_factor_mat_solver_type given; the determinant hsband computes for the branch-point test gives the same branch point as
    MUMPS' (pitchfork.ocp, 1 to 3 ranks). The rows are factored in staircase order (by their first
    column) and the last rank eliminates bottom-up; kepler on 2 and 3 ranks is also solved with
    -pc_hsband_reverse_last false (every rank but the first with a left spike). Issue 44: the interface system is
    solved by cyclic reduction over the ranks (bvp/petscext/bandreduce.c, log2 P levels of merges), so kepler, the
    saddle and ncar with beta = 1e-9 also run on 4, 5 and 8 ranks (oversubscribed: 2 and 3 levels, an odd count with
    a rank that has no partner at a level); and with partial pivoting among all rows
    (-pc_hsband_spike_threshold 1) instead of the default threshold pivoting that prefers rows without spike."""
    ddir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    cases = [(["-problem", "pendulum", "-N", "400"], (1, 2, 4), 1e-10), (["-problem", "kepler", "-N", "200"], (1, 2, 3), 1e-10),
             (["-problem", "kepler", "-N", "400"], (5, 8), 1e-10), (["-problem", "saddle"], (4, 8), 1e-10),
             (["-problem", "ncar", "-p_beta", "1e-9"], (4, 8), 1e-8),
             (["-problem", "kepler", "-N", "400", "-pc_hsband_spike_threshold", "1"], (4,), 1e-10),
             (["-problem", "kepler", "-N", "200", "-pc_hsband_reverse_last", "false"], (2, 3), 1e-10),
             (["-problem", "saddle"], (1, 2), 1e-10), (["-problem", "ncar", "-p_beta", "1e-9"], (1, 2), 1e-9),
             (["-problem", "ncar", "-p_beta", "1e-9", "-pc_hsband_refine", "1"], (2,), 1e-9),
             (["-problem", "pendulum", "-N", "400", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "10"], (1, 2), 1e-10),
             (["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "40"], (1,), 1e-10)]
    for args, ranks, tol in cases:
        args = args + ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
        for r in ranks:
            m, _, _ = run(args + ["-hs_linear_solver", "mumps"], ranks=r)
            b, out, _ = run(args + ["-pc_type", "hsband"], ranks=r)
            check(m and b and m["linear_solver"] == "preonly+lu(mumps)" and b["linear_solver"] == "preonly+hsband",
                  "linear solvers: %s, %s" % (m and m["linear_solver"], b and b["linear_solver"]))
            if not (m and b):
                check(False, "%s on %d ranks: no output" % (args, r))
                continue
            keys = [k for k in m["_rows"][0] if k.startswith(("q", "p", "lambda", "u", "x"))]
            vals = [(float(x[k]), float(y[k])) for x, y in zip(m["_rows"], b["_rows"]) for k in keys if x[k] != ""]
            scale = max([1.0] + [abs(a) for a, _ in vals])
            diff = max([0.0] + [abs(a - c) for a, c in vals]) / scale
            print("%-60s %d ranks: Newton %d / %d, J^d %.12g / %.12g, max diff %.1e (%d values)"
                  % (" ".join(args[:6]), r, m["newton_iterations"], b["newton_iterations"], m["J"], b["J"], diff, len(vals)))
            floor = "NOISE_FLOOR" in m["solver_status"] + b["solver_status"] # its last iteration is round-off's
            its_ok = abs(m["newton_iterations"] - b["newton_iterations"]) <= (1 if floor else 0)
            check(m["converged"] and b["converged"] and its_ok
                  and abs(m["J"] - b["J"]) <= 1e-12 * max(1, abs(m["J"])) and diff <= tol and len(vals) > 100
                  and b["residual_norm"] <= 2 * m["residual_norm"] + 1e-13,
                  "%s on %d ranks: hsband against MUMPS" % (args, r))
    # -hs_in_place (the default): U over the Jacobian's own values. The same output files to the byte as without,
    # with the peak memory lower by U's size (kepler, N = 20000: 34 MB of 170); off by itself where something
    # reads the Jacobian after its factorization (bt's slope; basic, whose failures SNES tests with J^T F; its views;
    # a KSP monitor, for which KSPPREONLY multiplies; -info; a Krylov solve) or the
    # Jacobian is not refilled whole (shooting); a Newton solve that ends on a failed line search
    # (manipulator3, -hs_strategy newton: SNES' local-minimum test would read the Jacobian) ends the same way.
    inplace_re = r"U: (\d+) entries on rank 0, (\d+) of them in place"
    same_files = lambda d1, d2: all(filecmp.cmp(os.path.join(d1, f), os.path.join(d2, f), shallow=False)
                                    for f in ("trajectory.csv", "intervals.csv")) # byte for byte
    for args, ranks in ((["-problem", "kepler", "-N", "20000"], (1, 2, 3)), (["-problem", "saddle"], (1, 2)),
                        (["-problem", "manipulator3", "-hs_strategy", "newton"], (1,))):
        for r in ranks:
            args2 = args + ["-hs_check_extremal", "no"]
            d_off, d_on = tempfile.mkdtemp(), tempfile.mkdtemp()
            rc = 2 if "manipulator3" in args else 0 # not converged
            off, _, _ = run(args2 + ["-hs_in_place", "false", "-ksp_view"], ranks=r, outdir=d_off, expect_rc=rc)
            on, out, _ = run(args2 + ["-ksp_view"], ranks=r, outdir=d_on, expect_rc=rc)
            m = re.findall(inplace_re, out)
            same = off and on and same_files(d_off, d_on)
            used = m and int(m[-1][1]) > 0.9 * int(m[-1][0])
            mem = on and off and (on["peak_memory_mb"]["max"], off["peak_memory_mb"]["max"])
            print("%-50s %d rank(s): in place %s of %s U entries; output files the same: %s; peak memory %s MB (%s without); %s"
                  % (" ".join(args), r, m and m[-1][1], m and m[-1][0], same, mem and mem[0], mem and mem[1],
                     on and on["solver_status"]))
            check(same and used and on["solver_status"] == off["solver_status"], "%s on %d ranks: in place" % (args, r))
            if "20000" in args: # U is 8 bytes an entry
                check(mem[0] <= mem[1] - 0.5 * 8e-6 * int(m[-1][0]), "%s on %d ranks: peak memory %s" % (args, r, mem))
            shutil.rmtree(d_off, ignore_errors=True)
            shutil.rmtree(d_on, ignore_errors=True)
    for extra in (["-snes_linesearch_type", "bt"], ["-snes_linesearch_type", "basic"], ["-ksp_view_mat", "ascii:/dev/null"],
                  ["-ksp_view_pmat", "ascii:/dev/null"], ["-ksp_monitor"], ["-info", ":pc"],
                  ["-ksp_type", "gmres", "-pc_type", "hsband"], ["-hs_bvp_type", "shooting", "-hs_shoot_segments", "10"]):
        s, out, _ = run(["-problem", "kepler", "-N", "200", "-hs_check_extremal", "no", "-ksp_view"] + extra)
        m = re.findall(inplace_re, out)
        print("kepler N = 200 %s: in place %s of %s U entries" % (" ".join(extra), m and m[-1][1], m and m[-1][0]))
        check(s and s["converged"] and m and int(m[-1][1]) == 0, "%s: not in place" % extra)
    # -pc_hsband_avx2: the elimination's AVX2 version (the default where built and the processor has AVX2) and
    # the build's default one give the same output files to the byte (elementwise loops, no FMA)
    for r in (1, 2):
        dirs, versions = [], []
        for flag in ("true", "false"):
            d = tempfile.mkdtemp()
            _, out, _ = run(["-problem", "kepler", "-N", "20000", "-hs_check_extremal", "no", "-ksp_view", "-pc_hsband_avx2",
                             flag], ranks=r, outdir=d)
            dirs.append(d)
            versions.append(re.findall(r"the elimination's (\w+) version", out)[-1:])
        same = same_files(dirs[0], dirs[1])
        print("kepler N = 20000, %d rank(s): elimination versions %s, output files the same: %s" % (r, versions, same))
        check(same and versions[1] == ["default"] and versions[0] in (["AVX2"], ["default"]),
              "-pc_hsband_avx2 on %d ranks: %s, same %s" % (r, versions, same))
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    # the refinement steps by the band's width (-pc_hsband_refine -1), or as asked
    for args, steps in ((["-problem", "kepler", "-N", "200"], "0 refinement step(s) (by the band's width)"),
                        (["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "40"], "1 refinement step(s) (by the band's width)"),
                        (["-problem", "kepler", "-N", "200", "-pc_hsband_refine", "2"], "2 refinement step(s)\n")):
        _, out, _ = run(args + ["-pc_type", "hsband", "-hs_check_extremal", "no", "-ksp_view"])
        check(steps in out, "%s: %r not in -ksp_view" % (args, steps))
    # peak memory per rank in summary.json (its scaling is measured by bench/band_bench.py, not here)
    for r in (1, 2):
        s, out, _ = run(["-problem", "pendulum", "-N", "400", "-hs_check_extremal", "no"], ranks=r)
        pm = s and s.get("peak_memory_mb")
        check(pm and 5 < pm["min"] <= pm["mean"] <= pm["max"] < 1e5 and "peak memory" in out, "peak memory: %s" % pm)
    # the default (-hs_linear_solver auto): the band for n <= 32 and a fixed T
    for args, want in ((["-problem", "pendulum", "-N", "40"], "preonly+hsband"),
                       (["-problem", "pendulum", "-N", "40", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], "preonly+hsband"),
                       (["-problem", "ncar", "-p_cars", "32", "-N", "40"], "preonly+hsband"),
                       (["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "40"], "preonly+hsband"),
                       (["-problem", "pendulum", "-N", "40", "-pc_factor_mat_solver_type", "mumps"], "preonly+lu(mumps)"),
                       (["-problem", "pendulum", "-N", "40", "-hs_linear_solver", "mumps"], "preonly+lu(mumps)")):
        s, _, _ = run(args + ["-hs_check_extremal", "no"])
        check(s and s["linear_solver"] == want, "%s: %s, not %s" % (args, s and s["linear_solver"], want))
    # the branch-point test reads hsband's determinant as it reads MUMPS'
    pf = os.path.join(ddir, "pitchfork.ocp")
    for r in (1, 2, 3):
        got = []
        for ls in ("mumps", "band"):
            s, _, _ = run(["-problem", pf, "-p_c", "600", "-hs_continue", "c", "-hs_continue_from", "400", "-hs_continue_steps",
                           "100", "-hs_continue_type", "arclength", "-hs_check_extremal", "no", "-hs_linear_solver", ls], ranks=r)
            got.append(s and s["continuation"]["branch_points_at"])
        print("pitchfork on %d ranks, branch points by MUMPS and by hsband: %s" % (r, got))
        check(got[0] and got[1] and len(got[0]) == len(got[1]) == 1 and abs(got[0][0] - got[1][0]) < 1e-8 * got[0][0],
              "branch points on %d ranks: %s" % (r, got))
    # outside its limits hsband factors by MUMPS (-pc_hsband_fallback, default), or stops with an error
    for args, word in ((["-problem", os.path.join(ddir, "pendulum_free_T.ocp"), "-N", "2000", "-pc_hsband_border", "false"],
                        "wide"), # (with its border taken out, the default, the band is used: tests/hs_border.py)
                       (["-problem", "pendulum", "-N", "400", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "2"], "too few")):
        for r in ((1, 2) if "shooting" in args else (1,)):
            if "shooting" in args and r == 1:
                continue
            m, _, _ = run(args + ["-hs_linear_solver", "mumps", "-hs_check_extremal", "no"], ranks=r)
            b, out, _ = run(args + ["-pc_type", "hsband", "-hs_check_extremal", "no", "-ksp_view"], ranks=r)
            check(m and b and b["converged"] and b["newton_iterations"] == m["newton_iterations"]
                  and abs(b["J"] - m["J"]) <= 1e-12 * abs(m["J"]) and "not used" in out and word in out,
                  "%s: the fallback: %s" % (args, out[-300:]))
            _, out, _ = run(args + ["-pc_type", "hsband", "-pc_hsband_fallback", "false"], ranks=r, expect_rc=1)
            check("hamshoot: error: -pc_type hsband:" in out and word in out, "%s without fallback: %s" % (args, out[-300:]))


def t_linesearch():
    """Issue 11: the line search hsbt (bvp/petscext/linesearch.c), the Newton formulations' default: PETSc's
    backtracking (bt) without its product by the Jacobian where the Newton direction comes from a direct
    factorization of this iterate's Jacobian (J Y = F to round-off, so the slope is -||F||^2).
    - Against bt on runs that backtrack (single shooting of the pendulum and kepler, kepler with 4
      segments on 2 ranks; hsbt's monitor lists the shortened steps): the same status, Newton iterations
      and J^d to 1e-12. The slopes differ by round-off only, so the steps are the same.
    - The product is gone: -log_view lists no MatMult for the pendulum (hsband, no refinement) with hsbt,
      and one per Newton iteration with bt.
    - The product is kept where J Y = F is not exact: a Krylov solve (-ksp_type gmres), a lagged Jacobian
      (-snes_lag_jacobian 2), hsdrop, MUMPS with null-pivot detection or static pivoting; the monitor says
      which slope it took. A step cut to -snes_linesearch_maxstep (single shooting of the pendulum, cut to
      10) keeps the exact slope, scaled: the same steps as bt.
    - -snes_linesearch_order 1 is refused with a message naming it.
    - The transcription writes the Jacobian's values in place and does not assemble it (bvp/impls/
      transcription.c); the linear solver must still see a new matrix at every Newton iteration: on 1 and 2
      ranks, hsband's elimination (HsBandElim) and MUMPS' numeric factorization (MatLUFactorNum) run once
      per Newton iteration, and the iterations are the same as on 1 rank with hsband (a stale factorization
      would cost Newton its quadratic convergence)."""
    cases = [(["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], 1),
             (["-problem", "kepler", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1"], 1),
             (["-problem", "kepler", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "4"], 2),
             (["-problem", "pendulum", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1", "-snes_linesearch_maxstep",
               "10"], 1)]
    for args, ranks in cases:
        args = args + ["-hs_check_extremal", "no", "-hs_strategy", "newton"]
        h, out, _ = run(args + ["-snes_linesearch_monitor"], ranks=ranks)
        b, _, _ = run(args + ["-snes_linesearch_type", "bt"], ranks=ranks)
        back = len(re.findall(r"Line search: lambda [0-9.e+-]+ gnorm", out))
        exact = len(re.findall(r"\(slope -fnorm\^2[;)]", out))
        ok = h and b and h["solver_status"] == b["solver_status"] and h["newton_iterations"] == b["newton_iterations"] \
            and abs(h["J"] - b["J"]) <= 1e-12 * abs(b["J"])
        print("%-60s %d rank(s): hsbt %s %s its J %.15g (%d backtracking steps, %d exact slopes); bt %s %s its J %.15g"
              % (" ".join(args[:6]), ranks, h and h["solver_status"], h and h["newton_iterations"], h and h["J"], back,
                 exact, b and b["solver_status"], b and b["newton_iterations"], b and b["J"]))
        scaled = "-snes_linesearch_maxstep" not in args or "step scaled to the maximum step" in out
        check(ok and h["converged"] and back >= 1 and exact == h["newton_iterations"] and scaled,
              "%s: hsbt against bt" % " ".join(args))
    pend = ["-problem", "pendulum", "-N", "400", "-hs_check_extremal", "no"]
    for ls, want in (("hsbt", 0), ("bt", None)):
        s, out, _ = run(pend + ["-snes_linesearch_type", ls, "-log_view"])
        m = re.search(r"^MatMult +(\d+)", out, re.M)
        n = int(m.group(1)) if m else 0
        print("pendulum N = 400, %s: %d MatMult in -log_view, %s Newton iterations" % (ls, n, s and s["newton_iterations"]))
        check(s and s["converged"] and n == (s["newton_iterations"] if want is None else want),
              "%s: %d products with the Jacobian" % (ls, n))
    for extra in (["-ksp_type", "gmres", "-pc_type", "hsband"], ["-snes_lag_jacobian", "2"], ["-hs_linear_solver", "drop"],
                  ["-hs_linear_solver", "mumps", "-mat_mumps_icntl_24", "1"],
                  ["-hs_linear_solver", "mumps", "-mat_mumps_cntl_4", "1e-12"], ["-hs_linear_solver", "mumps"]):
        s, out, _ = run(pend + extra + ["-snes_linesearch_monitor"])
        by_product = len(re.findall(r"\(slope by J Y[;)]", out))
        exact = len(re.findall(r"\(slope -fnorm\^2[;)]", out))
        want_exact = extra[-1] == "mumps"
        print("pendulum N = 400 %s: %d slopes by the product, %d exact" % (" ".join(extra), by_product, exact))
        check(s and s["converged"] and (exact > 0 and by_product == 0 if want_exact else by_product > 0 and exact == 0),
              "%s: the slope: %d by product, %d exact" % (extra, by_product, exact))
    ref = None
    for ranks, extra, event in ((1, [], "HsBandElim"), (2, [], "HsBandElim"), (2, ["-hs_linear_solver", "mumps"], "MatLUFactorNum")):
        s, out, _ = run(pend + extra + ["-log_view"], ranks=ranks)
        m = re.search(r"^%s +(\d+)" % event, out, re.M)
        n = int(m.group(1)) if m else -1
        ref = ref or (s and s["newton_iterations"])
        print("pendulum N = 400 %s, %d rank(s): %d %s for %s Newton iterations" % (" ".join(extra), ranks, n, event,
                                                                                 s and s["newton_iterations"]))
        check(s and s["converged"] and s["newton_iterations"] == ref and n == ref,
              "%s on %d ranks: %d factorizations for %s iterations (1 rank: %s)" % (extra, ranks, n, s and s["newton_iterations"], ref))
    _, out, _ = run(pend + ["-snes_linesearch_order", "1"], expect_rc=1)
    check("-snes_linesearch_order 1" in out and "hsbt" in out, "-snes_linesearch_order 1: %s" % out[-300:])
