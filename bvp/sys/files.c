/* hamshoot: files of the output and checkpoint directories (floor sys/, knows no HsSolver): the output directory's
 * lock and the descriptor it holds, through which every file and subdirectory of the output is made (openat, mkdirat,
 * renameat, unlinkat: no path lookup of the locked directory after the lock), atomic writes (a temporary file renamed
 * into place when complete, so that a crash or an interrupted run never leaves a half-written file), running gnuplot
 * on a generated script in a directory entered by its descriptor, JSON strings. */
#define _GNU_SOURCE /* posix_spawn_file_actions_addfchdir_np (glibc 2.29): HsRunGnuplot */
#include "../../problems/hstext.h"
#include "hssys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* mkdir -p; returns 0 or errno. */
static int MakeDirs(const char *dir)
{
  char   path[PETSC_MAX_PATH_LEN];
  size_t len = strlen(dir);

  if (len == 0 || len >= sizeof path)
    return ENAMETOOLONG;
  memcpy(path, dir, len + 1);
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(path, 0777) && errno != EEXIST)
        return errno;
      *p = '/';
    }
  if (mkdir(path, 0777) && errno != EEXIST)
    return errno;
  {
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode))
      return ENOTDIR;
  }
  return 0;
}

/* The locked output directory (HsLockDirectory): its descriptor, held (and the lock with it) until the process ends,
 * and what its path named then. Every file and subdirectory of the output is made through fd (HsDirOpen), so that no
 * path lookup of the directory happens after the lock (docs/reliability.md: the output directory replaced during the
 * run). */
static struct {
  int   held, fd;
  dev_t dev;
  ino_t ino;
  char  path[PETSC_MAX_PATH_LEN];
} hs_locked;

/* The XXXXXX at the end of name replaced by six random characters (for new names only: O_EXCL and mkdirat refuse what
 * is there, so that a guessed name costs a retry, never a file). */
static void RandomName(char *name)
{
  static const char   abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static unsigned int count;
  size_t              n = strlen(name);
  unsigned char       r[6];

  if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) { /* none yet: the pid, the clock and a counter */
    unsigned long long x =
        (unsigned long long)getpid() * 2654435761ULL ^ (unsigned long long)time(NULL) * 40503ULL ^ ++count * 97ULL;
    for (int i = 0; i < 6; i++, x = x * 6364136223846793005ULL + 1442695040888963407ULL)
      r[i] = (unsigned char)(x >> 33);
  }
  for (int i = 0; i < 6 && n >= 6; i++)
    name[n - 6 + i] = abc[r[i] % (sizeof abc - 1)];
}

/*@ HsCreateUniqueAt - a new file (dir 0: opened for writing, O_CREAT | O_EXCL | O_NOFOLLOW, mode 0666 less the umask)
    or directory (dir 1: mode 0700) named name (its last six characters XXXXXX, replaced) in the directory open as dfd:
    never a file or link that was there (bvp/ internal; one process). Returns the file's descriptor (0 for a directory),
    or -1 with errno. @*/
int HsCreateUniqueAt(int dfd, char *name, int dir)
{
  char templ[PETSC_MAX_PATH_LEN];

  if (strlen(name) < 6 || strlen(name) >= sizeof templ || strcmp(name + strlen(name) - 6, "XXXXXX"))
    return errno = EINVAL, -1;
  strcpy(templ, name);
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd;
    strcpy(name, templ);
    RandomName(name);
    fd = dir ? mkdirat(dfd, name, 0700) : openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return errno = EEXIST, -1;
}

/* The part of dir inside the locked directory ("" for the directory itself), or NULL if dir does not start with its
 * path (or climbs out of it with ..). */
static const char *InsideLocked(const char *dir)
{
  size_t      L = strlen(hs_locked.path);
  const char *rel;

  if (!hs_locked.held)
    return NULL;
  while (L > 1 && hs_locked.path[L - 1] == '/') /* 'out/' names out */
    L--;
  if (strncmp(dir, hs_locked.path, L))
    return NULL;
  rel = dir + L;
  if (!(L == 1 && hs_locked.path[0] == '/') && *rel && *rel != '/')
    return NULL;
  for (const char *p = rel; *p; p += strcspn(p, "/")) {
    p += strspn(p, "/");
    if (!strncmp(p, "..", 2) && (p[2] == '/' || !p[2]))
      return NULL;
  }
  return rel;
}

