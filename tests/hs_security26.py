#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 26 (issue 38; docs/reliability.md, "Round 26"). Each
assertion marked (before: ...) failed on the code before its fix:

  unsaved step    SIGTERM during a continuation whose failed steps end before their first Newton iteration (a domain
                  error of the first residual: no poll, HsSolverStopIfInterrupted) exits 5 with no checkpoint, natural
                  and arclength, 1 and 2 ranks (before: 3, which promises a batch script that resubmits with -hs_restart a checkpoint
                  of the stop, and there was none at all). Status 3 still comes with the checkpoint.
  grid types      an unknown -hs_grid_snes_type, _npc_snes_type, _ksp_type, _pc_type (the sub-solvers of -hs_study and
                  -hs_extrapolate) is refused at the set-up, before the main solve, naming the option (before: the
                  main solve ran, then PETSc's "Unable to find requested SNES type nonesuch" on the study's second
                  grid); a registered one (hamshoot's hsband) is taken.

stdlib only; each case in a temporary directory of its own."""
import os
import signal
import subprocess
import tempfile

from hs_reliability import rank_pids
from hs_util import ENV_SIGNALS, HAMSHOOT, MPIEXEC, check

# the potential is undefined for q > c: continuing c from 2 to 0.3 the predicted guesses leave the domain, so each
# step fails at its first residual (DIVERGED_FUNCTION_DOMAIN) and is halved, again and again
DOMAIN_OCP = ("problem: dom\ncoordinates: q\ncontrols: 1\nparam c: 2\nmass: 1\npotential: 0.5*q^2 + sqrt(c - q)\n"
              "B: 1\nR: 1\nT: 3\nN: 20\nx0: 0, 0\nxT: 1, 0\n")


def stop_at_retry(args, d, ranks):
    """(exit status, output, whether sent): SIGTERM to every rank once the continuation says it retries a failed step
    (on 2 ranks to the ranks themselves: mpiexec's own status is not theirs)."""
    cmd = [HAMSHOOT] if ranks == 1 else [MPIEXEC, "--oversubscribe", "-n", str(ranks), HAMSHOOT]
    p = subprocess.Popen(cmd + args, env=ENV_SIGNALS, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    out, sent = [], False
    try:
        for line in p.stdout:
            out.append(line)
            if not sent and "retrying" in line:
                for pid in [p.pid] if ranks == 1 else rank_pids(p.pid):
                    os.kill(pid, signal.SIGTERM)
                sent = True
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, "".join(out), sent


def case_unsaved_step(d):
    """status 3 if and only if a checkpoint of the stop exists: a failed step stopped before any poll exits 5."""
    with open(os.path.join(d, "dom.ocp"), "w") as f:
        f.write(DOMAIN_OCP)
    for ctype, ranks in (("natural", 1), ("arclength", 1), ("natural", 2), ("arclength", 2)):
        ck = os.path.join(d, "ck_%s%d" % (ctype, ranks))
        kind = "%s, %d rank%s" % (ctype, ranks, "s" if ranks > 1 else "")
        rc, out, sent = stop_at_retry(["-problem", "dom.ocp", "-N", "2000", "-hs_check_extremal", "no",
                                       "-hs_strategy", "newton", "-hs_continue", "c", "-hs_continue_from", "2",
                                       "-p_c", "0.3", "-hs_continue_steps", "2", "-hs_continue_type", ctype,
                                       "-hs_continue_max_halvings", "1000", "-hs_checkpoint", ck], d, ranks)
        check(sent, "%s: no failed step to stop at\n%s" % (kind, out[-400:]))
        have = os.path.isfile(os.path.join(ck, "checkpoint.json"))
        if "stopped after Newton iteration" in out:  # the signal came during a step that polled: its checkpoint, 3
            check(rc == 3 and have, "%s: stopped at a poll: exit %d, checkpoint %s\n%s" % (kind, rc, have, out[-400:]))
        else:
            check(rc == 5 and not have and "no checkpoint of it" in out,
                  "%s: SIGTERM between failed steps: exit %d, checkpoint %s (before: 3 with no checkpoint)\n%s" %
                  (kind, rc, have, out[-400:]))


def case_grid_types(d):
    """a driver's sub-solver type that does not exist is refused before the main solve, naming its option."""
    base = ["-problem", "pendulum", "-N", "400", "-hs_check_extremal", "no", "-hs_study", "3"]
    for key, kind in (("snes_type", "SNES"), ("npc_snes_type", "SNES"), ("ksp_type", "KSP"), ("pc_type", "PC")):
        p = subprocess.run([HAMSHOOT] + base + ["-o", "st_" + key, "-hs_grid_" + key, "nonesuch"], env=ENV_SIGNALS,
                           cwd=d, capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        check(p.returncode == 1 and "-hs_grid_%s nonesuch: not a %s type" % (key, kind) in out and "Newton" not in out,
              "-hs_grid_%s nonesuch: exit %d (before: refused after the main solve, without the option's name)\n%s" %
              (key, p.returncode, out[-400:]))
    p = subprocess.run([HAMSHOOT] + base + ["-o", "st_band", "-hs_grid_pc_type", "hsband"], env=ENV_SIGNALS, cwd=d,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "-hs_grid_pc_type hsband: exit %d\n%s" % (p.returncode, (p.stdout + p.stderr)[-400:]))


def t_security26():
    """round 26's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_unsaved_step, case_grid_types):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
