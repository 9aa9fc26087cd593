#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 24 (issue 38; docs/reliability.md, "Round 24"). Each
assertion marked (before: ...) failed on the code before its fix:

  summary name    the summary.json beside an -hs_init trajectory names the problem JSON-escaped: a problem named
                  o"brien\\x started from its own output gets no warning (before: "was written for problem 'o\\'",
                  sscanf had read the name up to its first quote), and a problem named o\\ started from that output
                  gets the warning (before: none, 'o\\' read from the file equalled it)
  checkpoint keys checkpoint.json's top-level members are read where hamshoot writes them: a problem with a parameter
                  named continuation refuses a restart with another -p_g (before: taken, the parameter check skipped:
                  Member found the parameter's "continuation": first), one with a parameter named layout resumes
                  its own checkpoint (before: "the checkpoint has layout = 1", refused), also
                  with its checkpoint.json re-indented (each parameter on a line of its own)
  checkpoint user's file  a checkpoint directory that holds a file of the user's besides the checkpoint is refused
                  before the solve, naming the file, which stays where it is (before: exit 0, the file moved to
                  DIR.old with the first checkpoint and left there, so that every later checkpoint was dropped)
  error wait      2 ranks, rank 1 fails alone (-hs_inject_error 1) with -hs_error_timeout 60 and -hs_term_grace 5,
                  SIGTERM to the ranks while rank 1 waits for the others: its message ("error injected on rank 1") and
                  status 1 (before: status 4 and only the watchdog's message, the error lost)
  CPU limit       a soft CPU-time limit of 1 s (SIGXCPU, which the kernel repeats every CPU second) during a Newton
                  iteration of 3.5 s: exit 3 with the checkpoint (before: the second SIGXCPU found the default action,
                  the handler being one-shot: killed, status 152, no checkpoint)

Round 24's "Left", fixed in round 25:
  unsaved         SIGTERM when the checkpoint's place was taken after the set-up (a directory of the user's): exit 5,
                  "could not be written" (before: 3, the status that promises a checkpoint); writable: 3
  restart count   a restart of a checkpoint of Newton iteration k stopped at its first poll writes k back (before: 0);
                  a newton_iteration of 1e3 is refused naming it (before: read as 1)
  units           the pendulum at -p_g 1e10 and -p_m 1e12 is not refused with "q is conserved" (before: exit 1, a
                  false statement: the boundary test's rows were normalized whole, q's rate read as zero)
  NPC             -npc_snes_type newtonls/newtontr/ksponly (left, right) refused before the solve naming the option
                  (before: PETSc's "Matrix is missing diagonal entry 2"); nrichardson taken; in -hs_study's
                  sub-solver, study.json's "failed" names it (before: "its message above", a message not in it)

stdlib only; each case in a temporary directory of its own."""
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

from hs_util import ENV, ENV_SIGNALS, HAMSHOOT, MPIEXEC, PENDULUM_OCP, check


def hs(args, d, timeout=120):
    """(exit status, stdout + stderr) of hamshoot on 1 rank in directory d."""
    p = subprocess.run([HAMSHOOT] + args, env=ENV, cwd=d, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
    return name


def case_summary_name(d):
    """the problem's name in the summary.json beside an -hs_init trajectory is compared as written (JSON-escaped)."""
    quoted = write(d, "quoted.ocp", PENDULUM_OCP % 'o"brien\\x')
    rc, out = hs(["-problem", quoted, "-hs_check_extremal", "no", "-o", "out", "-quiet"], d)
    check(rc == 0, "the problem o\"brien\\x: exit %s\n%s" % (rc, out[-300:]))
    rc, out = hs(["-problem", quoted, "-hs_check_extremal", "no", "-hs_init", "out", "-quiet"], d)
    check(rc == 0 and "was written for problem" not in out,
          "o\"brien\\x from its own output: exit %s (before: a warning naming 'o\\')\n%s" % (rc, out[-300:]))
    other = write(d, "other.ocp", PENDULUM_OCP % "o\\")
    rc, out = hs(["-problem", other, "-hs_check_extremal", "no", "-hs_init", "out", "-quiet"], d)
    check(rc == 0 and "was written for problem 'o\"brien\\x'" in out,
          "o\\ from o\"brien\\x's output: exit %s, no warning naming o\"brien\\x (before: none)\n%s" % (rc, out[-300:]))


def case_checkpoint_keys(d):
    """a parameter named as a member of checkpoint.json is not read as that member."""
    for name, args, ok in (("continuation", ["-p_g", "5"], False), ("layout", [], True)):
        ocp = write(d, name + ".ocp", (PENDULUM_OCP % name).replace("param m: 1", "param %s: 1\nparam m: 1" % name))
        rc, out = hs(["-problem", ocp, "-hs_check_extremal", "no", "-hs_checkpoint", name, "-hs_checkpoint_every",
                      "1", "-quiet"], d)
        check(rc == 0 and os.path.exists(os.path.join(d, name, "checkpoint.json")),
              "param %s: exit %s, no checkpoint\n%s" % (name, rc, out[-300:]))
        rc, out = hs(["-problem", ocp, "-hs_check_extremal", "no", "-hs_restart", name, "-quiet"] + args, d)
        if name == "layout":  # laid out anew (each parameter on a line of its own): read the same
            path = os.path.join(d, name, "checkpoint.json")
            with open(path) as f:
                text = json.load(f)
            with open(path, "w") as f:
                json.dump(text, f, indent=4)
            rc2, out2 = hs(["-problem", ocp, "-hs_check_extremal", "no", "-hs_restart", name, "-quiet"], d)
            check(rc2 == 0, "param layout, checkpoint.json re-indented: exit %s\n%s" % (rc2, out2[-300:]))
        if ok:
            check(rc == 0, "param %s: its own checkpoint not resumed, exit %s (before: 'the checkpoint has layout = "
                  "1', exit 1)\n%s" % (name, rc, out[-300:]))
        else:
            check(rc == 1 and "the checkpoint has parameter g = 9.81, this run 5" in out,
                  "param %s, restart with -p_g 5: exit %s (before: taken, exit 0)\n%s" % (name, rc, out[-300:]))


def case_checkpoint_foreign(d):
    """a checkpoint directory holding a file of the user's is refused before the solve, the file left where it is."""
    ocp = write(d, "p.ocp", PENDULUM_OCP % "p")
    args = ["-problem", ocp, "-hs_check_extremal", "no", "-hs_checkpoint", "ck", "-hs_checkpoint_every", "1", "-quiet"]
    rc, out = hs(args, d)
    check(rc == 0 and os.path.exists(os.path.join(d, "ck", "checkpoint.json")), "no checkpoint: exit %s\n%s"
          % (rc, out[-300:]))
    write(d, os.path.join("ck", "notes.txt"), "mine\n")
    rc, out = hs(args, d)
    check(rc == 1 and "holds 'notes.txt'" in out and "was not written" not in out and
          os.path.exists(os.path.join(d, "ck", "notes.txt")) and not os.path.exists(os.path.join(d, "ck.old")),
          "a file of the user's in the checkpoint: exit %s, ck.old %s (before: exit 0, notes.txt moved to ck.old and "
          "every later checkpoint dropped)\n%s" % (rc, os.path.exists(os.path.join(d, "ck.old")), out[-400:]))


def ready(pids):
    """every rank has installed hamshoot's signal handlers (SIGPIPE, ignored last, is in its SigIgn)."""
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                ign = [int(l.split()[1], 16) for l in f if l.startswith("SigIgn:")]
        except OSError:
            return False
        if not ign or not ign[0] & (1 << (signal.SIGPIPE - 1)):
            return False
    return len(pids) == 2


def case_error_wait(d):
    """a signal while a rank that failed alone waits for the others: its message, status 1."""
    from hs_reliability import rank_pids
    p = subprocess.Popen([MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT, "-problem", "kepler", "-N", "2000",
                          "-hs_check_extremal", "no", "-hs_inject_error", "1", "-hs_error_timeout", "60",
                          "-hs_term_grace", "5", "-quiet"], env=ENV_SIGNALS, cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    def kill_all():
        for pid in rank_pids(p.pid):
            os.kill(pid, signal.SIGKILL)
        p.kill()
    timer = threading.Timer(90, kill_all)
    timer.start()
    try:
        for _ in range(600):  # until both ranks have their handlers (at most 60 s)
            if ready(rank_pids(p.pid)) or p.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(1)  # rank 1 is then in its wait (it fails before the solve), rank 0 in the solve's first collective
        for pid in rank_pids(p.pid):
            os.kill(pid, signal.SIGTERM)
        out, _ = p.communicate()
    finally:
        timer.cancel()
    check(p.returncode not in (0, 3, 4) and "error injected on rank 1" in out,  # 1 (MPI_Abort's code)
          "SIGTERM while rank 1 waited to report its error: exit %s (before: 4, the watchdog's message only)\n%s"
          % (p.returncode, out[-500:]))


def case_cpu_limit(d):
    """a soft CPU-time limit (SIGXCPU, repeated by the kernel every CPU second) stops the run with its checkpoint."""
    import resource
    if os.environ.get("HS_SANITIZED"):  # a sanitized start-up alone may take the 1 s of CPU (before the handlers)
        print("skipped under the sanitizers (HS_SANITIZED)")
        return
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (1, 60))
    # a Newton iteration of about 3.5 s of CPU (a Krylov solve of 3e6 Richardson iterations that change nothing): the
    # first SIGXCPU comes inside it, at 1 s, the kernel's second at 2 s
    p = subprocess.run([HAMSHOOT, "-problem", "pendulum", "-N", "16", "-hs_check_extremal", "no", "-quiet", "-o", "out",
                        "-ksp_type", "richardson", "-ksp_richardson_scale", "0", "-ksp_max_it", "3000000"], env=ENV,
                       cwd=d, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    out = p.stdout + p.stderr
    check(p.returncode == 3 and os.path.exists(os.path.join(d, "out", "checkpoint", "checkpoint.json")),
          "a soft CPU-time limit: exit %s, checkpoint %s (before: -24, killed by the second SIGXCPU, no checkpoint)\n%s"
          % (p.returncode, os.path.exists(os.path.join(d, "out", "checkpoint", "checkpoint.json")), out[-300:]))


def slow_args(extra=()):
    """pendulum N = 16 with Newton iterations of about 3.5 s (a Krylov solve of 3e6 Richardson iterations that change
    nothing): time to act between the set-up and the first poll."""
    return [HAMSHOOT, "-problem", "pendulum", "-N", "16", "-hs_check_extremal", "no", "-quiet", "-ksp_type",
            "richardson", "-ksp_richardson_scale", "0", "-ksp_max_it", "3000000"] + list(extra)


def stop_when_ready(p, before_signal=None):
    """SIGTERM to the one-rank run p once its handlers are installed (before_signal(), if given, first)."""
    for _ in range(600):
        if p.poll() is not None or ready1(p.pid):
            break
        time.sleep(0.1)
    time.sleep(0.5)
    if before_signal:
        before_signal()
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=120)
    return p.returncode, out


def ready1(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            ign = [int(l.split()[1], 16) for l in f if l.startswith("SigIgn:")]
    except OSError:
        return False
    return bool(ign) and bool(ign[0] & (1 << (signal.SIGPIPE - 1)))


def case_unsaved(d):
    """a SIGTERM whose checkpoint cannot be written exits 5, not 3 (3 promises a checkpoint of the stop)."""
    if os.environ.get("HS_SANITIZED"):
        print("skipped under the sanitizers (HS_SANITIZED): iterations of 3.5 s become minutes")
        return
    def take():  # a directory of the user's at the checkpoint's place, made after the set-up: the write must fail
        os.mkdir(os.path.join(d, "ck"))
        write(d, os.path.join("ck", "notes.txt"), "mine\n")
    p = subprocess.Popen(slow_args(["-hs_checkpoint", "ck"]), env=ENV, cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    rc, out = stop_when_ready(p, take)
    check(rc == 5 and "could not be written" in out and not os.path.exists(os.path.join(d, "ck", "checkpoint.json")),
          "SIGTERM, the checkpoint not writable: exit %s (before: 3, which promises a checkpoint)\n%s" % (rc, out[-400:]))
    # the same stop with a checkpoint that can be written: 3
    p = subprocess.Popen(slow_args(["-hs_checkpoint", "ck2"]), env=ENV, cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    rc, out = stop_when_ready(p)
    check(rc == 3 and os.path.exists(os.path.join(d, "ck2", "checkpoint.json")),
          "SIGTERM, the checkpoint writable: exit %s\n%s" % (rc, out[-400:]))
    # round 24's left item: a restart stopped before its first iteration writes its checkpoint's iteration back,
    # not 0 (first a checkpoint after Newton iteration 2: -hs_checkpoint_every 1, -snes_max_it 2)
    rc, out = hs(["-problem", "pendulum", "-N", "16", "-hs_check_extremal", "no", "-quiet", "-hs_strategy", "newton",
                  "-hs_checkpoint", "ck3", "-hs_checkpoint_every", "1", "-snes_max_it", "2"], d)
    with open(os.path.join(d, "ck3", "checkpoint.json")) as f:
        it0 = json.load(f)["newton_iteration"]
    p = subprocess.Popen(slow_args(["-hs_restart", "ck3", "-hs_checkpoint", "ck3"]), env=ENV, cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    rc, out = stop_when_ready(p)
    with open(os.path.join(d, "ck3", "checkpoint.json")) as f:
        it1 = json.load(f)["newton_iteration"]
    # round 25: a newton_iteration that is not a whole number is refused naming it (before: 1e3 read as 1, -1 and
    # 1e20 as 0, silently)
    path = os.path.join(d, "ck3", "checkpoint.json")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace('"newton_iteration": %d' % it0, '"newton_iteration": 1e3'))
    rc2, out2 = hs(["-problem", "pendulum", "-N", "16", "-hs_check_extremal", "no", "-quiet", "-hs_restart", "ck3"], d)
    check(rc2 == 1 and "newton_iteration is not a whole number" in out2,
          "newton_iteration 1e3: exit %s (before: read as 1)\n%s" % (rc2, out2[-300:]))
    check(it0 >= 1 and rc == 3 and it1 == it0, "a restart of the checkpoint of iteration %s stopped in its first iteration: "
          "exit %s, its checkpoint says iteration %s (before: counted from 0)\n%s" % (it0, rc, it1, out[-400:]))


def case_units(d):
    """the terminal-condition test does not depend on the units: the pendulum at -p_g 1e10 or -p_m 1e12 is not
    refused with "q is conserved" (q's rate p/(m l^2) is not zero, whatever its size next to p's)."""
    for args in (["-p_g", "1e10"], ["-p_m", "1e12"]):
        rc, out = hs(["-problem", "pendulum", "-N", "8", "-hs_check_extremal", "no", "-hs_strategy", "newton",
                      "-snes_max_it", "1", "-quiet"] + args, d)
        check(rc in (0, 2) and "is conserved" not in out,
              "pendulum %s: exit %s (before: 1, 'q is conserved by the dynamics', false)\n%s" % (args, rc, out[-300:]))


def case_npc(d):
    """a nonlinear preconditioner that solves linear systems with the Jacobian is refused before the solve naming
    the option (before: PETSc's "Matrix is missing diagonal entry 2", exit 1); one that does not is taken."""
    for t, side in (("newtonls", "left"), ("newtontr", "right"), ("ksponly", "right")):
        rc, out = hs(["-problem", "pendulum", "-N", "8", "-hs_check_extremal", "no", "-quiet", "-snes_type", "ngmres",
                      "-npc_snes_type", t, "-snes_npc_side", side], d)
        check(rc == 1 and "-npc_snes_type %s: not supported as a nonlinear preconditioner" % t in out and "diagonal" not in out,
              "-npc_snes_type %s, side %s: exit %s (before: PETSc's 'missing diagonal entry')\n%s" % (t, side, rc,
                                                                                               out[-300:]))
    rc, out = hs(["-problem", "pendulum", "-N", "8", "-hs_check_extremal", "no", "-quiet", "-snes_type", "ngmres",
                  "-npc_snes_type", "nrichardson", "-snes_max_it", "3"], d)
    check(rc in (0, 2) and "nonlinear preconditioner" not in out, "nrichardson NPC: exit %s\n%s" % (rc, out[-300:]))
    # round 25: the same refused in -hs_study's sub-solver (its options are read at its set-up, after the first grid):
    # study.json's "failed" says why (before: "an error (PETSc error 56, its message above)", the message printed
    # after the table and nowhere in study.json)
    rc, out = hs(["-problem", "pendulum", "-N", "8", "-hs_check_extremal", "no", "-quiet", "-hs_study", "3", "-o", "st",
                  "-hs_grid_snes_type", "ngmres", "-hs_grid_npc_snes_type", "newtonls"], d)
    with open(os.path.join(d, "st", "study.json")) as f:
        why = json.load(f)["failed"]["why"]
    check(rc == 1 and "-hs_grid_npc_snes_type newtonls: not supported" in why and "above" not in why,
          "-hs_grid_npc_snes_type newtonls in -hs_study: exit %s, study.json's why: %s" % (rc, why))


def t_security24():
    """round 24's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_summary_name, case_checkpoint_keys, case_checkpoint_foreign, case_error_wait, case_cpu_limit,
                     case_unsaved, case_units, case_npc):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