/*@ HsDirInsideLocked - whether dir is the locked output directory or inside it (by its path, as HsDirOpen reads it;
    bvp/ internal; one process): such a directory is reached through the lock's descriptor only. @*/
int HsDirInsideLocked(const char *dir) { return InsideLocked(dir) != NULL; }

/*@ HsDirOpen - a new descriptor (close-on-exec; the caller closes it) of the directory dir, made first if create
    (mkdir -p), for the writes of an output (bvp/ internal; one process). The locked output directory and the
    directories inside it (the sides of -hs_compare, a checkpoint's parent) are reached from the descriptor that
    HsLockDirectory holds, one component at a time (mkdirat, then openat with O_DIRECTORY | O_NOFOLLOW): no path lookup
    of the locked directory happens after the lock, so that a directory moved away and replaced by a link during the
    run still gets the output, and nothing goes through the link; a link or a file at a component inside it is refused.
    Any other dir is opened by its path. Returns 0, or 1 with a message in err. @*/
int HsDirOpen(const char *dir, int create, int *fd, char *err, size_t len)
{
  const char *rel = InsideLocked(dir);
  int         cur, e;

  *fd = -1;
  if (!rel) {
    if (create && (e = MakeDirs(dir))) {
      snprintf(err, len, "cannot create output directory '%s': %s", dir, strerror(e));
      return 1;
    }
    if ((*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
      snprintf(err, len, "cannot open directory '%s': %s", dir, strerror(errno));
      return 1;
    }
    return 0;
  }
  if ((cur = fcntl(hs_locked.fd, F_DUPFD_CLOEXEC, 0)) < 0) {
    snprintf(err, len, "cannot open output directory '%s': %s", dir, strerror(errno));
    return 1;
  }
  while (*(rel += strspn(rel, "/"))) {
    char   comp[256];
    size_t n = strcspn(rel, "/");
    int    next;
    if (n >= sizeof comp) {
      close(cur);
      snprintf(err, len, "cannot open '%s': %s", dir, strerror(ENAMETOOLONG));
      return 1;
    }
    memcpy(comp, rel, n), comp[n] = 0, rel += n;
    if (!strcmp(comp, "."))
      continue;
    if (create && mkdirat(cur, comp, 0777) && errno != EEXIST) {
      e = errno, close(cur);
      snprintf(err, len, "cannot create output directory '%s': %s", dir, strerror(e));
      return 1;
    }
    next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    e = errno, close(cur), cur = next;
    if (cur < 0) {
      if (e == ELOOP || e == ENOTDIR)
        snprintf(err, len,
                 "'%s' is a symbolic link or not a directory: refusing to write into it (remove it, or give "
                 "another -o)",
                 dir);
      else
        snprintf(err, len, "cannot open output directory '%s': %s", dir, strerror(e));
      return 1;
    }
  }
  *fd = cur;
  return 0;
}

/*@ HsWriteFileTempAt - writes a new temporary file in the directory open as dfd (named dir in messages) through
    write(f, ctx), flushed to disk, for the caller to rename into place (bvp/ internal; one process). Its name (returned
    in tmp, PETSC_MAX_PATH_LEN, relative to dfd) is .name.tmp.XXXXXX, unique to this write (HsCreateUniqueAt: O_CREAT |
    O_EXCL | O_NOFOLLOW, so it never opens a file or a symbolic link that was there, docs/reliability.md); its mode is
    that of a file created by fopen (0666 less the umask). Returns 0, or 1 with a message in err and no file left. @*/
int HsWriteFileTempAt(int dfd, const char *dir, const char *name, int (*write)(FILE *, void *), void *ctx, char *tmp,
                      char *err, size_t errlen)
{
  FILE *f;
  int   fd, bad;

  if (snprintf(tmp, PETSC_MAX_PATH_LEN, ".%s.tmp.XXXXXX", name) >= PETSC_MAX_PATH_LEN) {
    snprintf(err, errlen, "cannot create a file in %s: the name is too long", dir);
    return 1;
  }
  if ((fd = HsCreateUniqueAt(dfd, tmp, 0)) < 0) {
    snprintf(err, errlen, "cannot create a temporary file for %s/%s: %s", dir, name, strerror(errno));
    return 1;
  }
  if (!(f = fdopen(fd, "w"))) {
    snprintf(err, errlen, "cannot write %s/%s: %s", dir, tmp, strerror(errno));
    close(fd);
    unlinkat(dfd, tmp, 0);
    return 1;
  }
  errno = 0;
  bad   = write(f, ctx);
  bad   = fflush(f) || bad;
  bad   = fsync(fileno(f)) || bad;
  bad   = fclose(f) || bad;
  if (bad) {
    snprintf(err, errlen, "cannot write %s/%s: %s", dir, tmp, errno ? strerror(errno) : "write error");
    unlinkat(dfd, tmp, 0);
  }
  return bad;
}

/*@ HsWriteFileAtomicAt - writes name in the directory open as dfd (named dir in messages) through write(f, ctx) into a
    new temporary file (HsWriteFileTempAt) that is renamed into place when complete (renameat): a reader sees the old
    file or the whole new one, and a symbolic link planted at the temporary name or at name is never followed (the
    rename replaces the link itself). bvp/ internal; one process. Returns 0, or 1 with a message in err. @*/
int HsWriteFileAtomicAt(int dfd, const char *dir, const char *name, int (*write)(FILE *, void *), void *ctx, char *err,
                        size_t errlen)
{
  char tmp[PETSC_MAX_PATH_LEN];

  if (HsWriteFileTempAt(dfd, dir, name, write, ctx, tmp, err, errlen))
    return 1;
  if (renameat(dfd, tmp, dfd, name)) {
    snprintf(err, errlen, "cannot write %s/%s: %s", dir, name, strerror(errno));
    unlinkat(dfd, tmp, 0);
    return 1;
  }
  return 0;
}

/*@ HsGnuplotString - in, made safe to stand between single quotes in a gnuplot script (bvp/ internal): a single
    quote becomes the typographic apostrophe U+2019 (gnuplot's own escape, a doubled quote, reads as an empty string
    where it starts the string), a control character (a newline would end the command) '?', and the characters of
    enhanced text (_ ^ @ & ~ { }: the name is a plot title) get a backslash, which a single-quoted string keeps and
    enhanced text reads as "this character itself" (pendulum_cartesian had lost its underscore to a subscript); cut to
    fit out (len bytes). No byte of the result can end the quoted string. Data never reaches a script otherwise
    (docs/reliability.md). Returns out. @*/
char *HsGnuplotString(const char *in, char *out, size_t len)
{
  size_t k = 0;

  for (const unsigned char *p = (const unsigned char *)in; *p && k + 4 < len; p++) {
    if (*p == '\'')
      out[k++] = (char)0xe2, out[k++] = (char)0x80, out[k++] = (char)0x99;
    else if (strchr("_^@&~{}", *p))
      out[k++] = '\\', out[k++] = (char)*p;
    else
      out[k++] = (char)(*p < 0x20 || *p == 0x7f ? '?' : *p);
  }
  out[len ? k : 0] = 0;
  return out;
}

/* Starts gnuplot SCRIPT (the executable exe) in the directory open as dfd, its output in gnuplot.log there; no shell.
 * posix_spawn, not fork: glibc's shares the parent's memory until exec (clone with CLONE_VM | CLONE_VFORK), so a large
 * solve's process can still start it where fork's copy of its page tables failed with ENOMEM (round 22: -hs_study 20).
 * The child enters the directory by its descriptor (fchdir: not its path, which may name another directory by now);
 * the parent's SIGTERM/SIGINT/... handlers, which only set a flag, are reset to the default in it. The log is opened
 * here without blocking and without following a link (a FIFO planted there would hold the run for ever), its first
 * line HS_GNUPLOT_LOG_HEAD (the next run knows the log as hamshoot's by it), and given to the child as its stdout and
 * stderr; every other descriptor of hamshoot's (the output directory's lock among them) is close-on-exec. 0 and the
 * child's pid, or an errno: -1 stands for a log that could not be made a regular file. */
static int SpawnGnuplot(int dfd, const char *exe, const char *script, const char *sfx, pid_t *pid)
{
  static const int           sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU, SIGPIPE};
  extern char              **environ;
  char                       var[32]; /* hs_tmp='.tmp.XXXXXX': the PNGs' temporaries (HS_GNUPLOT_PNG) */
  /* -d: no gnuplotrc, no ~/.gnuplot: HOME may be a shared directory (/tmp in some containers and batch jobs), where
     anyone could plant a .gnuplot whose `system` commands gnuplot would run as this user (round 28); the script sets
     all it needs */
  char *const                argv[] = {(char *)"gnuplot", (char *)"-d", (char *)"-e", var, (char *)script, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t          at;
  sigset_t                   def;
  struct stat                st;
  int                        fd, rc;

  snprintf(var, sizeof var, "hs_tmp='.tmp.%s'", sfx); /* sfx: letters and digits (RandomName) */
  fd = openat(dfd, "gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
      write(fd, HS_GNUPLOT_LOG_HEAD, strlen(HS_GNUPLOT_LOG_HEAD)) != (ssize_t)strlen(HS_GNUPLOT_LOG_HEAD)) {
    if (fd >= 0)
      close(fd);
    return -1;
  }
  sigemptyset(&def);
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaddset(&def, sigs[i]);
  if ((rc = posix_spawn_file_actions_init(&fa))) {
    close(fd);
    return rc;
  }
  if ((rc = posix_spawnattr_init(&at))) {
    posix_spawn_file_actions_destroy(&fa);
    close(fd);
    return rc;
  }
  if (!(rc = posix_spawn_file_actions_addfchdir_np(&fa, dfd)) && !(rc = posix_spawn_file_actions_adddup2(&fa, fd, 1)) &&
      !(rc = posix_spawn_file_actions_adddup2(&fa, fd, 2)) && !(rc = posix_spawnattr_setsigdefault(&at, &def)) &&
      !(rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF)))
    rc = posix_spawn(pid, exe, &fa, &at, argv, environ);
  posix_spawnattr_destroy(&at);
  posix_spawn_file_actions_destroy(&fa);
  close(fd);
  return rc;
}

