"""hamshoot system tests (tests/hstest.py), the examples: examples/*.json runs and the C API program
examples/ex1_pendulum.c against their stored expected output.
"""
import json
import os
import subprocess

from hs_util import MPIEXEC, ENV, check, run


def t_example(name, expected_file):
    """an example run against its stored expected output (DIGITS significant digits)."""
    with open(expected_file) as f:
        exp = json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.abspath(expected_file)))  # paths in args: from the project root
    args = [os.path.join(root, a) if a.endswith(".ocp") and not os.path.isabs(a) else a for a in exp["args"]]
    s, _, _ = run(args, ranks=exp.get("ranks", 1))
    if not s:
        check(False, "%s: no summary" % name)
        return
    for key, val in exp["values"].items():
        digits = exp.get("digits_for", {}).get(key, exp["digits"])
        rel = abs(s[key] - val) / max(abs(val), 1e-300)
        print("%-8s %-10s %.12g expected %.12g (rel %.1e)" % (name, key, s[key], val, rel))
        check(rel <= 0.5 * 10 ** (1 - digits), "%s: %s = %.12g, expected %.12g to %d digits" % (name, key, s[key], val, digits))
    for key, bound in exp.get("at_most", {}).items():
        check(s[key] <= bound, "%s: %s = %.3e > %.1e" % (name, key, s[key], bound))
    for key, val in exp.get("equal", {}).items():
        check(s[key] == val, "%s: %s = %s, expected %s" % (name, key, s[key], val))


def t_example_c(exe, expected_file):
    """a C example program: its output on 1 and 2 ranks equals the stored expected output
    (the program prints rounded values only)."""
    with open(expected_file) as f:
        expected = f.read()
    for ranks in (1, 2):
        cmd = [exe] if ranks == 1 else [MPIEXEC, "--oversubscribe", "-n", str(ranks), exe]
        p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        print(p.stdout)
        check(p.returncode == 0 and p.stdout == expected,
              "%s on %d ranks: rc %d, output differs from %s" % (os.path.basename(exe), ranks, p.returncode, expected_file))
