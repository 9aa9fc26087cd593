#!/usr/bin/env python3
"""hamshoot system tests (tests/hstest.py): the drivers' PNGs are whole or absent (issue 38; docs/reliability.md).

gnuplot's pngcairo exits 0 when the disk fills under it, its PNG cut where the space ended (round 23: 8 KiB of
study.png on a 60 KiB tmpfs, left under its name; measured again: 28-32 KiB of a 36 KiB plot, exit 0). hamshoot now
has gnuplot write each PNG into a temporary of its own and renames it only once it is a whole PNG (its signature
first, its IEND chunk last). The stand-ins below are first in PATH and run the real gnuplot:

  cut short     the stand-in cuts every PNG-like file gnuplot made in its directory to 8 KiB and exits 0 (what the
                full disk did): no study.png (before: the torn 8 KiB file as study.png, "written ... study.png"),
                a warning that names it "cut short", study.json's "plot" null (before: "study.png" whatever happened),
                no temporary left, exit 0 (the study's data are whole)
  killed        the stand-in writes half of every PNG and is killed by SIGKILL (a scheduler ending the job's
                processes): no study.png, the warning names the signal, no temporary left
  whole         the real gnuplot through a stand-in that changes nothing: study.png is a whole PNG, "plot":
                "study.png", no temporary; study.gp run by hand (no hs_tmp) writes study.png itself
  stale         a temporary .study.png.tmp.XXXXXX a killed run left in the output is removed by the next run there
  full disk     (only where a 100 KiB tmpfs can be mounted: root, and mount permitted) the real gnuplot on a disk
                that fills under it: every PNG name in the output is a whole PNG or absent, whatever the size
  compare       (not in the sanitized build: IPOPT) -hs_compare's five PNGs through the "cut short" stand-in: none
                of them under its name, compare.json's "plots" empty, exit 0

stdlib only; each case in a temporary directory of its own."""
import json
import os
import shutil
import subprocess
import tempfile

from hs_util import ENV, HAMSHOOT, check

PNG_HEAD = b"\x89PNG\r\n\x1a\n"
PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"
STUDY = ["-problem", "pendulum", "-N", "16", "-hs_study", "3", "-hs_check_extremal", "no", "-quiet"]


def whole_png(path):
    """whether path is a whole PNG: the signature first, the IEND chunk last (an independent reading of the format)."""
    with open(path, "rb") as f:
        data = f.read()
    return data.startswith(PNG_HEAD) and data.endswith(PNG_END)


def stand_in(d, body):
    """a directory holding an executable 'gnuplot' (sh, body after the real gnuplot's path as $REAL), first in PATH."""
    real = shutil.which("gnuplot")
    pbin = os.path.join(d, "pbin")
    os.mkdir(pbin)
    with open(os.path.join(pbin, "gnuplot"), "w") as f:
        f.write("#!/bin/sh\nREAL='%s'\n%s\n" % (real, body))
    os.chmod(os.path.join(pbin, "gnuplot"), 0o755)
    return dict(ENV, PATH=pbin + ":" + ENV["PATH"])


# every file in gnuplot's directory whose name holds "png", cut to 8 KiB (what a full disk did to it)
CUT = 'for f in *png* .*png*; do [ -f "$f" ] && truncate -s 8192 "$f"; done'