/* The gnuplot executable: the first regular, executable file named gnuplot in PATH's absolute entries (a relative or
 * empty one, e.g. '.', would find a 'gnuplot' in the output directory, where the child runs; a directory named
 * gnuplot is skipped). PATH is walked whole, however long. 0 and its path in exe, or 1: none. */
static int FindGnuplot(char *exe, size_t len)
{
  const char *p = getenv("PATH");

  for (p = p ? p : "/usr/bin:/bin"; *p; p += *p == ':') {
    size_t      n = strcspn(p, ":");
    struct stat st;
    if (p[0] == '/' && snprintf(exe, len, "%.*s/gnuplot", (int)n, p) < (int)len && !stat(exe, &st) &&
        S_ISREG(st.st_mode) && !access(exe, X_OK))
      return 0;
    p += n;
  }
  return 1;
}

/* Before gnuplot writes name (a PNG, its log) in the directory open as dfd (dir in messages): whatever is there (the
 * last run's plot, or a symbolic or hard link, a FIFO planted there) is removed, so that gnuplot, which opens its
 * outputs by name, creates a new file instead of writing through a link to a file outside the output. 0, or 1 with err
 * (a directory there). */
static int ClearOutputName(int dfd, const char *dir, const char *name, char *err, size_t len)
{
  struct stat st;

  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
    return 0;
  if (S_ISDIR(st.st_mode) || unlinkat(dfd, name, 0)) {
    snprintf(err, len, "cannot plot: %s/%s is %s", dir, name,
             S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
    return 1;
  }
  return 0;
}

/* The temporary of the i-th of the PNGs, .NAME.tmp.SFX (HS_GNUPLOT_PNG's name for it), in name[PETSC_MAX_PATH_LEN];
 * 0, or 1 if it does not fit. */
static int PngTemp(const char *png, const char *sfx, char *name)
{
  return snprintf(name, PETSC_MAX_PATH_LEN, ".%s.tmp.%s", png, sfx) >= PETSC_MAX_PATH_LEN;
}

static void RemovePngTemps(int dfd, const char *const *pngs, int n, const char *sfx)
{
  char name[PETSC_MAX_PATH_LEN];

  for (int i = 0; i < n; i++)
    if (!PngTemp(pngs[i], sfx, name))
      unlinkat(dfd, name, 0);
}

/* Creates, empty, the temporary .NAME.tmp.SFX of each of the n PNGs, one random suffix SFX (sfx[7]) for all, each
 * O_CREAT | O_EXCL | O_NOFOLLOW: gnuplot, which opens its outputs by name, writes into files this run made under names
 * no one knew in advance, never through a link planted there, and a PNG appears under its own name only whole
 * (HsRunGnuplot renames it; a torn one, a full disk's, is never seen there). 0, or an errno (none created). */
static int CreatePngTemps(int dfd, const char *const *pngs, int n, char *sfx)
{
  char name[PETSC_MAX_PATH_LEN];

  for (int attempt = 0; attempt < 100; attempt++) {
    int i, fd, e = 0;
    strcpy(sfx, "XXXXXX");
    RandomName(sfx);
    for (i = 0; i < n && !e; i++) {
      if (PngTemp(pngs[i], sfx, name))
        e = ENAMETOOLONG;
      else if ((fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666)) < 0)
        e = errno;
      else
        close(fd);
    }
    if (!e)
      return 0;
    RemovePngTemps(dfd, pngs, i - 1, sfx); /* those made before the one that failed */
    if (e != EEXIST)
      return e;
  }
  return EEXIST;
}

