#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): issue 38's open items of rounds 17 and 18 (docs/reliability.md). Each
assertion failed on the code before its fix:

  h5_swap     -hs_init FILE.h5 while another process swaps the name between a trajectory.h5 and a FIFO (2 ranks, 8
              runs): each run ends, either from the file's data (the J^d of a run from it alone) or refused naming the
              FIFO; no run reads the path twice (rank 0 had checked the name, then every rank opened it again by
              its path through HDF5: a FIFO swapped in blocked that open, the run hung)

stdlib only; each case in a temporary directory of its own."""
import json
import os
import signal
import subprocess
import tempfile
import threading

from hs_util import ENV, HAMSHOOT, MPIEXEC, check


def run2(args, cwd, timeout=300):
    """hamshoot on 2 ranks in a process group of its own; (exit status, stdout + stderr), status None if it ran past
    timeout (then the whole group, the ranks too, is killed)."""
    p = subprocess.Popen([MPIEXEC, "--oversubscribe", "-n", "2", HAMSHOOT] + args, env=ENV, cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def t_h5_swap():
    """-hs_init FILE.h5 swapped between a trajectory.h5 and a FIFO while 2 ranks read it: no hang, no mixed read."""
    base = ["-problem", "pendulum", "-N", "40", "-hs_check_extremal", "no", "-quiet"]
    with tempfile.TemporaryDirectory() as d:
        rc, out = run2(base + ["-hs_output_format", "hdf5", "-o", "src"], d)
        check(rc == 0, "writing trajectory.h5: exit %s\n%s" % (rc, out[-400:]))
        rc, out = run2(base + ["-hs_init", "src/trajectory.h5", "-o", "ref"], d)
        check(rc == 0, "-hs_init trajectory.h5 alone: exit %s\n%s" % (rc, out[-400:]))
        ref = summary(os.path.join(d, "ref"))
        os.mkfifo(os.path.join(d, "fifo"))
        stop = threading.Event()

        def swap():  # init.h5 -> the trajectory, the FIFO, the trajectory, ... as fast as renames go
            i = 0
            while not stop.is_set():
                tmp = os.path.join(d, "swap.tmp")
                os.symlink(("src/trajectory.h5", "fifo")[i % 2], tmp)
                os.replace(tmp, os.path.join(d, "init.h5"))
                i += 1

        os.symlink("src/trajectory.h5", os.path.join(d, "init.h5"))
        th = threading.Thread(target=swap)
        th.start()
        seen = {0: 0, 1: 0}
        try:
            for k in range(8):
                rc, out = run2(base + ["-hs_init", "init.h5", "-o", "r%d" % k], d, timeout=30)
                check(rc in (0, 1), "run %d with the name swapping: %s\n%s" %
                      (k, "hung (killed after 30 s)" if rc is None else "exit %s" % rc, out[-400:]))
                if rc == 0:
                    s = summary(os.path.join(d, "r%d" % k))
                    check(s["J"] == ref["J"] and s["newton_iterations"] == ref["newton_iterations"],
                          "run %d: J %r, %s iterations, from the file alone %r, %s" %
                          (k, s["J"], s["newton_iterations"], ref["J"], ref["newton_iterations"]))
                elif rc == 1:
                    check("-hs_init init.h5: not a regular file (a FIFO)" in out, "run %d: exit 1 but\n%s" % (k, out[-400:]))
                if rc in seen:
                    seen[rc] += 1
        finally:
            stop.set()
            th.join()
        print("runs from the file: %d, refused (a FIFO at the open): %d" % (seen[0], seen[1]))