def hs(args, d, env, timeout=300):
    p = subprocess.run([HAMSHOOT] + args, env=env, cwd=d, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def temporaries(out):
    return [n for n in os.listdir(out) if ".tmp." in n]


def study_json(out):
    path = os.path.join(out, "study.json")
    return json.load(open(path)) if os.path.exists(path) else None


def case_cut_short(d):
    rc, out = hs(STUDY + ["-o", "out"], d, stand_in(d, '"$REAL" "$@" || exit $?\n' + CUT + "\nexit 0"))
    o = os.path.join(d, "out")
    s = study_json(o)
    check(rc == 0 and not os.path.exists(os.path.join(o, "study.png")) and "study.png" in out and "cut short" in out,
          "gnuplot's PNG cut short, exit 0: exit %s, study.png %s\n%s"
          % (rc, os.path.exists(os.path.join(o, "study.png")), out[-500:]))
    check(s is not None and s["plot"] is None, "study.json's plot with no study.png: %s" % (s and s["plot"]))
    check(not temporaries(o), "temporaries left: %s" % temporaries(o))


def case_killed(d):
    body = '"$REAL" "$@" || exit $?\nfor f in *png* .*png*; do [ -f "$f" ] && truncate -s 4096 "$f"; done\nkill -9 $$'
    rc, out = hs(STUDY + ["-o", "out"], d, stand_in(d, body))
    o = os.path.join(d, "out")
    check(rc == 0 and not os.path.exists(os.path.join(o, "study.png")) and "signal 9" in out,
          "gnuplot killed by SIGKILL after half its PNG: exit %s, study.png %s\n%s"
          % (rc, os.path.exists(os.path.join(o, "study.png")), out[-500:]))
    check(not temporaries(o), "temporaries left: %s" % temporaries(o))


def case_whole(d):
    rc, out = hs(STUDY + ["-o", "out"], d, stand_in(d, 'exec "$REAL" "$@"'))
    o = os.path.join(d, "out")
    png = os.path.join(o, "study.png")
    s = study_json(o)
    check(rc == 0 and os.path.exists(png) and whole_png(png) and s and s["plot"] == "study.png",
          "a plot that gnuplot made whole: exit %s, study.png %s, plot %s\n%s"
          % (rc, os.path.exists(png), s and s["plot"], out[-400:]))
    check(not temporaries(o), "temporaries left: %s" % temporaries(o))
    os.remove(png)  # the script run by hand (no hs_tmp) writes study.png itself
    subprocess.run(["gnuplot", "study.gp"], cwd=o, env=ENV, capture_output=True, timeout=120)
    check(os.path.exists(png) and whole_png(png), "gnuplot study.gp by hand wrote no whole study.png")


def case_stale(d):
    o = os.path.join(d, "out")
    os.mkdir(o)
    stale = os.path.join(o, ".study.png.tmp.abcDEF")
    with open(stale, "wb") as f:
        f.write(PNG_HEAD + b"torn")
    rc, out = hs(STUDY + ["-o", "out"], d, ENV)
    check(rc == 0 and not os.path.exists(stale), "a killed run's PNG temporary: exit %s, left %s\n%s"
          % (rc, os.path.exists(stale), out[-300:]))


def case_full_disk(d):
    mnt = os.path.join(d, "mnt")
    os.mkdir(mnt)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=100k", "tmpfs", mnt],
                                           capture_output=True).returncode:
        print("skipped: cannot mount a tmpfs here")
        return
    try:
        seen = 0
        for fill_kib in range(0, 40, 2):  # the disk fills at every point of the run's writing, the PNG's among them
            for n in os.listdir(mnt):
                subprocess.run(["rm", "-rf", os.path.join(mnt, n)])
            if fill_kib:
                with open(os.path.join(mnt, "fill"), "wb") as f:
                    f.write(b"x" * fill_kib * 1024)
            rc, out = hs(["-problem", "pendulum", "-N", "200", "-hs_study", "3", "-hs_check_extremal", "no", "-quiet",
                          "-o", os.path.join(mnt, "out")], d, ENV)
            png = os.path.join(mnt, "out", "study.png")
            if os.path.exists(png):
                check(whole_png(png), "full disk (%d KiB filled): a torn study.png (%d bytes), exit %s"
                      % (fill_kib, os.path.getsize(png), rc))
            seen += "cut short" in out
            check(rc in (0, 1), "full disk (%d KiB filled): exit %s\n%s" % (fill_kib, rc, out[-300:]))
        print("full disk: %d of 20 fillings cut gnuplot's PNG short (each refused)" % seen)
    finally:
        subprocess.run(["umount", mnt])


def case_compare(d):
    if os.environ.get("HS_SANITIZED"):
        print("skipped: -hs_compare needs IPOPT (not in the sanitized build)")
        return
    rc, out = hs(["-problem", "pendulum", "-N", "16", "-hs_compare", "-o", "cmp", "-quiet"], d,
                 stand_in(d, '"$REAL" "$@" || exit $?\n' + CUT + "\nexit 0"))
    o = os.path.join(d, "cmp")
    pngs = [n for n in os.listdir(o) if n.endswith(".png")] if os.path.isdir(o) else ["(no cmp)"]
    j = json.load(open(os.path.join(o, "compare.json"))) if os.path.exists(os.path.join(o, "compare.json")) else None
    check(rc == 0 and not pngs and "cut short" in out and j is not None and j["plots"] == [],
          "-hs_compare, its PNGs cut short: exit %s, PNGs %s, plots %s\n%s"
          % (rc, pngs, j and j["plots"], out[-500:]))
    check(not temporaries(o), "temporaries left: %s" % temporaries(o))


def t_plots_whole():
    """the drivers' PNGs are whole or absent (this module's header)."""
    if not shutil.which("gnuplot") or not shutil.which("truncate"):
        print("skipped: no gnuplot or truncate")
        return
    with tempfile.TemporaryDirectory() as tmp:
        for case in (case_cut_short, case_killed, case_whole, case_stale, case_full_disk, case_compare):
            print("--", case.__name__)
            case(tempfile.mkdtemp(dir=tmp))