/* 0 if the regular file name in dfd is a whole PNG, its signature first and its IEND chunk last, and is on the disk
 * (fsync), else 1 with its size in *size (-1: not a regular file). gnuplot's pngcairo exits 0 when the disk fills
 * under it, the PNG cut where the space ended (round 23: 8 KiB of study.png), or empty. */
static int PngWhole(int dfd, const char *name, long long *size)
{
  static const unsigned char head[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'},
                             end[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  unsigned char              h[8], e[12];
  struct stat                st;
  int                        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), bad = 1;

  *size = -1;
  if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode)) {
    *size = (long long)st.st_size;
    bad   = st.st_size < 20 || pread(fd, h, 8, 0) != 8 || pread(fd, e, 12, st.st_size - 12) != 12 ||
          memcmp(h, head, 8) || memcmp(e, end, 12) || fsync(fd);
  }
  if (fd >= 0)
    close(fd);
  return bad;
}

/* After gnuplot ended well: each PNG's temporary, if whole (PngWhole), renamed to its name; 0, or 1 with err (the
 * first one that is not whole, or cannot be renamed; the temporaries left are the caller's to remove). */
static int PlacePngs(int dfd, const char *dir, const char *const *pngs, int n, const char *sfx, char *err, size_t len)
{
  char      name[PETSC_MAX_PATH_LEN];
  long long size;

  for (int i = 0; i < n; i++) {
    PngTemp(pngs[i], sfx, name); /* it fitted in CreatePngTemps */
    if (PngWhole(dfd, name, &size)) {
      if (size <= 0)
        snprintf(err, len, "gnuplot wrote no %s/%s (%s/gnuplot.log)", dir, pngs[i], dir);
      else
        snprintf(err, len, "gnuplot's %s/%s came out cut short (%lld bytes, not a whole PNG: a full disk?)", dir,
                 pngs[i], size);
      return 1;
    }
    if (renameat(dfd, name, dfd, pngs[i])) {
      snprintf(err, len, "cannot write %s/%s: %s", dir, pngs[i], strerror(errno));
      return 1;
    }
  }
  return 0;
}

