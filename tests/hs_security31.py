#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): security round 31 (issue 38; docs/reliability.md, "Round 31"), one check
or more for each of the issue's nine classes, each on a variant no earlier round tried. Round 31 found no defect: every
check guards what held.

  1 commands      a problem name with doubled single quotes and a gnuplot system() call (a'';system('touch PWN'))
                  under -hs_study: no command runs, the study is made.
  2 files         a symbolic link to a PNG of the user's at OUT/study.png, -hs_study on 2 ranks: the user's file unchanged.
  3 results       an output directory held by a run that is stopped (SIGSTOP) is refused at once naming the lock.
  4 converged     -snes_stol 1 on 3 ranks: exit 2, CONVERGED_TO_TOLERANCE_ONLY, never "converged yes".
  5 hangs         a potential of 10^5 nested parentheses is refused at once (no stack overflow); -hs_init a symbolic link
                  to a FIFO on 2 ranks is refused naming the FIFO.
  6 signals       SIGINT (Ctrl-C) during a transcription solve: exit 3 with a checkpoint.
  7 -hs_init      a trajectory.csv beginning with a UTF-8 byte order mark is read (0 Newton iterations from the solution);
                  a Fortran exponent (1.5d-3) is refused naming the value.
  8 continuation  an arclength continuation of 1000 steps with -o and -hs_checkpoint_every 0 ends with the last step
                  written (g = 9.81).
  9 messages      -hs_init and -options_file naming a loop of symbolic links: the message names the path and ELOOP.

stdlib only; each case in a temporary directory of its own."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from hs_util import ENV, HAMSHOOT, MPIEXEC, check

