#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 29 (issue 38; docs/reliability.md, "Round 29"). Each
assertion marked (before: ...) failed on the code before its fix:

  options tokens  the options are read before PetscInitialize as PETSc 3.18 reads them (PetscOptionsInsertString,
                  PetscOptionsInsertFilePetsc, PetscTokenFind): a '#' in PETSC_OPTIONS is no comment, a quoted
                  "-options_file" is one, a NUL byte in an options file is refused, -options_file without a file name
                  is refused, keys under -prefix_push are counted under their prefixes; a FIFO behind each is refused
                  naming it, exit 1 (before: a hang in PetscInitialize, PETSc's trace exit 83, its "Out of memory"
                  exit 55); a '#' comment in a file, a quoted value and prefixes within the limit still run.
                  -skip_petscrc 0 on the command line is refused (before: PETSc read ./petscrc, a FIFO: a hang);
                  26 alias lines are refused (before: PETSc's "Out of memory", exit 55), 25 followed as PETSc does.
  number keys     PETSc's number keys without a value (-snes_atol '', -hs_grid_snes_max_it) and tolerances with a
                  value PETSc cannot read that the chosen type does not read (-ksp_rtol abc under preonly; 1 and 2
                  ranks) are refused before the solve naming the key (before: exit 0, the key ignored; round 28's left
                  items).
  info class      hamshoot's -info lines of the convergence test are in class hs (-info :hs shows them; before: in
                  class snes, so -info :hs showed none).
  second order    SIGTERM during -hs_strategy auto's second-order start: the message names that sub-solve and says
                  nothing of it can be resumed, exit 5 (tests/hs_order4shoot.py order4shoot_second_order_stopped;
                  before: it named the fallback alone).
  hdf5 bytes      two identical runs with -hs_output_format hdf5 (1 and 2 ranks, a second apart) write identical
                  trajectory.h5 files (before: 7 bytes differed, HDF5's object times).
  affine          a constant rate k of a linear combination c^T x makes c^T x + k t conserved: the terminal condition
                  on it is refused as redundant (k = 1e-14 + round-off) or infeasible (k = 0.25), naming c^T x + k t
                  with k as computed independently (before: not refused, NOT converged).

stdlib only; each case in a temporary directory of its own."""
import os
import shutil
import subprocess
import tempfile
import time

from hs_reliability import stop_on
from hs_util import ENV, HAMSHOOT, MPIEXEC, check

QUIET = ["-hs_check_extremal", "no", "-quiet"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def hamshoot(args, d, ranks=1, timeout=120, env=None):
    """(exit status, stdout + stderr) of hamshoot args in directory d; a hang is (None, ...)."""
    cmd = [HAMSHOOT] + args
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
    try:
        p = subprocess.run(cmd, env=dict(ENV, **(env or {})), cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "(hung: killed after %d s)" % timeout
    return p.returncode, p.stdout


def case_options_tokens(d):
    """options files PETSc would read that the check had not seen, and what PETSc would refuse inside
    PetscInitialize: refused with one message naming what is wrong."""
    os.mkfifo(os.path.join(d, "fifo"))
    os.mkfifo(os.path.join(d, "petscrc"))  # PETSc reads ./petscrc unless -skip_petscrc (hamshoot's own setting)
    with open(os.path.join(d, "nul.opts"), "wb") as f:  # PETSc joins "-N" to the line after the NUL's
        f.write(b"-N\0\n\n-options_file fifo\n")
    with open(os.path.join(d, "bare.opts"), "w") as f:
        f.write("-N 12\n-options_file\n")
    with open(os.path.join(d, "prefix.opts"), "w") as f:  # 600 keys for PETSc, 300 without the prefixes
        for p in ("a_", "b_"):
            f.write("-prefix_push %s\n%s-prefix_pop\n" % (p, "".join("-k%d 1\n" % i for i in range(300))))
    for k in (26, 25):  # PETSc holds 25 aliases; -a3 is -N by the 25th file's alias
        with open(os.path.join(d, "alias%d.opts" % k), "w") as f:
            f.write("".join("alias -a%d -N\n" % i for i in range(k)) + "-a3 14\n")
    with open(os.path.join(d, "good.opts"), "w") as f:  # a comment, a tab, CRLF, a quoted value, prefixes
        f.write("# -options_file fifo\n\t-N   \"12\"\r\n-prefix_push a_\n-k 1 # -options_file fifo\n-prefix_pop\n")
    base = ["-problem", "pendulum"] + QUIET
    for args, env, want in (
            ([], {"PETSC_OPTIONS": "-N 12 # -options_file fifo"}, "-options_file fifo: not a regular file (a FIFO)"),
            ([], {"PETSC_OPTIONS": '"-options_file" fifo'}, "-options_file fifo: not a regular file (a FIFO)"),
            (["-options_file", "nul.opts"], None, "-options_file nul.opts: a NUL byte at byte 3"),
            (["-options_file", "bare.opts"], None, "-options_file without a file name"),
            ([], {"PETSC_OPTIONS": "-N 12 -options_file"}, "-options_file without a file name"),
            (["-options_file"], None, "-options_file without a file name"),
            (["-options_file", "prefix.opts"], None, "more than 511 distinct options"),
            (["-options_file", "good.opts", "-options_string_yaml", "N: 12"], None, "YAML options are not taken"),
            (["-skip_petscrc", "0"], None, "-skip_petscrc 0: hamshoot reads no petscrc file"),
            (["-options_file", "alias26.opts"], None, "options file alias26.opts line 26: more than 25 alias lines"),
            # the review of round 29: an open prefix put hamshoot's own trimmed value under a key of its own
            # ("-a_a_snes_atol"), which with 507 other keys overflowed PETSc's 512 ("out of memory reading the problem")
            (["-prefix_push", "a_", "-snes_atol", " 1e-8"] + ["-zz%d" % i for i in range(507)], None,
             "-prefix_push a_ is not popped")):
        rc, out = hamshoot(base + args, d, timeout=30, env=env)
        errors = [x for x in out.splitlines() if x.startswith("hamshoot: error")]
        kind = "%s %s" % (" ".join(args), env or "")
        print("%s: exit %s, %s" % (kind, rc, errors or out[-200:]))
        check(rc == 1 and len(errors) == 1 and want in errors[0],
              "%s: exit %s, %s (want '%s'; before: a hang, PETSc's trace exit 83 or 55)" % (kind, rc, errors, want))
    for args, env, n in ((["-options_file", "good.opts"], None, 12),
                         ([], {"PETSC_OPTIONS": "-N\t-options_file fifo -N 12"}, 12),
                         (["-options_file", "alias25.opts"], None, 14)):
        rc, out = hamshoot(base + args, d, timeout=30, env=env)  # PETSc: "-N\t-options_file" one key, fifo its value
        print("%s %s: exit %s" % (" ".join(args), env or "", rc))
        check(rc == 0 and "N = %d" % n in out, "%s %s: exit %s\n%s" % (" ".join(args), env or "", rc, out[-300:]))


def case_number_keys(d):
    """PETSc's number keys without a value, and tolerances no type may read, refused before the solve."""
    base = ["-problem", "pendulum", "-N", "10"] + QUIET
    for extra, want, ranks in ((["-snes_atol", ""], "option -snes_atol needs a value", 1),
                               (["-hs_study", "3", "-hs_grid_snes_max_it"], "option -hs_grid_snes_max_it needs a value",
                                1),
                               (["-ksp_rtol", "abc"], "option -ksp_rtol abc: not a number", 1),  # under preonly
                               (["-ksp_rtol", "abc"], "option -ksp_rtol abc: not a number", 2)):
        rc, out = hamshoot(base + extra, d, ranks)
        errors = [x for x in out.splitlines() if x.startswith("hamshoot: error")]
        print("%s on %d rank(s): exit %s, %s" % (extra, ranks, rc, errors))
        check(rc == 1 and len(errors) == 1 and want in errors[0],
              "%s on %d rank(s): exit %s, %s (want '%s'; before: exit 0, the key ignored)" % (extra, ranks, rc, errors,
                                                                                          want))
    rc, out = hamshoot(base + ["-snes_rtol", "DEFAULT", "-snes_atol", "1e-300"], d)  # PETSc's words and numbers run
    check(rc == 0, "-snes_rtol DEFAULT -snes_atol 1e-300: exit %s\n%s" % (rc, out[-300:]))


def case_info_class(d):
    """the convergence test's -info lines are hamshoot's: class hs."""
    rc, out = hamshoot(["-problem", "pendulum", "-N", "10", "-hs_check_extremal", "no", "-info", ":hs"], d)
    lines = [x for x in out.splitlines() if x.startswith("[0] <")]
    floor = [x for x in lines if "estimated evaluation error" in x]
    print("exit %d, %d info lines, %s" % (rc, len(lines), floor[:1]))
    check(rc == 0 and floor and all(x.startswith("[0] <hs>") for x in lines),
          "-info :hs: exit %d, the noise floor's line not in class hs (before: <snes>)\n%s" % (rc, "\n".join(lines)))


def case_hdf5_bytes(d):
    """two runs of one command write the same trajectory.h5."""
    for ranks in (1, 2):
        files = []
        for k in range(2):
            o = os.path.join(d, "h%d_%d" % (ranks, k))
            rc, out = hamshoot(["-problem", "pendulum", "-N", "20", "-hs_output_format", "hdf5", "-o", o] + QUIET, d,
                               ranks)
            check(rc == 0, "%d rank(s): exit %d\n%s" % (ranks, rc, out[-300:]))
            files.append(open(os.path.join(o, "trajectory.h5"), "rb").read())
            time.sleep(1.1)  # HDF5's object times have a resolution of a second
        diff = sum(a != b for a, b in zip(*files)) + abs(len(files[0]) - len(files[1]))
        print("%d rank(s): %d bytes, %d differ" % (ranks, len(files[0]), diff))
        check(diff == 0, "%d rank(s): %d bytes of trajectory.h5 differ between two runs (before: 7)" % (ranks, diff))


# round 26's and 28's problem: p_y's rate is minus the y-part of the potential's derivative
OCP = ("problem: ro\ncoordinates: x, y\ncontrols: 1\nmass: 1, 0, 0, 1\npotential: 0.5*x^2 + %s\nB: 1, 0\n"
       "R: 1\nT: 2\nN: 20\nx0: 0, 0, 0, 0.5\nxT: 1, 1, 0, 0.5\n")


def case_affine(d):
    """p_y's rate a constant k: p_y + k t is conserved, p_y(T) = 0.5 - 2 k follows from x0."""
    for pot, k, kind in (("(0.1 + 0.2 - 0.3 + 1e-14)*y", (0.1 + 0.2 - 0.3) + 1e-14, "redundant"),
                         ("0.25*y", 0.25, "infeasible")):  # |0.5 - 2 k - 0.5| = 2e-14 (consistent), 0.5 (not)
        with open(os.path.join(d, "ro.ocp"), "w") as f:
            f.write(OCP % pot)
        rc, out = hamshoot(["-problem", "ro.ocp", "-snes_max_it", "5"] + QUIET, d)
        want = "%s terminal condition: p_y + %.6g t is conserved" % (kind, k)
        print("V_y-part %s: exit %d, %s" % (pot, rc, "refused" if want in out else "not refused"))
        check(rc == 1 and want in out, "%s: exit %d, not refused with '%s' (before: NOT converged)\n%s"
              % (pot, rc, want, out[-400:]))


def case_second_order_stopped(d):
    """SIGTERM in the second-order start's sub-solve (tests/hs_order4shoot.py's case, 1 rank): named, exit 5."""
    trigger = "strategy: second-order start:"
    rc, out, sent = stop_on(["-problem", os.path.join(DATA, "satellite_euler_spin.ocp"), "-N", "400", "-hs_scheme",
                             "conserving4", "-hs_bvp_type", "shooting", "-hs_shoot_segments", "1", "-hs_monitor", "-o",
                             "o"] + QUIET, d, 1, trigger)
    last = [x for x in out.splitlines() if x.startswith("hamshoot: interrupted")]
    print("exit %d, %s" % (rc, last))
    check(sent and rc == 5 and last and "during the second-order start's sub-solve" in last[0]
          and "nothing of that sub-solve can be resumed" in last[0],
          "exit %d, %s (before: 'during the fallback 'second-order start'', naming no sub-solve)" % (rc, last))


def t_security29():
    """round 29's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_options_tokens, case_number_keys, case_info_class, case_second_order_stopped, case_hdf5_bytes, case_affine):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