static volatile sig_atomic_t hs_gnuplot_pid = 0; /* while HsRunGnuplot waits for it */

int HsGnuplotPid(void) { return (int)hs_gnuplot_pid; }

/* Waits for gnuplot (pid) to end, *status its status; 0, or -1 with errno. While it runs, stop (if not NULL) is asked
   every 50 ms whether hamshoot was interrupted (SIGTERM, ...): then gnuplot gets SIGTERM (its handlers are the
   defaults) and is waited for. The handlers restart waitpid (SA_RESTART), so a blocking wait had let a scheduler's
   SIGTERM wait until gnuplot ended on its own, for ever where it hangs (issue 38, round 23). */
static int WaitGnuplot(pid_t pid, int (*stop)(void), int *status)
{
  const struct timespec tick = {0, 50000000};
  int                   sent = 0;
  pid_t                 r;

  while ((r = waitpid(pid, status, stop && !sent ? WNOHANG : 0)) <= 0) {
    if (r < 0 && errno != EINTR)
      return -1;
    if (r == 0 && stop()) {
      kill(pid, SIGTERM);
      sent = 1;
    } else if (r == 0)
      nanosleep(&tick, NULL);
  }
  return 0;
}

/* Starts gnuplot on script in the directory open as dfd, the PNGs' temporaries named by sfx, and waits for it (stop:
 * HsRunGnuplot's); 0 if it ended with exit status 0, else 1 with the reason in err. */
