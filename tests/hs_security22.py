#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 22 (issue 38; docs/reliability.md, "Round 22"). Each
assertion marked (before: ...) failed on the code before its fix:

  prefixed keys   a sub-solver's key is named as the user gave it, with its prefix, in every message of its value:
                  -hs_direct_hs_dg_tol -1, _hs_snes_polish -5, _hs_snes_roundoff 1e300, _hs_strategy_time -1,
                  _hs_direct_solver foo (before: "-hs_dg_tol -1. must lie in [0, 0.001]", the prefix dropped)
  keep sentinel   -2, PETSC_DEFAULT, is no "keep the value" for the user: -hs_step_atol -2, -hs_step_stol -2,
                  -hs_step_max_it -2 (shooting) and, where IPOPT can be loaded, -hs_ipopt_tol -2, -hs_ipopt_max_it -2
                  are errors naming the key (before: each taken, exit 0, the default used)
  transpose       -ksp_type bicg (and ibcgs), which applies the preconditioner's transpose: with -pc_type hsband or
                  hsslab an error before the solve naming the KSP type, the PC and what works (before: PETSc's "No
                  method applytranspose for PC of type hsband", round 21); with hsdrop and hsgather (2 ranks) the solve
                  converges to the default run's J (their LU solves transposed; the transposes themselves are checked
                  against A^T in the C test pctranspose)
  direct guess    IPOPT that cannot be loaded: the direct guess by Newton is made (-hs_initial_guess direct on
                  crane_natural.ocp, a constrained system, and on the pendulum with -hs_direct_solver kkt; before: "IPOPT
                  is not available", round 21); the one by IPOPT is refused naming -hs_direct_solver kkt
  -o name max     a part of -o longer than a file name may be is named as -o's (before: "checkpoint directory
                  'ddd.../checkpoint': cannot look at ...")
  init text       a lone carriage return in -hs_init's trajectory.csv (after the header, inside a row) is an error
                  naming its line (before: the rest of the line dropped: "t starts at 0.1875" or "expected 4 values,
                  found 1"); a summary.json beside it without "N" is an error (before: taken without a word); CRLF
                  files are read
  snes types      -snes_type fas, composite, shell, nasm and -hs_grid_snes_type composite (-hs_study 3) are refused
                  before the solve naming the key and what works (before: PETSc's messages inside the solve:
                  "row 0 of point 0 does not fit the Jacobian's pattern", "m must be > 0"); newtontr still runs;
                  NaN in a sub-solver's PETSc key (-hs_grid_snes_atol, -hs_direct_ksp_rtol; before: taken); bicg
                  with conserving4's condensed hsband and in -hs_study's grids (-hs_grid_ksp_type) refused before the
                  solve (before: PETSc's "No method applytranspose" inside it)
  nan values      NaN in any key's value is refused, PETSc's included (-snes_atol nan, -ksp_rtol NaN; before: taken),
                  the line search's reals must be finite (-snes_linesearch_damping nan, inf; before: hsbt halved NaN
                  for ever and SIGTERM did not end it), and its damping positive (-snes_linesearch_damping 0)

t_security22_left (ctest security22_left): what round 22 left ("Not covered (round 22)"), each failing on the code
before:

  watchdog        a run whose Newton iteration never returns (a Krylov solve of 2e9 iterations that change nothing) gets
                  SIGTERM on 2 ranks: with -hs_term_grace 2 it ends itself, status 4, the watchdog's message from both
                  ranks, the previous -o output unchanged, no temporary left, and the next run on its -o and
                  -hs_checkpoint goes (before: still running 20 s after SIGTERM; the key unknown); with 0 and a second
                  SIGTERM the signal ends it; -hs_term_grace -1, 86401, 1.5, nan refused
  stale temps     a killed run's checkpoint temporary directories (DIR.tmp.XXXXXX, OUT/checkpoint.tmp.XXXXXX) are
                  removed by the next run on that place, not one holding a file of the user's, not a link (before:
                  left for ever)
  invisible       zero-width, format (Cf) and separator characters in a problem's name refused at line 3 column 14,
                  naming the code point; café and an emoji taken; refused in an option's value; shown as '?' when a
                  summary.json beside an -hs_init trajectory names such a problem (before: taken, printed raw)
  blanks          blanks around a number taken in 12 keys (hamshoot's, PETSc's, the lists), refused inside one and for
                  an integer written as a real (before: -hs_checkpoint_every ' 2 ' refused, '2.0' taken; PETSc's keys
                  refused a trailing blank naming no key)

stdlib only; each case in a temporary directory of its own."""
import json
import os
import signal
import subprocess
import tempfile

from hs_util import ENV, ENV_SIGNALS, HAMSHOOT, MPIEXEC, check

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEMS = os.path.join(HERE, "..", "problems")
CRANE = os.path.join(PROBLEMS, "crane_natural.ocp")
BASE = ["-problem", "pendulum", "-N", "16", "-hs_check_extremal", "no", "-quiet"]


def hs(args, d, ranks=1, env=None, timeout=120):
    """(exit status, stdout + stderr) of hamshoot with args in directory d; a run past timeout is killed: status
    'timeout'."""
    cmd = [HAMSHOOT] + args
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
    try:
        p = subprocess.run(cmd, env=dict(ENV, **(env or {})), cwd=d, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return p.returncode, p.stdout + p.stderr


def case_prefixed_keys(d):
    """a sub-solver's range and choice errors name the key with its prefix."""
    direct = ["-hs_initial_guess", "direct", "-hs_direct_solver", "kkt"]
    for key, value, want in (("-hs_direct_hs_dg_tol", "-1", "must lie in [0, 0.001]"),
                             ("-hs_direct_hs_snes_polish", "-5", "is out of range"),
                             ("-hs_direct_hs_snes_roundoff", "1e300", "must be in [0, "),
                             ("-hs_direct_hs_strategy_time", "-1", "must be >= 0"),
                             ("-hs_direct_hs_direct_solver", "foo", "(choose default or kkt or ipopt)")):
        rc, out = hs(BASE + direct + [key, value], d)
        check(rc == 1 and key in out and want in out, "%s %s: exit %s\n%s" % (key, value, rc, out[-300:]))
    rc, out = hs(BASE + ["-hs_dg_tol", "-1"], d)  # the main solver's: no prefix
    check(rc == 1 and "error: -hs_dg_tol -1" in out, "-hs_dg_tol -1: exit %s\n%s" % (rc, out[-300:]))


def case_keep_sentinel(d):
    """-2 (PETSC_DEFAULT) is a value like any other: out of range, an error."""
    shoot = ["-hs_bvp_type", "shooting"]
    cases = [(shoot, "-hs_step_atol", "must lie in (0, 1)"), (shoot, "-hs_step_stol", "must lie in (0, 1)"),
             (shoot, "-hs_step_max_it", "must be at least 1")]
    if not os.environ.get("HS_SANITIZED"):  # IPOPT is not loaded in a sanitized build
        cases += [(["-hs_bvp_type", "ipopt"], "-hs_ipopt_tol", "must lie in (0, 1)"),
                  (["-hs_bvp_type", "ipopt"], "-hs_ipopt_max_it", "must be >= 0")]
    for ctx, key, want in cases:
        rc, out = hs(BASE + ctx + [key, "-2"], d)
        check(rc == 1 and ("%s -2" % key) in out and want in out, "%s -2: exit %s\n%s" % (key, rc, out[-300:]))


def j_of(d, name):
    with open(os.path.join(d, name, "summary.json")) as f:
        return json.load(f)["J"]


def case_transpose(d):
    """a transposing KSP: refused before the solve with hsband and hsslab, solved with hsdrop and hsgather."""
    for pc in ("hsband", "hsslab"):
        for ksp in ("bicg", "ibcgs"):
            rc, out = hs(BASE + ["-pc_type", pc, "-ksp_type", ksp], d, ranks=2)
            want = "-ksp_type %s applies the preconditioner's transpose, which -pc_type %s cannot" % (ksp, pc)
            check(rc == 1 and want in out and "No method" not in out and "gmres" in out,
                  "-pc_type %s -ksp_type %s: exit %s\n%s" % (pc, ksp, rc, out[-300:]))
    rc, out = hs(BASE + ["-N", "40", "-o", "ref"], d, ranks=2)
    check(rc == 0, "the default run: exit %s\n%s" % (rc, out[-300:]))
    for pc in ("hsdrop", "hsgather"):
        rc, out = hs(BASE + ["-N", "40", "-pc_type", pc, "-ksp_type", "bicg", "-o", pc], d, ranks=2)
        ok = rc == 0 and abs(j_of(d, pc) - j_of(d, "ref")) <= 1e-10 * abs(j_of(d, "ref"))
        check(ok, "-pc_type %s -ksp_type bicg on 2 ranks: exit %s\n%s" % (pc, rc, out[-300:]))


def case_direct_guess(d):
    """without IPOPT the direct guess by Newton is made; the one by IPOPT refused, naming the way without it."""
    env = {"HAMSHOOT_IPOPT_LIBRARY": os.path.join(d, "missing", "libipopt.so")}
    for args in (["-problem", CRANE, "-N", "20", "-hs_initial_guess", "direct"],
                 ["-problem", CRANE, "-N", "20", "-hs_initial_guess", "direct", "-hs_direct_solver", "kkt"],
                 BASE + ["-hs_initial_guess", "direct", "-hs_direct_solver", "kkt"]):
        rc, out = hs(args + ["-hs_check_extremal", "no"], d, env=env)
        check(rc == 0 and "initial guess      direct solution (transcription" in out,
              "%s without IPOPT: exit %s\n%s" % (" ".join(args[1:]), rc, out[-300:]))
    rc, out = hs(BASE + ["-hs_initial_guess", "direct"], d, env=env)
    check(rc == 1 and "IPOPT is not available" in out and "-hs_direct_solver kkt makes the direct guess" in out,
          "-hs_initial_guess direct without IPOPT: exit %s\n%s" % (rc, out[-300:]))


def case_o_name_max(d):
    rc, out = hs(BASE + ["-o", "d" * 256], d)
    check(rc == 1 and "-o: a part of the directory name has 256 characters" in out and "checkpoint" not in out,
          "-o of 256 characters: exit %s\n%s" % (rc, out[-300:]))
    rc, out = hs(BASE + ["-o", "d" * 255], d)
    check(rc == 0, "-o of 255 characters: exit %s\n%s" % (rc, out[-300:]))


def case_init_text(d):
    """-hs_init: lone carriage returns, a summary.json without N."""
    rc, out = hs(BASE + ["-o", "good"], d)
    check(rc == 0, "the run to read: exit %s\n%s" % (rc, out[-300:]))
    with open(os.path.join(d, "good", "trajectory.csv"), newline="") as f:
        rows = f.read().split("\n")
    cases = (("cr_header", rows[0] + "\r" + "\n".join(rows[1:]), 1, "csv:1: a carriage return that ends no CRLF line"),
             ("cr_row", "\n".join(rows[:3]) + "\n" + rows[3].replace(",", "\r,", 1) + "\n" + "\n".join(rows[4:]), 1,
              "csv:4: a carriage return that ends no CRLF line"),
             ("crlf", "\r\n".join(rows), 0, ""))
    for name, text, want_rc, want in cases:
        os.makedirs(os.path.join(d, name))
        for other in ("intervals.csv", "summary.json"):
            with open(os.path.join(d, "good", other)) as f, open(os.path.join(d, name, other), "w") as g:
                g.write(f.read())
        with open(os.path.join(d, name, "trajectory.csv"), "w", newline="") as f:
            f.write(text)
        rc, out = hs(BASE + ["-hs_init", name], d)
        check(rc == want_rc and want in out, "-hs_init %s: exit %s\n%s" % (name, rc, out[-300:]))
    with open(os.path.join(d, "crlf", "summary.json"), "w") as f:
        f.write("{}\n")
    rc, out = hs(BASE + ["-hs_init", "crlf"], d)
    check(rc == 1 and 'the summary.json beside it names no "N"' in out,
          "-hs_init with a summary.json without N: exit %s\n%s" % (rc, out[-300:]))


def case_nan_values(d):
    for args, want in ((["-snes_atol", "nan"], "option -snes_atol nan is not a number"),
                       (["-ksp_rtol", "NaN"], "option -ksp_rtol NaN is not a number"),
                       (["-snes_linesearch_damping", "nan"], "option -snes_linesearch_damping nan is not a number"),
                       (["-snes_linesearch_damping", "inf"], "is not a finite decimal number"),
                       (["-snes_linesearch_type", "l2", "-snes_linesearch_damping", "nan"], "is not a number"),
                       (["-snes_linesearch_damping", "0"], "must be positive and finite")):
        rc, out = hs(BASE + args, d, timeout=60)
        check(rc == 1 and want in out, "%s: exit %s (before: nan taken; the damping's ran for ever)\n%s"
              % (" ".join(args), rc, out[-300:]))


def case_snes_types(d):
    """(after round 22) a SNES type that needs parts hamshoot does not set up is refused before the solve, with its
    prefix, in the main solver and in a driver's sub-solver."""
    want = "needs parts hamshoot does not set up"
    for args, key in ((["-snes_type", "fas"], "-snes_type fas"), (["-snes_type", "composite"], "-snes_type composite"),
                      (["-snes_type", "shell"], "-snes_type shell"), (["-snes_type", "nasm"], "-snes_type nasm"),
                      (["-hs_study", "3", "-hs_grid_snes_type", "composite"], "-hs_grid_snes_type composite")):
        rc, out = hs(BASE + args, d, timeout=60)
        check(rc == 1 and key + " " + want in out, "%s: exit %s (before: PETSc's own message in the solve)\n%s"
              % (" ".join(args), rc, out[-300:]))
    # (after the review of round 22) NaN in a driver's sub-solver's PETSc keys, whose prefix is hamshoot's
    for args, key in ((["-hs_study", "3", "-hs_grid_snes_atol", "nan"], "-hs_grid_snes_atol nan"),
                      (["-hs_initial_guess", "direct", "-hs_direct_solver", "kkt", "-hs_direct_ksp_rtol", "NaN"],
                       "-hs_direct_ksp_rtol NaN")):
        rc, out = hs(BASE + args, d, timeout=60)
        check(rc == 1 and "option %s is not a number" % key in out, "%s: exit %s (before: taken)\n%s"
              % (" ".join(args), rc, out[-300:]))
    # a transposing KSP: conserving4's condensed hsband and a driver's sub-solver refused before the solve
    for args, key in ((["-hs_scheme", "conserving4", "-ksp_type", "bicg"],
                       "-pc_type hsband (condensed by -hs_condense)"),
                      (["-hs_study", "3", "-hs_grid_ksp_type", "bicg"], "-hs_grid_pc_type hsband")):
        rc, out = hs(BASE + args, d, timeout=60)
        check(rc == 1 and "applies the preconditioner's transpose, which %s cannot" % key in out,
              "%s: exit %s (before: PETSc's \"No method applytranspose\" in the solve)\n%s"
              % (" ".join(args), rc, out[-300:]))
    rc, out = hs(BASE + ["-snes_type", "newtontr"], d, timeout=60)  # a Newton type hamshoot can run
    check(rc in (0, 2) and want not in out, "-snes_type newtontr: exit %s\n%s" % (rc, out[-300:]))


def t_security22():
    """round 22's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_prefixed_keys, case_keep_sentinel, case_transpose, case_direct_guess, case_o_name_max,
                     case_init_text, case_nan_values, case_snes_types):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))


# ---- what round 22 left (docs/reliability.md, "Not covered (round 22)", now covered) ----
HANG = ["-ksp_type", "richardson", "-ksp_richardson_scale", "0", "-ksp_max_it", "2000000000"]  # a Newton iteration
# whose linear solve takes 2e9 Krylov iterations that change nothing: it never returns (the ranks stay in it)
WATCHDOG = "the watchdog ended the process, exit status 4"


def run_signalled(args, d, grace_signals, timeout=60):
    """hamshoot on 2 ranks in d with -hs_monitor; 1 s after "Newton  0", then after each of the seconds in
    grace_signals, SIGTERM goes to every rank (an entry (seconds, signal): that signal). (exit status or 'timeout',
    output.) The second's wait: rank 0 prints "Newton  0" before the checkpoint poll of iteration 0, which every rank
    joins; a signal that reached rank 1 before it got there was acted on by that poll (a checkpoint, exit 3), not inside
    the linear solve that never returns, as CI saw once under load."""
    import signal
    import threading
    import time
    from hs_reliability import rank_pids
    p = subprocess.Popen([MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT] + args + ["-hs_monitor"], env=ENV_SIGNALS, cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    def kill_all():  # the ranks first: killed alone, mpiexec would leave them spinning in their linear solve
        for pid in rank_pids(p.pid):
            os.kill(pid, signal.SIGKILL)
        p.kill()
    out, timer = [], threading.Timer(timeout, kill_all)
    timer.start()
    try:
        for line in p.stdout:
            out.append(line)
            if "Newton  0" in line and grace_signals:
                time.sleep(1)
                for wait in grace_signals:
                    wait, sig = wait if isinstance(wait, tuple) else (wait, signal.SIGTERM)
                    time.sleep(wait)
                    if p.poll() is None:
                        for pid in rank_pids(p.pid):
                            os.kill(pid, sig)
                grace_signals = None
        p.wait()
    finally:
        timer.cancel()
        if p.poll() is None:
            kill_all()
    return ("timeout" if p.returncode == -9 else p.returncode), "".join(out)


def case_watchdog(d):
    """a run that hangs inside a Newton iteration ends itself after -hs_term_grace (before: the SIGTERM was never acted
    on; -hs_term_grace unknown)."""
    rc, out = hs(BASE + ["-o", "out"], d)
    with open(os.path.join(d, "out", "summary.json"), "rb") as f:
        before = f.read()
    rc, out = run_signalled(BASE + HANG + ["-hs_term_grace", "2", "-o", "out", "-hs_checkpoint", "ck"], d, [0])
    check(rc == 4 and out.count(WATCHDOG) == 2 and "-hs_term_grace 2 s" in out and "(rank 1)" in out,
          "SIGTERM inside a Newton iteration that does not return, -hs_term_grace 2: exit %s (want 4, the watchdog's "
          "message on both ranks)\n%s" % (rc, out[-800:]))
    with open(os.path.join(d, "out", "summary.json"), "rb") as f:
        check(f.read() == before, "the watchdog's exit changed out/summary.json")
    left = [n for n in os.listdir(os.path.join(d, "out")) if ".tmp." in n]
    check(not left and not os.path.exists(os.path.join(d, "ck")), "the watchdog's exit left %s, ck" % left)
    # its DIR.lock (the process ended without removing it) is taken over by the next run, which removes it at its end
    rc, out = hs(BASE + ["-o", "out", "-hs_checkpoint", "ck"], d, ranks=2)
    check(rc == 0 and not os.path.exists(os.path.join(d, "ck.lock")),
          "the run after the watchdog's exit, on its -o and -hs_checkpoint: exit %s, ck.lock %s\n%s"
          % (rc, os.path.exists(os.path.join(d, "ck.lock")), out[-400:]))
    # -hs_term_grace 0: no watchdog; the second signal ends the run at once (its default action), no watchdog message
    rc, out = run_signalled(BASE + HANG + ["-hs_term_grace", "0"], d, [0, 2])
    check(rc not in (0, 3, 4, "timeout") and WATCHDOG not in out,
          "-hs_term_grace 0, two SIGTERMs 2 s apart: exit %s\n%s" % (rc, out[-600:]))
    # a SIGALRM with no stop signal is not the watchdog's (before: exit 4 whatever the grace, "not acted on")
    rc, out = run_signalled(BASE + HANG + ["-hs_term_grace", "0"], d, [(0, signal.SIGALRM), 2, 0])
    check(rc not in (0, 3, 4, "timeout") and WATCHDOG not in out,
          "SIGALRM, then two SIGTERMs, -hs_term_grace 0: exit %s (want the second SIGTERM's)\n%s" % (rc, out[-600:]))
    # SIGUSR1, a scheduler's early warning, asks for the stop but arms no watchdog: it comes with time left (before:
    # exit 4 after the grace); the SIGTERM after it arms it, and a second one ends the run
    # (a grace of 5 s, the SIGTERMs 7 s after SIGUSR1: with a grace of 1 s, under a loaded ctest -j2, the second
    # SIGTERM had reached rank 1 more than 1 s after the first, and its watchdog had rightly fired; the two SIGTERMs
    # 2 s apart, as above: sent back to back, a rank not scheduled between them had them pending as one signal (a
    # standard signal does not queue), acted on once, and its watchdog fired, exit 4, in a loaded suite)
    rc, out = run_signalled(BASE + HANG + ["-hs_term_grace", "5"], d, [(0, signal.SIGUSR1), 7, 2])
    check(rc not in (0, 3, 4, "timeout") and WATCHDOG not in out,
          "SIGUSR1, 7 s later two SIGTERMs 2 s apart, -hs_term_grace 5: exit %s (want the second SIGTERM's)\n%s"
          % (rc, out[-600:]))
    for value, want in (("-1", " is out of range: it must lie in [0, 86400]"),
                        ("86401", " is out of range: it must lie in [0, 86400]"),
                        ("1.5", ": expected a whole number"), ("nan", ": expected a whole number")):
        rc, out = hs(BASE + ["-hs_term_grace", value], d)
        check(rc == 1 and "-hs_term_grace %s%s" % (value, want) in out,
              "-hs_term_grace %s: exit %s\n%s" % (value, rc, out[-300:]))


def case_watchdog_acted(d):
    """the watchdog is cancelled once the signal is acted on: a checkpoint whose writing takes longer than
    -hs_term_grace (its first fsync delayed 4 s by strace's fault injection, the grace 2 s: the Newton iteration in which
    the signal comes must end within it, under a loaded ctest -j2 too) is written, exit 3 (before:
    the watchdog ended the run inside the very checkpoint SIGTERM asked for, exit 4, no checkpoint). Skipped without
    strace, or where it cannot trace (ptrace refused)."""
    import shutil
    import signal
    import time
    from hs_reliability import rank_pids
    strace = shutil.which("strace")
    if not strace or os.environ.get("HS_SANITIZED"):
        print("skipped: %s" % ("no strace" if not strace else "a sanitized build"))
        return
    p = subprocess.Popen([strace, "-f", "-o", "/dev/null", "-e", "inject=fsync:delay_enter=4000000:when=1",
                          HAMSHOOT, "-problem", "kepler", "-N", "20000", "-hs_monitor", "-hs_term_grace", "2",
                          "-hs_checkpoint", "ck"], env=ENV_SIGNALS, cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out, sent = [], False
    for line in p.stdout:
        out.append(line)
        if "Newton  1" in line and not sent:
            for pid in rank_pids(p.pid):
                os.kill(pid, signal.SIGTERM)
            sent = True
    p.wait(timeout=120)
    out = "".join(out)
    if "ptrace" in out or "PTRACE" in out:
        print("skipped: strace cannot trace here")
        return
    check(p.returncode == 3 and WATCHDOG not in out and "checkpoint in ck" in out and
          os.path.isfile(os.path.join(d, "ck", "checkpoint.json")),
          "SIGTERM, its checkpoint's fsync 3 s, -hs_term_grace 1: exit %s (want 3, the checkpoint written)\n%s"
          % (p.returncode, out[-600:]))


def case_stale_checkpoint_temps(d):
    """a checkpoint's temporary directory that a killed process left (SIGKILL, the watchdog) is removed by the next run
    on that place, if it holds only a checkpoint's files (before: left, the size of an iterate each)."""
    def make(path, files):
        os.makedirs(os.path.join(d, path))
        for name in files:
            with open(os.path.join(d, path, name), "w") as f:
                f.write("x")
    make("ck.tmp.abcdef", ["iterate.bin", ".checkpoint.json.tmp.qwerty"])
    make("ck.tmp.keep01", ["iterate.bin", "mine.txt"])  # something of the user's in it: kept whole
    make("out/checkpoint.tmp.xyzxyz", ["iterate.bin", "checkpoint.json"])
    make("victim", ["iterate.bin"])
    os.symlink("victim", os.path.join(d, "ck.tmp.linkln"))  # a link: never followed
    # DIR absent beside a complete temporary and DIR.old (a run ended between MoveIntoPlace's two renames): the newest
    # complete checkpoint, renamed into place (before: removed)
    import shutil
    rc3, out3 = hs(BASE + ["-hs_checkpoint", "src", "-hs_checkpoint_every", "1"], d)
    with open(os.path.join(d, "src", "checkpoint.json"), "rb") as f:
        newest = f.read()
    shutil.copytree(os.path.join(d, "src"), os.path.join(d, "c2.old"))
    os.rename(os.path.join(d, "src"), os.path.join(d, "c2.tmp.newest"))
    newest += b"\n"  # marked (still JSON): c2 must be this one, not one the run wrote or c2.old
    with open(os.path.join(d, "c2.tmp.newest", "checkpoint.json"), "wb") as f:
        f.write(newest)
    rc4, out4 = hs(BASE + ["-hs_checkpoint", "c2"], d)
    ck = os.path.join(d, "c2", "checkpoint.json")
    check(rc3 == 0 and rc4 == 0 and not os.path.exists(os.path.join(d, "c2.tmp.newest")) and os.path.isfile(ck) and
          open(ck, "rb").read() == newest,
          "a complete temporary with its DIR absent: exit %s, %s, left %s\n%s" % (rc3, rc4, sorted(os.listdir(d)),
                                                                                 (out3 + out4)[-400:]))
    rc, out = hs(BASE + ["-hs_checkpoint", "ck"], d)
    rc2, out2 = hs(BASE + ["-o", "out"], d)
    have = sorted(os.listdir(d)) + sorted(os.listdir(os.path.join(d, "out")))
    check(rc == 0 and rc2 == 0 and "ck.tmp.abcdef" not in have and "checkpoint.tmp.xyzxyz" not in have and
          sorted(os.listdir(os.path.join(d, "ck.tmp.keep01"))) == ["iterate.bin", "mine.txt"] and
          os.listdir(os.path.join(d, "victim")) == ["iterate.bin"] and os.path.islink(os.path.join(d, "ck.tmp.linkln")),
          "stale checkpoint temporaries: exit %s, %s; left %s\n%s" % (rc, rc2, have, (out + out2)[-400:]))


def ocp_named(d, name):
    """problems/pendulum.ocp with the problem's name replaced, as d/n.ocp."""
    with open(os.path.join(PROBLEMS, "pendulum.ocp"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    with open(os.path.join(d, "n.ocp"), "w", encoding="utf-8") as f:
        f.write("\n".join("problem: " + name if line.startswith("problem:") else line for line in lines))
    return os.path.join(d, "n.ocp")


def case_invisible(d):
    """invisible characters in a problem's name are refused at their line and column, shown as '?' where a name from a
    file is quoted, refused in options (before: taken; two names that look the same differed)."""
    args = ["-N", "16", "-hs_check_extremal", "no", "-quiet"]
    for ch in ("\u200b", "\u200f", "\u2060", "\u2064", "\ufeff", "\u180e", "\u2028", "\u2029", "\u00ad", "\u3164",
               "\U000e0041"):
        path = ocp_named(d, "pend" + ch + "ulum")
        rc, out = hs(["-problem", path] + args, d)
        want = "n.ocp:3:14: problem: a control character, a text-direction override or an invisible character"
        check(rc == 1 and want in out and "U+%04X" % ord(ch) in out and ch not in out,
              "problem: pend U+%04X ulum: exit %s\n%s" % (ord(ch), rc, out[-300:]))
    # bytes of no well-formed UTF-8: an overlong ESC (C0 9B) and CSI U+009B (E0 82 9B), which passed the control check,
    # a surrogate, beyond U+10FFFF (before: taken; summary.json then was no UTF-8, json.load failed)
    for bad in (b"\xc0\x9b", b"\xe0\x82\x9b", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80"):
        path = ocp_named(d, "pendXulum")
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data.replace(b"pendXulum", b"pend" + bad + b"ulum"))
        rc, out = hs(["-problem", path] + args, d)
        want = "n.ocp:3:14: problem: a control character or invalid UTF-8 (a byte 0x%02X that starts no valid UTF-8" % bad[0]
        check(rc == 1 and want in out, "problem: pend %r ulum: exit %s\n%s" % (bad, rc, out[-300:]))
    rc, out = hs(["-problem", ocp_named(d, "caf\u00e9 \U0001f600 \u011b")] + args, d)  # visible non-ASCII: taken
    check(rc == 0 and "caf\u00e9 \U0001f600 \u011b" in out, "problem: café, an emoji: exit %s\n%s" % (rc, out[-300:]))
    rc, out = hs(BASE + ["-hs_continue", "g\u200b"], d)
    check(rc == 1 and "option -hs_continue: a control character" in out and "\u200b" not in out,
          "-hs_continue g U+200B: exit %s\n%s" % (rc, out[-300:]))
    # a name read from a file: the summary.json beside an -hs_init trajectory
    rc, out = hs(BASE + ["-o", "ref"], d)
    sj = os.path.join(d, "ref", "summary.json")
    with open(sj, encoding="utf-8") as f:
        text = f.read()
    with open(sj, "w", encoding="utf-8") as f:
        f.write(text.replace('"problem": "pendulum"', '"problem": "pendu\u200blum"', 1))
    rc, out = hs(BASE + ["-hs_init", "ref"], d)
    check(rc == 0 and "written for problem 'pendu???lum'" in out and "\u200b" not in out,
          "-hs_init with a summary.json of problem pendu U+200B lum: exit %s\n%s" % (rc, out[-300:]))


def case_blanks(d):
    """one rule for the numbers of every option: blanks around a number are allowed (round 13), also where PETSc reads
    it; blanks inside one, or an integer written as a real, are refused (before: -hs_checkpoint_every ' 2 ' refused
    where -N ' 16 ' was taken; PETSc's keys refused a blank after the number, 'Input string 50  has no integer value',
    naming no key, and took one before it)."""
    shoot, cont = ["-hs_bvp_type", "shooting"], ["-hs_continue", "g", "-hs_continue_steps", " 3 "]
    for extra, key, value in (([], "-N", " 16 "), ([], "-hs_checkpoint_every", " 2 "),
                              ([], "-hs_checkpoint_every", "\t5s "), ([], "-snes_max_it", "50 "),
                              ([], "-ksp_max_it", " 100 "), ([], "-pc_hsband_refine", "1 "),
                              ([], "-snes_atol", "1e-8 "), ([], "-snes_linesearch_damping", "1.0 "),
                              ([], "-hs_term_grace", " 5 "), ([], "-p_g", " 9.81 "), (cont, "-hs_continue_from", "5 "),
                              (shoot, "-hs_shoot_knots", "4, 8 "),
                              (shoot + ["-N", "1000"], "-hs_shoot_knots", " ,".join(str(k) for k in range(10, 1000, 10)))):
        rc, out = hs(BASE + extra + [key, value], d)
        check(rc == 0, "%s '%s': exit %s (blanks around a number are allowed)\n%s" % (key, value, rc, out[-300:]))
    for key, value, want in (("-N", "1 6", "expected a whole number"),
                             ("-hs_checkpoint_every", "2.0", "expected K (Newton iterations, a whole number)"),
                             ("-hs_checkpoint_every", "1e1", "expected K (Newton iterations, a whole number)"),
                             ("-hs_checkpoint_every", "5 s", "expected K (Newton iterations, a whole number)"),
                             ("-hs_term_grace", "3 0", "expected a whole number")):
        rc, out = hs(BASE + [key, value], d)
        check(rc == 1 and want in out, "%s '%s': exit %s (want '%s')\n%s" % (key, value, rc, want, out[-300:]))


def t_security22_left():
    """what round 22 left, closed: the watchdog, a killed run's checkpoint temporaries, invisible characters in names,
    blanks around numbers (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_watchdog, case_watchdog_acted, case_stale_checkpoint_temps, case_invisible, case_blanks):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