QUIET = ["-hs_check_extremal", "no", "-quiet"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def command(args, ranks):
    cmd = [HAMSHOOT] + args + QUIET
    return [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd if ranks > 1 else cmd


def hamshoot(args, d, ranks=1, timeout=120):
    """(exit status, stdout + stderr) of hamshoot args in directory d."""
    p = subprocess.run(command(args, ranks), env=ENV, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout


def background(args, d):
    """hamshoot args started in d, in a process group of its own."""
    return subprocess.Popen(command(args, 1), env=ENV, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def pendulum(d, old="", new=""):
    """problems/pendulum.ocp with old replaced by new, written into d; its name."""
    with open(os.path.join(ROOT, "problems", "pendulum.ocp")) as f:
        text = f.read().replace(old, new) if old else f.read()
    with open(os.path.join(d, "p.ocp"), "w") as f:
        f.write(text)
    return "p.ocp"


def case_commands(d):
    """class 1: doubled single quotes and a gnuplot system() call in a problem name."""
    prob = pendulum(d, "problem: pendulum_file", "problem: a'';system('touch PWN')")
    rc, out = hamshoot(["-problem", prob, "-N", "10", "-hs_study", "3", "-o", "st"], d)
    ran = any("PWN" in files for _, _, files in os.walk(d))
    print("name a'';system(...): exit %d, command ran: %s" % (rc, ran))
    check(rc == 0 and not ran and os.path.exists(os.path.join(d, "st", "study.json")),
          "quoted problem name: exit %d, command ran: %s\n%s" % (rc, ran, out[-300:]))


def case_files(d):
    """class 2: a symbolic link to a PNG of the user's at OUT/study.png (2 ranks)."""
    prob, victim = pendulum(d), os.path.join(d, "mine.png")
    os.mkdir(os.path.join(d, "o"))
    with open(victim, "wb") as f:
        f.write(b"\x89PNG mine")
    os.symlink(victim, os.path.join(d, "o", "study.png"))
    rc, out = hamshoot(["-problem", prob, "-N", "10", "-hs_study", "3", "-o", "o"], d, ranks=2)
    with open(victim, "rb") as f:
        kept = f.read() == b"\x89PNG mine"
    print("link at study.png: exit %d, the user's PNG unchanged: %s" % (rc, kept))
    check(rc == 0 and kept, "link at study.png: exit %d, unchanged %s\n%s" % (rc, kept, out[-300:]))


def case_results(d):
    """class 3: an output directory held by a stopped run is refused at once."""
    prob = pendulum(d)
    holder = background(["-problem", prob, "-N", "200000", "-o", "A"], d)
    try:
        for _ in range(200):  # the holder locks A before its solve
            if os.path.exists(os.path.join(d, "A")):
                break
            time.sleep(0.05)
        time.sleep(0.5)
        os.killpg(holder.pid, signal.SIGSTOP)
        rc, out = hamshoot(["-problem", prob, "-N", "10", "-o", "A"], d, timeout=60)
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.communicate()
    print("-o held by a stopped run: exit %d" % rc)
    check(rc == 1 and "in use by another hamshoot run" in out, "stopped holder: exit %d\n%s" % (rc, out[-300:]))


def case_converged(d):
    """class 4: -snes_stol 1 (SNES stops at its first step) on 3 ranks is not "converged"."""
    rc, out = hamshoot(["-problem", pendulum(d), "-N", "20", "-snes_stol", "1"], d, ranks=3)
    print("-snes_stol 1, 3 ranks: exit %d" % rc)
    check(rc == 2 and "CONVERGED_TO_TOLERANCE_ONLY" in out and "converged          yes" not in out,
          "-snes_stol 1: exit %d\n%s" % (rc, out[-400:]))


def case_hangs(d):
    """class 5: 10^5 nested parentheses; -hs_init a link to a FIFO (2 ranks)."""
    prob = pendulum(d, "potential: -m*g*l*sin(q)", "potential: " + "(" * 100000 + "q" + ")" * 100000)
    rc, out = hamshoot(["-problem", prob], d, timeout=60)
    print("10^5 nested parentheses: exit %d" % rc)
    check(rc == 1 and "nested too deeply" in out, "nested parentheses: exit %d\n%s" % (rc, out[-300:]))
    os.mkfifo(os.path.join(d, "fifo"))
    os.symlink("fifo", os.path.join(d, "lnk"))
    rc, out = hamshoot(["-problem", "pendulum", "-hs_init", "lnk"], d, ranks=2, timeout=60)
    print("-hs_init a link to a FIFO: exit %d" % rc)
    check(rc == 1 and "-hs_init lnk: not a regular file (a FIFO)" in out, "link to FIFO: exit %d\n%s" % (rc, out[-300:]))


def case_signals(d):
    """class 6: SIGINT during a transcription solve: exit 3 with a checkpoint."""
    p = background(["-problem", pendulum(d), "-N", "200000", "-o", "a"], d)
    for _ in range(200):  # the checkpoint directory is made before the solve
        if os.path.exists(os.path.join(d, "a")):
            break
        time.sleep(0.05)
    time.sleep(1.0)
    os.kill(p.pid, signal.SIGINT)
    out = p.communicate(timeout=120)[0]
    ck = os.path.join(d, "a", "checkpoint")
    files = sorted(os.listdir(ck)) if os.path.isdir(ck) else []
    print("SIGINT: exit %d, checkpoint %s" % (p.returncode, files))
    check(p.returncode == 3 and files == ["checkpoint.json", "iterate.bin"],
          "SIGINT: exit %d, checkpoint %s\n%s" % (p.returncode, files, out[-300:]))


def case_init(d):
    """class 7: a byte order mark is read; a Fortran exponent is refused naming the value."""
    rc, out = hamshoot(["-problem", "pendulum", "-N", "10", "-o", "ref"], d)
    for name in ("trajectory.csv", "intervals.csv"):
        shutil.copy(os.path.join(d, "ref", name), os.path.join(d, name))
    with open(os.path.join(d, "trajectory.csv"), encoding="utf-8") as f:
        text = f.read()
    with open(os.path.join(d, "trajectory.csv"), "w", encoding="utf-8") as f:
        f.write("\ufeff" + text)
    rc, out = hamshoot(["-problem", "pendulum", "-N", "10", "-hs_init", "trajectory.csv"], d)
    print("byte order mark: exit %d" % rc)
    check(rc == 0 and "after 0 Newton iterations" in out, "BOM: exit %d\n%s" % (rc, out[-300:]))
    lines = text.splitlines()
    fields = lines[1].split(",")
    fields[1] = "1.5d-3"
    with open(os.path.join(d, "trajectory.csv"), "w") as f:
        f.write("\n".join([lines[0], ",".join(fields)] + lines[2:]) + "\n")
    rc, out = hamshoot(["-problem", "pendulum", "-N", "10", "-hs_init", "trajectory.csv"], d)
    print("Fortran exponent: exit %d" % rc)
    check(rc == 1 and "trajectory.csv:2: value 2 ('1.5d-3') is not a number" in out,
          "Fortran exponent: exit %d\n%s" % (rc, out[-300:]))


def case_continuation(d):
    """class 8: arclength continuation, 1000 steps, -o, -hs_checkpoint_every 0: the last step written."""
    rc, out = hamshoot(["-problem", "pendulum", "-N", "20", "-hs_continue", "g", "-hs_continue_from", "5",
                        "-hs_continue_steps", "1000", "-hs_continue_type", "arclength", "-o", "c",
                        "-hs_checkpoint_every", "0"], d, timeout=300)
    path = os.path.join(d, "c", "summary.json")
    s = json.load(open(path)) if os.path.exists(path) else {}
    g = s.get("parameters", {}).get("g")
    print("arclength with -o: exit %d, g = %s" % (rc, g))
    check(rc == 0 and g == 9.81 and s.get("converged") is True, "arclength -o: exit %d, g %s\n%s" % (rc, g, out[-300:]))


def case_messages(d):
    """class 9: a loop of symbolic links: the message names the path and ELOOP."""
    os.symlink("loop1", os.path.join(d, "loop2"))
    os.symlink("loop2", os.path.join(d, "loop1"))
    for extra in (["-hs_init", "loop1"], ["-options_file", "loop1"]):
        rc, out = hamshoot(["-problem", "pendulum", "-N", "10"] + extra, d)
        want = "%s loop1: cannot open: Too many levels of symbolic links" % extra[0]
        print("%s: exit %d" % (" ".join(extra), rc))
        check(rc == 1 and want in out, "%s: exit %d, want '%s'\n%s" % (" ".join(extra), rc, want, out[-300:]))


def t_security31():
    """round 31's cases (docs/reliability.md)."""
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_commands, case_files, case_results, case_converged, case_hangs, case_signals, case_init,
                     case_continuation, case_messages):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