static int RunGnuplotScript(int dfd, const char *dir, const char *script, const char *sfx, int (*stop)(void), char *err,
                            size_t len)
{
  pid_t pid;
  int   status, rc = 0;
  char  exe[PETSC_MAX_PATH_LEN];

  fflush(NULL); /* nothing of hamshoot's half-written before gnuplot's output */
  /* posix_spawn reports a failed exec itself (and reaps that child): ENOENT, not an exit status 127 */
  if (FindGnuplot(exe, sizeof exe) || (rc = SpawnGnuplot(dfd, exe, script, sfx, &pid)) == ENOENT) {
    snprintf(err, len, "gnuplot is not installed (Debian: gnuplot-nox); the script %s/%s is written", dir, script);
    return 1;
  } else if (rc == -1) {
    snprintf(err, len, "cannot run gnuplot in %s (its log gnuplot.log could not be created there as a regular file)",
             dir);
    return 1;
  } else if (rc) {
    snprintf(err, len, "cannot run gnuplot %s: %s", exe, strerror(rc));
    return 1;
  }
  hs_gnuplot_pid = (sig_atomic_t)pid; /* the watchdog, should it end the run now, kills gnuplot first */
  if (WaitGnuplot(pid, stop, &status)) {
    hs_gnuplot_pid = 0;
    snprintf(err, len, "cannot run gnuplot: %s", strerror(errno));
    return 1;
  }
  hs_gnuplot_pid = 0;
  if (stop && stop() && WIFSIGNALED(status)) {
    snprintf(err, len, "gnuplot was stopped, as hamshoot was interrupted (a signal); the script %s/%s is written", dir,
             script);
    return 1;
  }
  if (WIFSIGNALED(status) || WEXITSTATUS(status)) {
    snprintf(err, len, "gnuplot %s %d on %s/%s (its messages: %s/gnuplot.log)",
             WIFSIGNALED(status) ? "was stopped by signal" : "failed with exit status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), dir, script, dir);
    return 1;
  }
  return 0;
}

/*@ HsRunGnuplot - runs gnuplot on script (a file name in the directory open as dfd, named dir in messages) in that
    directory, its output in gnuplot.log there (bvp/ internal; rank 0: -hs_compare, -hs_study): posix_spawn of the
    gnuplot that PATH's absolute entries name, no shell, so that nothing of the data or of dir is ever read as a command
    or run as gnuplot; the child enters the directory by its descriptor (fchdir), never by its path. gnuplot writes each
    of the n PNGs into a temporary this run made (`gnuplot -e "hs_tmp='.tmp.SFX'"`, which the script's HS_GNUPLOT_PNG
    reads), renamed to the PNG's name once whole: a PNG under its own name is never torn (a full disk, gnuplot killed
    with the job) and never a stale one of an earlier run (removed first). Returns 0 if gnuplot ran and every PNG is
    whole, else 1 with the reason in err: gnuplot not installed, stopped by a signal, its exit status (and its log), or
    a PNG missing or cut short; no temporary is left. stop (may be NULL): whether hamshoot was interrupted, asked while
    gnuplot runs; then gnuplot is stopped (WaitGnuplot). @*/
int HsRunGnuplot(int dfd, const char *dir, const char *script, const char *const *pngs, int n, int (*stop)(void),
                 char *err, size_t len)
{
  char sfx[8];
  int  e, bad;

  if (!script[0] || strchr(script, '/') || script[0] == '-') {
    snprintf(err, len, "gnuplot: '%s' is not a script name", script);
    return 1;
  }
  if (ClearOutputName(dfd, dir, "gnuplot.log", err, len))
    return 1;
  for (int i = 0; i < n; i++)
    if (ClearOutputName(dfd, dir, pngs[i], err, len))
      return 1;
  if ((e = CreatePngTemps(dfd, pngs, n, sfx))) {
    snprintf(err, len, "cannot plot: cannot create a temporary PNG in %s: %s", dir, strerror(e));
    return 1;
  }
  bad = RunGnuplotScript(dfd, dir, script, sfx, stop, err, len) || PlacePngs(dfd, dir, pngs, n, sfx, err, len);
  RemovePngTemps(dfd, pngs, n, sfx); /* those not renamed */
  return bad;
}

/*@ HsLockedDirectoryReplaced - 1 if dir is the path HsLockDirectory locked and now names something else (the locked
    directory moved away and a link or another directory put at its path during the run; the eighth security review),
    else 0. The output goes through the held descriptor in any case (HsDirOpen); the main output is not written then,
    as the user's path no longer shows it. Not collective. @*/
int HsLockedDirectoryReplaced(const char *dir)
{
  struct stat st;
  if (!hs_locked.held || strcmp(dir, hs_locked.path))
    return 0;
  return lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_dev != hs_locked.dev || st.st_ino != hs_locked.ino;
}

#define HS_LOCK_RETRY_MS 100 /* LockExclusive: 1 ms waits at most */

/* flock(fd, LOCK_EX | LOCK_NB), tried again for up to HS_LOCK_RETRY_MS while it is refused: another run's probe
 * (HsDirectoryInUse: a shared lock, held for microseconds while that run checks its own directory's ancestors)
 * would otherwise read as a run holding this directory. */
static int LockExclusive(int fd)
{
  for (int t = 0;; t++) {
    struct timespec ms = {0, 1000000};
    if (!flock(fd, LOCK_EX | LOCK_NB))
      return 0;
    if (errno != EWOULDBLOCK || t >= HS_LOCK_RETRY_MS)
      return -1;
    nanosleep(&ms, NULL);
  }
}

/*@ HsLockDirectory - creates dir (mkdir -p), opens it (O_DIRECTORY | O_NOFOLLOW: the directory itself, not a link
    there) and takes an exclusive lock on it for the rest of the process (flock on the directory itself: no lock file is
    left behind, and the lock ends with the process, however it ends); the descriptor stays open, and every later write
    of the output is made through it (HsDirOpen). Then checks that a file can be created there (a unique name, removed
    at once). bvp/ internal; one process. Returns 0, or 1 with a message in err: another process holds the lock (another
    hamshoot writing to the same directory), dir is a symbolic link, or dir cannot be created, opened or written. @*/
int HsLockDirectory(const char *dir, char *err, size_t len)
{
  char        probe[64] = ".hamshoot-probe.XXXXXX";
  int         fd, e = MakeDirs(dir);
  struct stat st, at;

  if (e) {
    snprintf(err, len, "cannot create output directory '%s': %s", dir, strerror(e));
    return 1;
  }
  if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
    e = errno;
    if ((e == ELOOP || e == ENOTDIR) && !lstat(dir, &at) && S_ISLNK(at.st_mode)) /* O_DIRECTORY | O_NOFOLLOW: ENOTDIR */
      snprintf(err, len,
               "output directory '%s' is a symbolic link: give the directory itself (hamshoot writes only "
               "into the directory it has opened and locked, never through a link)",
               dir);
    else
      snprintf(err, len, "cannot open output directory '%s': %s", dir, strerror(e));
    return 1;
  }
  if (LockExclusive(fd)) {
    e = errno;
    close(fd);
    if (e == EWOULDBLOCK)
      snprintf(err, len, "output directory '%s' is in use by another hamshoot run (it holds a lock on it): wait for "
                         "that run to end, or give another -o", dir);
    else
      snprintf(err, len, "cannot lock output directory '%s': %s", dir, strerror(e));
    return 1;
  }
  if (fstat(fd, &st) || lstat(dir, &at) || st.st_dev != at.st_dev || st.st_ino != at.st_ino) { /* the path still
        names the locked directory: not one swapped in between the open and the lock */
    close(fd);
    snprintf(err, len, "output directory '%s' was replaced while it was being locked", dir);
    return 1;
  }
  /* fd stays open (and the lock held) until the process ends */
  hs_locked.held = 1, hs_locked.fd = fd, hs_locked.dev = st.st_dev, hs_locked.ino = st.st_ino;
  snprintf(hs_locked.path, sizeof hs_locked.path, "%s", dir);
  if ((e = HsCreateUniqueAt(fd, probe, 0)) < 0) {
    snprintf(err, len, "cannot write in output directory '%s': %s", dir, strerror(errno));
    return 1;
  }
  close(e);
  unlinkat(fd, probe, 0);
  return 0;
}

