"""What the hamshoot system tests (tests/hstest.py and its tests/hs_*.py modules) share: running the
executable (under mpiexec for more than one rank) and reading its summary.json, trajectory.csv and
intervals.csv; check(), which counts what passed and prints what failed; the observed order of
two errors, a relative difference, the ratios -snes_test_jacobian prints.
"""
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile

# hstest.py HAMSHOOT MPIEXEC TEST [args]; hstest.py --list and --check NAME... run nothing.
HAMSHOOT, MPIEXEC = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1][:2] != "--" else (None, None)
# ENV_SIGNALS: for the runs a test signals (subprocess.Popen: SIGTERM to a rank, then a checkpoint and exit 3), with
# Open MPI's grace: once a rank has ended, mpiexec sends the others SIGTERM and, odls_base_sigkill_timeout (1 s) later,
# SIGKILL. ENV: for every other run, without that grace (0): a run that ends in an error (both ranks stop on their own)
# then takes 0.4 s instead of 1.4-2.4 s, most of the security tests' time (measured: case_init_reader's 11 runs 14.2 s
# of which 1.9 s CPU); nothing a test asserts depends on it (exit status, messages and files are the ranks' own).
ENV_SIGNALS = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")
ENV = dict(ENV_SIGNALS, OMPI_MCA_odls_base_sigkill_timeout="0")
FAILS = []
PASSES = [0]


# The pendulum of docs/theory.md section 4.1 as a problem file named `name` (the tests' good file).
PENDULUM_OCP = """problem: %s
param m: 1
param l: 1
param g: 9.81
coordinates: q
controls: 1
mass: m*l^2
potential: -m*g*l*sin(q)
B: 1
R: 1
T: 3
N: 20
x0: 0, 0
xT: pi/2, 0
"""


def summary_of(outdir):
    """summary.json of an output directory as a dict ({} if there is none)."""
    path = os.path.join(outdir, "summary.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def check(cond, what):
    if cond:
        PASSES[0] += 1
    else:
        FAILS.append(what)
        print("FAIL:", what)


def info_determinants(out, sources):
    """-info's determinants 'det J = m 2^e (SOURCE)' of the sources named (a regex alternation) as (m, e) pairs."""
    return [(float(m), int(e)) for m, e in re.findall(r"det J = ([0-9.e+-]+) 2\^(-?\d+) \((?:%s)\)" % sources, out)]


def same_determinant(a, b, tol):
    """two (m, e) determinants of one sign whose log2 magnitudes agree to tol."""
    return a[0] * b[0] > 0 and abs(math.log2(abs(a[0])) + a[1] - math.log2(abs(b[0])) - b[1]) <= tol


def read_rows(outdir):
    """trajectory.csv (node rows) with the columns of intervals.csv (interval k on row k, empty on
    the last row), as one list of dicts."""
    with open(os.path.join(outdir, "trajectory.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(outdir, "intervals.csv")) as f:
        ints = list(csv.DictReader(f))
    keys = list(ints[0].keys()) if ints else []
    for k, r in enumerate(rows):
        for key in keys:
            r[key] = ints[k][key] if k < len(ints) else ""
    return rows


def run(args, ranks=1, expect_rc=0, outdir=None, env=None):
    """Runs hamshoot (with env added to the environment); returns (summary dict or None, stdout+stderr, rc)."""
    cmd = [HAMSHOOT] + args + ["-quiet"]
    if ranks > 1:
        cmd = [MPIEXEC, "--oversubscribe", "-n", str(ranks)] + cmd
    tmp = None
    if outdir is None:
        tmp = tempfile.TemporaryDirectory()
        outdir = os.path.join(tmp.name, "out")
    cmd += ["-o", outdir]
    p = subprocess.run(cmd, env=dict(ENV, **(env or {})), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    summary = None
    sfile = os.path.join(outdir, "summary.json")
    if os.path.exists(sfile):
        with open(sfile) as f:
            summary = json.load(f)
        summary["_rows"] = read_rows(outdir)
    if expect_rc is not None and p.returncode != expect_rc:
        print(" ".join(cmd))
        print(p.stdout)
    check(expect_rc is None or p.returncode == expect_rc, "%s: exit %d, expected %s" % (" ".join(args), p.returncode, expect_rc))
    if tmp:
        tmp.cleanup()
    return summary, p.stdout, p.returncode


def jacobian_ratios(out):
    """The ||J - Jfd||_F/||J||_F values -snes_test_jacobian printed."""
    return [float(x) for x in re.findall(r"\|\|J - Jfd\|\|_F/\|\|J\|\|_F = ([0-9.eE+-]+)", out)]


def order(e1, e2):
    return math.log2(e1 / e2) if e1 > 0 and e2 > 0 else float("nan")


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))
