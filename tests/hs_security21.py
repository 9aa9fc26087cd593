#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 21 (issue 38; docs/reliability.md, "Round 21"). Each
assertion marked (before: ...) failed on the code before its fix:

  orphan keys   a key that does something only with another, given without it, is an error naming what it needs:
                -hs_extrapolate_grids, _romberg, _coarse_first without -hs_extrapolate (also with it false),
                -hs_continue_from, _steps, _type, _max_halvings, _monitor without -hs_continue, -hs_bounds_eps0,
                _eps_factor, _eps_min on a problem without bounds, -hs_strategy_time and -hs_direct_solver with
                -hs_strategy newton and nothing else that uses them (before: each ignored, exit 0, the options blocks
                read every key so HsOptionsCheckUsed counted them as used); with their parent each is taken;
                -hs_checkpoint_every and -hs_checkpoint with IPOPT (-hs_bvp_type ipopt, -hs_scheme direct
                -hs_direct_solver ipopt), which has no Newton iteration to write one at (before: no checkpoint, no word)
  frame lines   problem files' name lists: an empty 'frame main:' says nothing is named and what a frame needs
                (before: "1 names, not 9"), an empty entry (',,', a trailing comma) is named as such (before: "10
                names, not 9" or "'' is not a coordinate"), names separated by spaces say commas are needed, the
                other frame of a clash is named by its name (before: "frame 1"); 'conserved:', 'coordinates:' and
                'control_names:' give the same messages for an empty list or entry (before: "'' is not an
                invariant of the file", "'' is not a name")
  ipopt missing IPOPT that cannot be loaded (HAMSHOOT_IPOPT_LIBRARY at a missing file; the sanitized build's
                refusal) with -hs_scheme direct -hs_direct_solver ipopt (1 and 2 ranks) and -hs_compare, and
                -hs_compare with -hs_direct_hs_ipopt_tol nan: exit 1 naming the cause, and nothing left at
                PetscFinalize (-malloc_dump; before: the solve's gather to rank 0 and -hs_compare's direct solver
                were left, 5 kB to 24 kB under LeakSanitizer)
  R zero        a control weight R_jj = 0 without bounds on a problem with B(q) (the satellite, pendulum_bq.ocp) is
                refused for what it is, a bang-bang control without bounds (before: "bounds its controls and has a
                configuration-dependent B(q)", of a problem that bounds nothing); bounds with B(q) keep that message
  pc shell      -pc_type hsband, hsdrop, hsslab or hsgather with the matrix-free shooting (-hs_shoot_mf; kepler, 1
                and 2 ranks): exit 1 naming the PC, the shell matrix and the fix (before: hsband and hsdrop read the
                shell's data as AIJ rows and died of SEGV, PETSc's error 59 through MPI_Abort; hsslab, hsgather ended
                in PETSc's "No method createsubmatrices for Mat of type shell")
  rowwise lag   -snes_lag_jacobian 3 with -hs_snes_roundoff 1e4 (crane_natural.ocp): the round-off check row by row
                weighs the rows with the Jacobian at the iterate it judges (before: SNES's lag returned the Jacobian
                of an iterate two steps back; -info said "Reusing Jacobian" right before each check)

stdlib only; each case in a temporary directory of its own."""
import os
import re
import subprocess
import tempfile

from hs_util import ENV, HAMSHOOT, MPIEXEC, check

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEMS = os.path.join(HERE, "..", "problems")
SATELLITE = os.path.join(PROBLEMS, "satellite.ocp")


def hs(args, d, ranks=1, env=None, timeout=120):
    """(exit status, stdout + stderr) of hamshoot with args in directory d."""
    cmd = [HAMSHOOT] + args
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
    p = subprocess.run(cmd, env=dict(ENV, **(env or {})), cwd=d, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def case_orphan_keys(d):
    """each key without its parent refused, naming the parent; with it, taken."""
    base = ["-problem", "pendulum", "-N", "16", "-hs_check_extremal", "no", "-quiet"]
    bounded = ["-problem", os.path.join(PROBLEMS, "pendulum_bounded.ocp"), "-N", "16", "-hs_check_extremal", "no",
               "-quiet"]
    ext, con, bnd = "without -hs_extrapolate", "without -hs_continue", "without bounded controls"
    cases = ((["-hs_extrapolate_grids", "4"], ext), (["-hs_extrapolate_romberg"], ext),
             (["-hs_extrapolate_coarse_first", "false"], ext),
             (["-hs_extrapolate", "false", "-hs_extrapolate_grids", "4"], ext),
             (["-hs_continue_from", "9"], con), (["-hs_continue_steps", "4"], con),
             (["-hs_continue_type", "arclength"], con), (["-hs_continue_max_halvings", "3"], con),
             (["-hs_continue_monitor"], con), (["-hs_bounds_eps0", "0.1"], bnd), (["-hs_bounds_eps_factor", "0.5"], bnd),
             (["-hs_bounds_eps_min", "1e-4"], bnd),
             (["-hs_strategy", "newton", "-hs_strategy_time", "10"], "without -hs_strategy auto or -hs_continue"),
             (["-hs_strategy", "newton", "-hs_direct_solver", "ipopt"], "without a direct problem"))
    for extra, want in cases:
        rc, out = hs(base + extra, d)
        key = [a for a in extra if a.startswith("-hs_")][-1]
        check(rc == 1 and ("option %s does nothing %s" % (key, want)) in out,
              "%s without its parent: exit %d\n%s" % (" ".join(extra), rc, out[-300:]))
    # with the parent: taken (a range error still names the key: the value is read before the parent is asked for)
    taken = ((base + ["-hs_extrapolate", "-hs_extrapolate_grids", "4", "-hs_extrapolate_romberg",
                      "-hs_extrapolate_coarse_first", "false"], (0,)),
             (base + ["-hs_continue", "g", "-hs_continue_from", "9", "-hs_continue_steps", "2", "-hs_continue_type",
                      "natural", "-hs_continue_max_halvings", "3", "-hs_continue_monitor", "false"], (0,)),
             (bounded + ["-hs_bounds_eps0", "0.5", "-hs_bounds_eps_factor", "0.5", "-hs_bounds_eps_min", "0.01"], (0, 2)),
             (base + ["-hs_strategy", "newton", "-hs_continue", "g", "-hs_continue_from", "9", "-hs_strategy_time",
                      "100"], (0,)),
             (base + ["-hs_strategy", "newton", "-hs_scheme", "direct", "-hs_direct_solver", "kkt"], (0,)),
             (base + ["-hs_direct_solver", "kkt"], (0,)))
    for args, rcs in taken:
        rc, out = hs(args, d)
        check(rc in rcs and "does nothing" not in out, "%s: exit %d\n%s" % (" ".join(args[6:]), rc, out[-300:]))
    for extra in (["-hs_bvp_type", "ipopt", "-hs_checkpoint_every", "1"], ["-hs_bvp_type", "ipopt", "-hs_checkpoint", "ck"],
                  ["-hs_scheme", "direct", "-hs_direct_solver", "ipopt", "-hs_checkpoint_every", "5s"]):
        rc, out = hs(base + extra, d)
        check(rc == 1 and ("option %s does nothing with -hs_bvp_type ipopt" % extra[-2]) in out,
              "%s: exit %d\n%s" % (" ".join(extra), rc, out[-300:]))
    rc, out = hs(base + ["-hs_checkpoint_every", "1", "-o", "po"], d)  # Newton's: taken, and written
    check(rc == 0 and os.path.exists(os.path.join(d, "po", "checkpoint", "checkpoint.json")),
          "-hs_checkpoint_every 1 -o po: exit %d\n%s" % (rc, out[-300:]))
    rc, out = hs(base + ["-hs_bounds_eps0", "-1"], d)  # the range error first, as before
    check(rc == 1 and "-hs_bounds_eps0 -1" in out and "must lie" in out, "-hs_bounds_eps0 -1: exit %d\n%s"
          % (rc, out[-300:]))


def edited(d, name, src, key, line):
    """src with its line starting with key replaced by line (may hold several), written to d/name."""
    with open(src) as f:
        rows = f.read().split("\n")
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("\n".join(line if r.startswith(key) else r for r in rows))
    return path


def case_frame_lines(d):
    """malformed name lists: the message says what is wrong, at the line and column of it."""
    need = "nine coordinates separated by commas"
    full = "d1x, d1y, d1z, d2x, d2y, d2z, d3x, d3y, d3z"
    cases = (("frame main:", "satellite.ocp:34:12: frame main: nothing named (it needs %s" % need),
             ("frame main:   ", "frame main: nothing named"),
             ("frame main: ,", "34:13: frame main: entry 1 of 2 is empty (a comma too many?"),
             ("frame main: %s," % full, "34:57: frame main: entry 10 of 10 is empty"),
             ("frame main: d1x,,d1y, d1z, d2x, d2y, d2z, d3x, d3y, d3z", "34:17: frame main: entry 2 of 10 is empty"),
             ("frame main: d1x d1y d1z d2x d2y d2z d3x d3y d3z", "is not a coordinate (%s" % need),
             ("frame main: %s, r11x" % full, "frame main: 10 names, not 9 (%s" % need),
             ("frame main: d1x, d1y, d1z, d2x, d2y, d2z, d3x, d3y, p_d3z",
              "'p_d3z' is not a coordinate (a frame names coordinates, not momenta"),
             ("frame main: %s\nframe main2: %s" % (full, full),
              "35:14: frame main2: it shares a coordinate with frame main other than"))
    for i, (line, want) in enumerate(cases):
        path = edited(d, "satellite.ocp" if i == 0 else "f%d.ocp" % i, SATELLITE, "frame main:", line)
        rc, out = hs(["-problem", path, "-N", "4", "-snes_max_it", "0", "-hs_check_extremal", "no"], d)
        check(rc == 1 and want in out and ("names, not 9" in want or "names, not 9" not in out),
              "%r: exit %d\n%s" % (line, rc, out[-400:]))
    for key, line, want in (("conserved:", "conserved:", "conserved: nothing named (it needs names of the file's"),
                            ("conserved:", "conserved: L_x, L_y, L_z,", "conserved: entry 4 of 4 is empty"),
                            ("coordinates:", "coordinates:", "coordinates: nothing named")):
        path = edited(d, "list.ocp", SATELLITE, key, line)
        rc, out = hs(["-problem", path, "-N", "4", "-snes_max_it", "0", "-hs_check_extremal", "no"], d)
        check(rc == 1 and want in out and "''" not in out, "%r: exit %d\n%s" % (line, rc, out[-400:]))
    sinh = os.path.join(HERE, "data", "pendulum_sinh.ocp")
    for line, want in (("control_names:", "control_names: nothing named (it needs one name per control"),
                       ("control_names: v,", "control_names: entry 2 of 2 is empty")):
        path = edited(d, "cn.ocp", sinh, "control_names:", line)
        rc, out = hs(["-problem", path, "-N", "4", "-snes_max_it", "0", "-hs_check_extremal", "no"], d)
        check(rc == 1 and want in out, "%r: exit %d\n%s" % (line, rc, out[-400:]))


def case_ipopt_missing(d):
    """IPOPT not loadable, a direct sub-solver's key refused: exit 1 naming it, nothing left at PetscFinalize."""
    env = {"HAMSHOOT_IPOPT_LIBRARY": os.path.join(d, "missing", "libipopt.so")}
    base = ["-problem", "pendulum", "-N", "10", "-hs_check_extremal", "no", "-malloc_dump"]
    for extra, ranks, want in ((["-hs_scheme", "direct", "-hs_direct_solver", "ipopt"], 1, "IPOPT is not available"),
                               (["-hs_scheme", "direct", "-hs_direct_solver", "ipopt"], 2, "IPOPT is not available"),
                               (["-hs_compare", "-o", "cmp"], 1, "IPOPT is not available"),
                               (["-hs_compare", "-o", "cmp2", "-hs_direct_hs_ipopt_tol", "nan"], 1,
                                "-hs_direct_hs_ipopt_tol nan is not a finite number")):  # its prefix since round 22
        rc, out = hs(base + extra, d, ranks=ranks, env=env)
        check(rc == 1 and want in out and " bytes " not in out and "LeakSanitizer" not in out,
              "%s on %d rank(s): exit %d\n%s" % (" ".join(extra), ranks, rc, out[-600:]))


def case_r_zero(d):
    """R_jj = 0 without bounds: the law's condition is named first; bounds with B(q) keep their own message."""
    bq = os.path.join(HERE, "data", "pendulum_bq.ocp")
    with open(bq) as f:
        text = f.read()
    cases = ((edited(d, "sat_r0.ocp", SATELLITE, "R:", "R: 0, 0, 0,  0, 0, 0,  0, 0, 0"), "control 1 has R_jj = 0"),
             (edited(d, "bq_r0.ocp", bq, "R:", "R: 0"), "control 1 has R_jj = 0"))
    for path, want in cases:
        rc, out = hs(["-problem", path, "-N", "4", "-hs_check_extremal", "no"], d)
        check(rc == 1 and want in out and "needs both bounds" in out and "bounds its controls" not in out,
              "%s: exit %d\n%s" % (os.path.basename(path), rc, out[-300:]))
    path = os.path.join(d, "bq_bounded.ocp")
    with open(path, "w") as f:
        f.write(text + "\nu_min: -5\nu_max: 5\n")
    rc, out = hs(["-problem", path, "-N", "4", "-hs_check_extremal", "no"], d)
    check(rc == 1 and "bounds its controls and has a configuration-dependent B(q)" in out,
          "bq_bounded.ocp: exit %d\n%s" % (rc, out[-300:]))


def case_pc_shell(d):
    """hamshoot's PCs on a matrix-free operator: a clear refusal, not a crash."""
    base = ["-problem", "kepler", "-N", "400", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "8", "-hs_shoot_mf",
            "-hs_check_extremal", "no"]
    for pc, ranks in (("hsband", 1), ("hsdrop", 1), ("hsslab", 1), ("hsgather", 1), ("hsband", 2), ("hsgather", 2)):
        rc, out = hs(base + ["-pc_type", pc], d, ranks=ranks)
        check(rc == 1 and ("-pc_type %s factors an assembled AIJ matrix" % pc) in out and "of type shell" in out
              and "signal" not in out, "-pc_type %s -hs_shoot_mf on %d rank(s): exit %d\n%s" % (pc, ranks, rc, out[-300:]))
    rc, out = hs(base, d)  # the matrix-free shooting with its own preconditioner still solves
    check(rc == 0, "-hs_shoot_mf with its own solver: exit %d\n%s" % (rc, out[-300:]))


def case_rowwise_lag(d):
    """the row-by-row round-off check evaluates the Jacobian at the iterate it judges, lagged or not."""
    rc, out = hs(["-problem", os.path.join(PROBLEMS, "crane_natural.ocp"), "-hs_check_extremal", "no",
                  "-hs_snes_roundoff", "1e4", "-snes_lag_jacobian", "3", "-info"], d)
    lines = [l for l in out.splitlines() if "SNESComputeJacobian" in l or "row-wise round-off" in l]
    checks = [i for i, l in enumerate(lines) if "row-wise round-off" in l]
    stale = [lines[i - 1] for i in checks if i > 0 and "Reusing Jacobian" in lines[i - 1]]
    # exit 2 in the sanitized build (Debug arithmetic: another path to the end); the checks are the point
    check(rc in (0, 2) and checks and not stale, "-snes_lag_jacobian 3: exit %d, %d row-wise checks, %d on a reused "
          "Jacobian\n%s" % (rc, len(checks), len(stale), "\n".join(stale[:3]) or out[-300:]))


def t_security21():
    """round 21's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_orphan_keys, case_frame_lines, case_ipopt_missing, case_r_zero, case_pc_shell,
                     case_rowwise_lag):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