/*@ HsCheckSubdir - whether dir/name, a directory hamshoot makes inside its output (the sides of -hs_compare), is
    absent or a directory of its own: a symbolic link there (to a directory outside the output), a file, or a directory
    that another running hamshoot holds as its output (started before this run locked dir) is refused,
    so that nothing is written through it (bvp/ internal; one process). Looked at through the locked directory's
    descriptor where dir is it (HsDirOpen). Returns 0, or 1 with a message in err. @*/
int HsCheckSubdir(const char *dir, const char *name, char *err, size_t len)
{
  char        path[PETSC_MAX_PATH_LEN];
  struct stat st;
  int         dfd, r;

  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (HsDirOpen(dir, 0, &dfd, err, len)) /* no such directory (yet): nothing there */
    r = lstat(path, &st);
  else {
    int e;
    r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
    e = errno, close(dfd), errno = e;
  }
  if (!r && S_ISDIR(st.st_mode) && HsDirectoryInUse(path)) { /* another run's -o: both would write the same files */
    snprintf(err, len,
             "%s is in use by another hamshoot run (its output directory, locked): wait for that run to end, "
             "or give another -o",
             path);
    return 1;
  }
  if (r ? errno == ENOENT : S_ISDIR(st.st_mode))
    return 0;
  snprintf(err, len, "%s is %s: refusing to write into it (remove it, or give another -o)", path,
           r                     ? strerror(errno)
           : S_ISLNK(st.st_mode) ? "a symbolic link"
                                 : "not a directory");
  return 1;
}

/*@ HsDirectoryInUse - whether another process holds the lock of HsLockDirectory on dir (an existing directory;
    bvp/ internal; one process). The probe takes and drops a shared lock at once: it fails only against an exclusive
    one (a run's output directory), never against another run's probe (an exclusive probe had made two runs that
    checked a common ancestor, /tmp, at the same instant see each other as holding it: a CI test failed so); never
    call it on a directory this process has locked itself (flock's locks belong to an open file, so that would read
    as in use). @*/
int HsDirectoryInUse(const char *dir)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), busy = 0;

  if (fd < 0)
    return 0;
  if (flock(fd, LOCK_SH | LOCK_NB))
    busy = errno == EWOULDBLOCK;
  else
    flock(fd, LOCK_UN);
  close(fd);
  return busy;
}

/*@ HsPrintable - s with each terminal control and invisible character replaced by '?' (each of its bytes), in place;
    returns s: bytes below 0x20 and 0x7f, the C1 controls U+0080..U+009F (UTF-8 C2 80..C2 9F, of which C2 9B is an
    escape sequence's CSI), a byte that starts no well-formed UTF-8 sequence (an 8-bit C1 control, 0x9B CSI; an overlong
    form such as C0 9B, ESC; a surrogate; Latin-1 text: HsTextUtf8Length), the characters that show nothing (Unicode's
    Default_Ignorable_Code_Point set, the format characters, U+2028, U+2029: the text-direction overrides and isolates
    U+202A..U+202E, U+2066..U+2069, the zero-width characters, variation selectors, ...) (HsTextControl). For a string read from a file or given
    on the command line that a message shows (a problem name, a column name, an option's value, every error message):
    an escape sequence in it would otherwise reach the terminal (retitle it, clear it, print a fake line). bvp/
    internal. @*/
char *HsPrintable(char *s)
{
  for (char *p = s; *p;) {
    int n;
    if (HsTextControl(p, &n))
      memset(p, '?', (size_t)n);
    p += n;
  }
  return s;
}

/*@ HsJsonString - writes v as a JSON string (bvp/ internal): quotes, backslashes and control characters escaped,
    bytes that are not well-formed UTF-8 (HsTextUtf8Length: also overlong forms, surrogates) replaced by U+FFFD, so that any problem name, argument or message gives valid JSON. @*/
void HsJsonString(FILE *f, const char *v)
{
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)v; *p;) {
    int n = HsTextUtf8Length((const char *)p); /* well-formed only: an overlong ESC (C0 9B) had gone out as is */
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else if (n)
      fwrite(p, 1, (size_t)n, f);
    else
      fputs("\\ufffd", f);
    p += n ? n : 1;
  }
  fputc('"', f);
}
