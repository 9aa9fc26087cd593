/* hamshoot: checks of the options database, so that no mistake on the command line is accepted
 * silently and no option can make the MPI ranks disagree (docs/reliability.md):
 *
 *   HsOptionsCheckConsistent  every rank holds the same options (an MPMD launch "A : B" with
 *                             different options, a per-node rc file) or all ranks fail together
 *   HsOptionsCheckUsed        every option of hamshoot's own (-hs_*, -p_*, -N, -o, -problem,
 *                             -quiet) was read by some object (a typo such as -hs_bvp_typ is an
 *                             error) and has a value unless it is a switch (-N with nothing after
 *                             it is an error, not "the default")
 *   HsOptionsInt, HsOptionsReal
 *                             strict numbers: "1.5" for an integer, "2^32 + 20" (wrapped by a
 *                             32-bit PetscInt), "nan", a value outside the key's range, each an
 *                             error naming the key
 *
 * PETSc's own keys (-snes_*, -ksp_*, ...) are PETSc's: -options_left lists the unused ones.
 */
#include "hssys.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* FNV-1a: a 64-bit fingerprint of a string. */
static uint64_t Fingerprint(const char *s)
{
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/*@ HsOptionsCheckConsistent - every rank of comm holds the same options database (bvp/ internal;
    the driver calls it before anything reads an option).

  Collective. An error on every rank, naming the first rank whose options differ from rank 0's,
  if they do not (e.g. mpirun -n 1 hamshoot -problem a.ocp : -n 1 hamshoot -problem b.ocp).
@*/
PetscErrorCode HsOptionsCheckConsistent(MPI_Comm comm)
{
  char              *all;
  unsigned long long mine, *each;
  PetscMPIInt        size, bad = -1;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscOptionsGetAll(NULL, &all));
  mine = (unsigned long long)Fingerprint(all);
  PetscCall(PetscFree(all));
  PetscCall(PetscMalloc1(size, &each));
  PetscCallMPI(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, each, 1, MPI_UNSIGNED_LONG_LONG, comm));
  for (PetscMPIInt r = size - 1; r > 0; r--)
    if (each[r] != each[0])
      bad = r;
  PetscCall(PetscFree(each));
  PetscCheck(bad < 0, comm, PETSC_ERR_ARG_INCOMP,
             "MPI rank %d was started with other options than rank 0 (an MPMD launch 'A : B' or a per-node "
             "options file?): every rank must get the same options",
             (int)bad);
  PetscFunctionReturn(0);
}

/* Whether key (without '-' and prefix) is in hamshoot's namespace, and whether it is a switch. */
static PetscBool Ours(const char *key, PetscBool *is_switch)
{
  static const char *const switches[] = {
      "quiet",       "hs_monitor",        "hs_compare",  "hs_extrapolate", "hs_continue_monitor",
      "hs_shoot_mf", "hs_check_boundary", "hs_in_place", "help",           "hs_extrapolate_romberg",
      NULL};
  *is_switch = PETSC_FALSE;
  for (int i = 0; switches[i]; i++)
    if (!strcmp(key, switches[i]) || (!strncmp(key, "hs_direct_", 10) && !strcmp(key + 10, switches[i])))
      *is_switch = PETSC_TRUE;
  return (PetscBool)(!strncmp(key, "hs_", 3) || !strncmp(key, "p_", 2) || !strcmp(key, "N") || !strcmp(key, "o") ||
                     !strcmp(key, "problem") || !strcmp(key, "quiet"));
}

/* Whether key (without '-'), in hamshoot's namespace by its prefix, is a PETSc object's key under it: a driver's
 * sub-solver's -hs_grid_snes_atol, -hs_init_ksp_rtol, -hs_direct_pc_... (an "_snes_", "_ksp_", "_pc_" or "_mat_" not
 * preceded by "hs", which hamshoot's own -hs_snes_noise and -hs_direct_hs_snes_roundoff are). Its value is read by
 * PETSc, which takes NaN (the reviewer of round 22: only the unprefixed keys had been checked). */
static PetscBool PetscKeyInOurs(const char *key)
{
  static const char *const objs[] = {"_snes_", "_ksp_", "_pc_", "_mat_"};

  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
    for (const char *p = strstr(key, objs[i]); p; p = strstr(p + 1, objs[i]))
      if (p - key < 2 || strncmp(p - 2, "hs", 2))
        return PETSC_TRUE;
  return PETSC_FALSE;
}

/* A value token of PetscOptionsGetAll's "-a 1 -b -c x": not a key ("-" then a letter or '_'). */
static PetscBool IsValue(const char *tok)
{
  return (PetscBool)(tok && !(tok[0] == '-' && (isalpha((unsigned char)tok[1]) || tok[1] == '_')));
}

/* Whether key begins with one of the comma-separated prefixes in defer. */
static PetscBool Deferred(const char *key, const char *defer)
{
  for (const char *d = defer; d && *d;) {
    size_t n = strcspn(d, ",");
    if (n && !strncmp(key, d, n))
      return PETSC_TRUE;
    d += n + (d[n] == ',');
  }
  return PETSC_FALSE;
}

/* One pass over the database: the first of hamshoot's own keys that is unused (use: also that
 * test; not for keys under a deferred prefix) or lacks a value (not a switch), in bad; *why 1 or 2. */
static PetscErrorCode FindBadKey(const char prefix[], const char defer[], PetscBool use, char *bad, size_t len,
                                 int *why)
{
  char  *all, *save = NULL, *tok, *next;
  size_t plen = prefix ? strlen(prefix) : 0;

  PetscFunctionBeginUser;
  *why = 0;
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok && !*why; tok = next) {
    const char *key  = tok + 1;
    PetscBool   used = PETSC_TRUE, sw;
    next             = strtok_r(NULL, " ", &save);
    if (IsValue(tok) || (plen && strncmp(key, prefix, plen)))
      continue;
    key += plen;
    if (!Ours(key, &sw))
      continue;
    if (use)
      PetscCall(PetscOptionsUsed(NULL, tok + 1, &used)); /* the database keeps names without the dash */
    if (!used && !Deferred(key, defer))
      *why = 1;
    else if (!sw && !IsValue(next))
      *why = 2;
    if (*why)
      PetscCall(PetscStrncpy(bad, tok, len));
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Whether s holds a character that HsPrintable replaces (a control character), a tab aside (white space around a
 * number is allowed, and a tab moves no cursor but to the next stop). */
static PetscBool HasControl(const char *s)
{
  char     *c = strdup(s);
  PetscBool has;

  if (!c)
    return PETSC_FALSE;
  for (char *t = c; *t; t++)
    *t = *t == '\t' ? ' ' : *t;
  HsPrintable(c);
  has = PETSC_FALSE;
  for (size_t i = 0; s[i]; i++)
    has = (PetscBool)(has || (s[i] != c[i] && s[i] != '\t'));
  free(c);
  return has;
}

/* Whether the value tok is a hexadecimal number that strtod reads whole (0x10, -0x1p3, 0x1.8P+1): PETSc's parsers read
 * one in its own real and integer keys, as hamshoot's never do (HsParseReal). */
static PetscBool IsHex(const char *tok)
{
  const char *t = tok + (tok[0] == '-' || tok[0] == '+');
  char       *end;

  if (t[0] != '0' || (t[1] != 'x' && t[1] != 'X'))
    return PETSC_FALSE;
  (void)strtod(tok, &end);
  return (PetscBool)(end != tok && !*end);
}

/* The first key of the command line (PETSc keeps argv) or of the options database (PETSC_OPTIONS too) whose name or
 * value holds a control character, shown with HsPrintable, into bad (else ""). The command line is looked at as given:
 * PETSc cuts a value at a newline ("-hs_init 'f<newline>x'" had been read as f). */
static PetscErrorCode FindControl(char *bad, size_t len)
{
  int    argc;
  char **argv, *all, *tok, *save = NULL, *key = NULL;

  PetscFunctionBeginUser;
  bad[0] = 0;
  PetscCall(PetscGetArgs(&argc, &argv));
  for (int i = 1; i < argc && !bad[0]; i++)
    if (HasControl(argv[i]))
      snprintf(bad, len, "%s", argv[i][0] == '-' || i == 1 ? argv[i] : argv[i - 1]);
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok && !bad[0]; tok = strtok_r(NULL, " ", &save)) {
    key = IsValue(tok) ? key : tok;
    if (HasControl(tok))
      snprintf(bad, len, "%s", key ? key : tok);
  }
  PetscCall(PetscFree(all));
  HsPrintable(bad);
  PetscFunctionReturn(0);
}

/* Whether e (len characters) is a whole decimal number ([+-] and digits, blanks around allowed: HsParseInt) within
 * PetscInt's range. */
static PetscBool WholeNumber(const char *e, size_t len)
{
  char      buf[64];
  long long v;

  if (len >= sizeof buf)
    return PETSC_FALSE;
  memcpy(buf, e, len), buf[len] = 0;
  return (PetscBool)!HsParseInt(buf, PETSC_MIN_INT, PETSC_MAX_INT, &v);
}

/* The integer keys PETSc's parser reads (PetscOptionsInt takes 4294967297 as 1, modulo 2^32, and -5 as a count), by the
 * end of their name (any prefix: -hs_grid_snes_max_it), with their least value: hamshoot's own (the PCs'
 * -pc_hsband_refine, -pc_hsdrop_regrow and -pc_hsslab_ordering (round 18: 4294967298 had been ordering 2),
 * -hs_inject_error; their ranges checked where read) and PETSc's that
 * hamshoot sets or relies on (round 18: -snes_max_it 4294967297 had been read as 1, -snes_max_it -1 ended with PETSc's
 * "Internal error, solver returned without setting converged reason"). */
static const struct {
  const char *end;
  long long   min;
} hs_int_keys[] = {
    {"pc_hsband_refine", PETSC_MIN_INT},
    {"pc_hsdrop_regrow", PETSC_MIN_INT},
    {"pc_hsslab_ordering", PETSC_MIN_INT},
    {"-hs_inject_error", PETSC_MIN_INT},
    {"snes_max_it", 0},
    {"snes_max_funcs", -1}, /* -1: no limit */
    {"snes_max_fail", 0},
    {"snes_max_linear_solve_fail", 0},
    {"snes_lag_jacobian", -2}, /* -2: at the next iteration only, -1: never again */
    {"snes_lag_preconditioner", -2},
    {"snes_linesearch_max_it", 0},
    {"snes_grid_sequence", 0},
    {"ksp_max_it", 0},
    {"ksp_gmres_restart", 1},
    {"pc_factor_levels", 0},
};

/* Whether key (any prefix) is an integer key of hs_int_keys (or -mat_mumps_icntl_K); *min its least value. */
static PetscBool IntKey(const char *key, long long *min)
{
  size_t kl = strlen(key);

  *min = PETSC_MIN_INT;
  if (strstr(key, "mat_mumps_icntl_")) /* MUMPS' integer controls: any int */
    return PETSC_TRUE;
  for (size_t i = 0; i < sizeof hs_int_keys / sizeof hs_int_keys[0]; i++) {
    size_t el = strlen(hs_int_keys[i].end);
    if (kl >= el && !strcmp(key + kl - el, hs_int_keys[i].end) &&
        (kl == el || key[kl - el - 1] == '_' || key[kl - el - 1] == '-' || hs_int_keys[i].end[0] == '-')) {
      *min = hs_int_keys[i].min;
      return PETSC_TRUE;
    }
  }
  return PETSC_FALSE;
}

/* The logical and real keys of hamshoot's PCs and line search (any prefix; round 19: PETSc's parser had refused
 * "-hsdrop_pc_hsslab_fallback maybe" with "Unknown logical value: maybe" and "-pc_hsdrop_tol abc" with "Input string
 * abc has no numeric value", naming no option, and taken "-snes_linesearch_alpha nan"). */
static const char *const hs_bool_keys[] = {
    "pc_hsband_reverse_last", "pc_hsband_defer", "pc_hsband_avx2",     "pc_hsband_border",
    "pc_hsband_fallback",     "pc_hsdrop_match", "pc_hsslab_fallback", NULL};
static const char *const hs_real_keys[] = {"pc_hsband_spike_threshold", "pc_hsdrop_tol", "snes_linesearch_alpha",
                                           /* and the line search's other reals (round 22: -snes_linesearch_damping nan
                                              had hsbt halve NaN for ever, a SIGTERM not ending it) */
                                           "snes_linesearch_damping", "snes_linesearch_maxstep",
                                           "snes_linesearch_minlambda", "snes_linesearch_rtol", "snes_linesearch_atol",
                                           "snes_linesearch_ltol", NULL};

/* Whether tok is a NaN as strtod reads it (nan, -NaN, nan(0x1), ...): no PETSc key takes one (round 22: -snes_atol
   nan, -ksp_rtol nan had been taken, PETSc's checks of a tolerance false for NaN). */
static PetscBool NaNWord(const char *tok)
{
  tok += *tok == '-' || *tok == '+';
  return (PetscBool)(!strncasecmp(tok, "nan", 3) && (!tok[3] || tok[3] == '('));
}

/* Whether key ends in one of the names of list (NULL-terminated) after a '_' or '-' (any prefix). */
static PetscBool KeyIn(const char *key, const char *const *list)
{
  size_t kl = strlen(key);

  for (; *list; list++) {
    size_t el = strlen(*list);
    if (kl > el && !strcmp(key + kl - el, *list) && (key[kl - el - 1] == '_' || key[kl - el - 1] == '-'))
      return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

/* Whether tok is a logical value PETSc reads (true, false, yes, no, on, off, 1, 0; any case). */
static PetscBool BoolWord(const char *tok)
{
  static const char *const w[] = {"true", "false", "yes", "no", "on", "off", "1", "0"};

  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    if (!strcasecmp(tok, w[i]))
      return PETSC_TRUE;
  return PETSC_FALSE;
}

/* The first option of the database whose value is a hexadecimal number (IsHex), "KEY VALUE" into bad (else ""), or
 * of an integer key of hamshoot's (IntKey) that is no whole number in range, "KEY VALUE is not a whole number ...", or
 * of a logical or real key of hamshoot's PCs (hs_bool_keys, hs_real_keys) whose value is none ("KEY VALUE is not ...").
 */
static PetscErrorCode FindHex(char *bad, size_t len)
{
  char     *all, *tok, *save = NULL, *key = NULL;
  PetscBool sw;
  long long min;
  double    v;

  PetscFunctionBeginUser;
  bad[0] = 0;
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok && !bad[0]; tok = strtok_r(NULL, " ", &save)) {
    if (!IsValue(tok))
      key = tok;
    else if (key && IsHex(tok) && !Ours(key + 1, &sw)) /* hamshoot's keys: their own parsers name the value */
      snprintf(bad, len, "%s %s", key, tok);
    else if (key && NaNWord(tok) && (!Ours(key + 1, &sw) || PetscKeyInOurs(key + 1)))
      snprintf(bad, len, "%s %s is not a number", key, tok);
    else if (key && IntKey(key, &min) && (!WholeNumber(tok, strlen(tok)) || strtoll(tok, NULL, 10) < min)) {
      if (min == PETSC_MIN_INT) /* PETSc would read 4294967297 as 1 */
        snprintf(bad, len, "%s %s is not a whole number within %d-bit integers", key, tok, (int)(8 * sizeof(PetscInt)));
      else
        snprintf(bad, len, "%s %s is not a whole number in [%lld, %lld]", key, tok, min, (long long)PETSC_MAX_INT);
    } else if (key && KeyIn(key, hs_bool_keys) && !BoolWord(tok))
      snprintf(bad, len, "%s %s is not a logical value (true, false, yes, no, on, off, 1, 0)", key, tok);
    else if (key && KeyIn(key, hs_real_keys) && HsParseReal(tok, &v))
      snprintf(bad, len, "%s %s is not a finite decimal number", key, tok);
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Whether e (len characters, blanks around allowed) is a number of an option: a decimal number (HsParseReal) or an
 * integer range a-b[:c] of PETSc's integer lists. */
static PetscBool NumberEntry(const char *e, size_t len)
{
  char   buf[256];
  double v;
  size_t a, b;

  if (!len || len >= sizeof buf)
    return PETSC_FALSE;
  memcpy(buf, e, len), buf[len] = 0;
  if (!HsParseReal(buf, &v))
    return PETSC_TRUE;
  a = strspn(buf, " \t"), a += buf[a] == '-' || buf[a] == '+', a += strcspn(buf + a, "-");
  b = a + strcspn(buf + a, ":");
  return (PetscBool)(buf[a] && WholeNumber(buf, a) && WholeNumber(buf + a + 1, b - a - 1) &&
                     (!buf[b] || WholeNumber(buf + b + 1, strlen(buf + b + 1))));
}

/* Blanks around the numbers of key's value (a number, or a comma-separated list of them) are removed in the database:
 * one rule for every number of every option, the one of round 13 (blanks around a number are allowed, as hamshoot's
 * own parsers HsParseReal and HsParseInt take them), also where PETSc parses the value itself (its integer and real
 * keys, the lists -hs_shoot_knots, -hs_continue_steps, -hs_continue_from): PETSc's strtol and strtod had taken blanks
 * before a number and refused them after it ("Input string 5  has no integer value", naming no key), and
 * -hs_checkpoint_every had refused what -N took (issue 38, round 22). A value that is not all numbers is left as it
 * is. Not collective (every rank holds the same options). */
static PetscErrorCode TrimNumbers(PetscOptions options, const char prefix[], const char key[])
{
  const char *val = NULL;
  char       *out; /* as long as the value (a list of any length: a fixed 256 bytes had left longer ones untrimmed) */
  size_t      n = 0;
  PetscBool   flg, nums = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsFindPair(options, prefix, key, &val, &flg));
  if (!flg || !val || !val[strcspn(val, " \t")])
    PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(strlen(val) + 1, &out));
  for (const char *e = val;; e += strcspn(e, ",") + 1) {
    size_t len = strcspn(e, ","), a = strspn(e, " \t"), z = len;
    if (!(nums = NumberEntry(e, len)))
      break;
    while (z > a && (e[z - 1] == ' ' || e[z - 1] == '\t'))
      z--;
    memcpy(out + n, e + a, z - a), n += z - a, out[n++] = ',';
    if (!e[len])
      break;
  }
  if (nums) {
    out[n - 1] = 0;
    if (prefix && prefix[0]) { /* PetscOptionsSetValue takes the whole name */
      char name[512];
      PetscCall(PetscSNPrintf(name, sizeof name, "-%s%s", prefix, key + 1));
      PetscCall(PetscOptionsSetValue(options, name, out));
    } else
      PetscCall(PetscOptionsSetValue(options, key, out));
  }
  PetscCall(PetscFree(out));
  PetscFunctionReturn(0);
}

/* TrimNumbers on every key whose value PETSc parses: PETSc's own (outside hamshoot's namespace, or under one of its
 * prefixes: -hs_grid_snes_max_it) and hamshoot's lists that PETSc's array readers read (and -hs_inject_error, read by
 * PetscOptionsGetInt). hamshoot's other keys are read by its own parsers, which take the blanks; and a name (-o ' 5')
 * is never touched. */
static PetscErrorCode TrimAllNumbers(void)
{
  static const char *const lists[] = {"hs_shoot_knots", "hs_continue_steps", "hs_continue_from", "hs_inject_error",
                                      NULL};
  char                    *all, *tok, *save = NULL;
  PetscBool                sw;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
    if (!IsValue(tok) && (!Ours(tok + 1, &sw) || PetscKeyInOurs(tok + 1) || KeyIn(tok, lists)))
      PetscCall(TrimNumbers(NULL, NULL, tok));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Whether value is val, or one of the comma-separated elements of val (PETSc's array readers parse each). */
static PetscBool ValueOrElement(const char *val, const char *value)
{
  size_t n = strlen(value);

  for (const char *e = val; e; e = strchr(e, ',') ? strchr(e, ',') + 1 : NULL)
    if (!strncmp(e, value, n) && (!e[n] || e[n] == ','))
      return PETSC_TRUE;
  return PETSC_FALSE;
}

/* PETSc's real tolerances (any prefix: -hs_grid_snes_atol too), which it reads only where the chosen type reads them
 * (-ksp_rtol not under -ksp_type preonly) and takes without a value as not given: checked before the solve
 * (FindNumberKey). */
static const char *const hs_tol_keys[] = {"snes_atol",  "snes_rtol", "snes_stol", "snes_divergence_tolerance",
                                          "snes_trtol", "ksp_atol",  "ksp_rtol",  "ksp_divtol",
                                          NULL};

/* The first of PETSc's number keys (hs_tol_keys, IntKey's but -hs_inject_error, -mat_mumps_cntl_K) without a value,
 * into bad with *why 1, or of the tolerances with a value PETSc's PetscOptionsStringToReal would refuse, with *why 2
 * and that value in val (round 29, the left items of round 28: -snes_atol '' had been taken as not given, the default
 * standing without a word; -ksp_rtol abc under the default preonly, never read, was never refused). */
static PetscErrorCode FindNumberKey(char *bad, size_t len, char *val, size_t vlen, int *why)
{
  char       *all, *tok, *save = NULL;
  const char *v;
  PetscBool   flg, sw;
  long long   min;

  PetscFunctionBeginUser;
  *why = 0;
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok && !*why; tok = strtok_r(NULL, " ", &save)) {
    PetscBool tol = KeyIn(tok, hs_tol_keys) || strstr(tok, "mat_mumps_cntl_");
    if (IsValue(tok) || (Ours(tok + 1, &sw) && !PetscKeyInOurs(tok + 1)) || !(tol || IntKey(tok + 1, &min)))
      continue;
    PetscCall(PetscOptionsFindPair(NULL, NULL, tok, &v, &flg));
    if (!flg)
      continue;
    if (!v || !v[0])
      *why = 1;
    else if (tol && strcasecmp(v, "PETSC_DEFAULT") && strcasecmp(v, "DEFAULT") && strcasecmp(v, "PETSC_DECIDE") &&
             strcasecmp(v, "DECIDE")) {
      char *end;
      (void)strtod(v, &end);
      if (*end || end == v) {
        *why = 2;
        PetscCall(PetscStrncpy(val, v, vlen));
      }
    }
    if (*why)
      PetscCall(PetscStrncpy(bad, tok, len));
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/*@ HsOptionsNameValueError - rewrites msg, PETSc's own message for a value it could not read as a number or a logical
    ("Input string 1e-10x has no numeric value", "Input string 3.5 has no integer value (do not include . in it)",
    "Unknown logical value: maybe"), which names the value and not the option, so that it names the option whose value
    (or an element of whose list) that is: "option -snes_atol 1e-10x: not a number (PETSc: ...)". One rule for every
    key PETSc reads itself (-ksp_rtol, -snes_max_it, -hs_grid_snes_atol, ...), where the error is caught rather than
    each key listed (issue 38, round 27's left item). Keys of hamshoot's own namespace that hamshoot parses are not
    named (their own messages name them). Several keys with that value are all named. msg is left as it is when it is no
    such message or no key has that value. Not collective (every rank holds the same options); bvp/ internal, for the
    driver's error path. @*/
PetscErrorCode HsOptionsNameValueError(char msg[], size_t len)
{
  static const struct {
    const char *head, *tail, *what;
  } pat[] = {
      {"Input string ", " has no numeric value", "not a number"},
      {"Input string ", " has no integer value", "not a whole number"},
      {"Input string ", " contains imaginary but complex not supported", "not a real number"},
      {"Unknown logical value: ", "", "not a logical value (true, false, yes, no, on, off, 1, 0)"},
  };
  char       *all, *tok, *save = NULL, value[1024], keys[512] = "", *out;
  const char *what = NULL, *val;
  PetscBool   sw, flg;

  PetscFunctionBeginUser;
  for (size_t i = 0; i < sizeof pat / sizeof pat[0] && !what; i++) {
    size_t      hl = strlen(pat[i].head);
    const char *t;
    if (strncmp(msg, pat[i].head, hl)) /* first: msg + hl is inside msg only where the head matched */
      continue;
    t = pat[i].tail[0] ? strstr(msg + hl, pat[i].tail) : msg + strlen(msg);
    if (t && (size_t)(t - msg) - hl < sizeof value)
      memcpy(value, msg + hl, t - msg - hl), value[t - msg - hl] = 0, what = pat[i].what;
  }
  if (!what || !value[0])
    PetscFunctionReturn(0);
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    if (IsValue(tok) || (Ours(tok + 1, &sw) && !PetscKeyInOurs(tok + 1)))
      continue;
    PetscCall(PetscOptionsFindPair(NULL, NULL, tok, &val, &flg));
    if (flg && val && ValueOrElement(val, value) && strlen(keys) + strlen(tok) + 5 < sizeof keys) {
      PetscCall(PetscStrlcat(keys, keys[0] ? " or " : "", sizeof keys));
      PetscCall(PetscStrlcat(keys, tok, sizeof keys));
    }
  }
  PetscCall(PetscFree(all));
  if (!keys[0])
    PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(len, &out));
  PetscCall(PetscSNPrintf(out, len, "option %s %s: %s (PETSc: %s)", keys, value, what, msg));
  PetscCall(PetscStrncpy(msg, out, len));
  PetscCall(PetscFree(out));
  PetscFunctionReturn(0);
}

/*@ HsOptionsCheckValues - no option's name or value holds a control character (an escape sequence, a newline: it
    would reach the terminal in a message, or be cut by PETSc), no option's value is a hexadecimal number (numbers are
    decimal in PETSc's keys too: -snes_atol 0x1p3 had been read as 8 where -p_g 0x1p3 is an error), and every option of
hamshoot's own namespace (-hs_*, -p_*, -N, -o, -problem, after prefix) that is not a switch has a value: "-N" with
nothing after it is an error naming the key, not "the default". Collective; call it before the options are read.
@*/
PetscErrorCode HsOptionsCheckValues(MPI_Comm comm, const char prefix[])
{
  char bad[256] = "";
  int  why;

  PetscFunctionBeginUser;
  PetscCall(FindControl(bad, sizeof bad));
  PetscCheck(!bad[0], comm, PETSC_ERR_ARG_WRONG,
             "option %s: a control character (an escape sequence, a newline, a carriage return, a text-direction "
             "override, or an invisible one: zero-width, format, line separator; or a byte of no valid UTF-8: Latin-1 "
             "text, an overlong form; shown as '?') in its name or value: give plain text",
             bad);
  PetscCall(TrimAllNumbers());
  PetscCall(FindHex(bad, sizeof bad));
  PetscCheck(!strstr(bad, " is not a "), comm, PETSC_ERR_ARG_WRONG, "option %s", bad);
  PetscCheck(!bad[0], comm, PETSC_ERR_ARG_WRONG,
             "option %s: a hexadecimal number; numbers are decimal in every option, PETSc's included (digits, an "
             "optional point and exponent)",
             bad);
  {
    char val[256], msg[1024];
    PetscCall(FindNumberKey(bad, sizeof bad, val, sizeof val, &why));
    PetscCheck(why != 1, comm, PETSC_ERR_ARG_WRONG,
               "option %s needs a value (PETSc takes a number key without one as not given, its default standing)",
               bad);
    if (why == 2) { /* PETSc's own message, rewritten to name every key with that value as when PETSc reads it */
      PetscCall(PetscSNPrintf(msg, sizeof msg, "Input string %s has no numeric value", val));
      PetscCall(HsOptionsNameValueError(msg, sizeof msg));
      SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s", msg);
    }
  }
  PetscCall(FindBadKey(prefix, NULL, PETSC_FALSE, bad, sizeof bad, &why));
  PetscCheck(
      !why, comm, PETSC_ERR_ARG_WRONG,
      "option %s needs a value (a value that starts with - and is not a number, such as -inf, is read as the next "
      "option)",
      bad);
  PetscFunctionReturn(0);
}

/*@ HsOptionsCheckUsed - every option of hamshoot's own namespace (-hs_*, -p_*, -N, -o, -problem,
    -quiet, after prefix) has been read (a typo such as -hs_bvp_typ is an error), and has a value
    unless it is a switch (bvp/ internal).

  Collective. Input: prefix - the objects' options prefix (may be NULL); defer - comma-separated
  prefixes of keys (after prefix) not checked for use (read by a sub-solver created during the
  solve, such as hs_direct_ and hs_init_; may be NULL). An unused key ("unknown, or not used by
  this run") or a key without a value is an error naming it.
@*/
PetscErrorCode HsOptionsCheckUsed(MPI_Comm comm, const char prefix[], const char defer[])
{
  char bad[256] = "";
  int  why;

  PetscFunctionBeginUser;
  PetscCall(FindBadKey(prefix, defer, PETSC_TRUE, bad, sizeof bad, &why));
  PetscCheck(why != 1, comm, PETSC_ERR_ARG_WRONG,
             "unknown option %s, or one this run does not use (e.g. a -hs_shoot_* key without -hs_bvp_type "
             "shooting); -help lists the options",
             bad);
  PetscCheck(
      why != 2, comm, PETSC_ERR_ARG_WRONG,
      "option %s needs a value (a value that starts with - and is not a number, such as -inf, is read as the next "
      "option)",
      bad);
  PetscFunctionReturn(0);
}

/*@ HsOptionsWarnUnused - after a run (bvp/ internal): a warning naming a key of hamshoot's namespace that nothing
    read, among those HsOptionsCheckUsed() deferred (-hs_direct_*, -hs_init_*, -hs_grid_*: read only by a sub-solver
    that a run may not create): a typo such as -hs_direct_hs_ipopt_tl or -hs_grid_snes_max_itt had passed without a
    word. A warning, not an error: the run is done, and a key for a sub-solver this run did not need is no fault.
    Collective. @*/
PetscErrorCode HsOptionsWarnUnused(MPI_Comm comm, const char prefix[])
{
  char bad[256] = "";
  int  why;

  PetscFunctionBeginUser;
  PetscCall(FindBadKey(prefix, NULL, PETSC_TRUE, bad, sizeof bad, &why));
  if (why == 1)
    PetscCall(PetscPrintf(comm,
                          "hamshoot: warning: option %s was not used by this run (unknown, or for a sub-solver it did "
                          "not need)\n",
                          bad));
  PetscFunctionReturn(0);
}

/*@ HsOptionName - the key as the user gives it to an object with an options prefix: "-" prefix key-without-its-dash
    ("-hs_dg_tol" of a solver with prefix "hs_direct_" is "-hs_direct_hs_dg_tol"); buf of len, returned. Every message
    of a key's value names it so: a sub-solver's (-hs_direct_*, -hs_grid_*, -hs_init_*, -hsdrop_*) range error had named
    the key without its prefix (issue 38, round 21: "-hs_dg_tol -1 must lie in [0, 0.001]" for
    -hs_direct_hs_dg_tol -1). Use HsKey(obj, key), which brings its own buffer. @*/
const char *HsOptionName(const char prefix[], const char key[], char buf[], size_t len)
{
  snprintf(buf, len, "-%s%s", prefix ? prefix : "", key[0] == '-' ? key + 1 : key);
  return buf;
}

/*@ HsOptionsString - a string option read into buf (len bytes) as PetscOptionsString reads it (bvp/ internal; between
    PetscOptionsBegin/End), except that a value longer than buf holds is an error naming the key, not cut to fit:
    "-p_g 0.000...01" with 300 zeros had been read as 0, a long -hs_strategy_continue list as its first 255 bytes. @*/
PetscErrorCode HsOptionsString(PetscOptionItems *PetscOptionsObject, const char key[], const char help[],
                               const char man[], const char dflt[], char buf[], size_t len, PetscBool *set)
{
  const char *raw = NULL;
  PetscBool   flg, found;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString(key, help, man, dflt, buf, len, &flg));
  if (set)
    *set = flg;
  if (!flg)
    PetscFunctionReturn(0);
  PetscCall(PetscOptionsFindPair(PetscOptionsObject->options, PetscOptionsObject->prefix, key, &raw, &found));
  PetscCheck(!found || !raw || strlen(raw) < len, PetscOptionsObject->comm, PETSC_ERR_ARG_OUTOFRANGE,
             "option -%s%s: its value has %zu characters, more than the %zu it may have",
             PetscOptionsObject->prefix ? PetscOptionsObject->prefix : "", key + 1, raw ? strlen(raw) : 0, len - 1);
  PetscFunctionReturn(0);
}

/*@ HsOptionsBool - a true/false option (bvp/ internal; as PetscOptionsBool, between PetscOptionsBegin/End): the key
    alone is true; a value that is none of true, false, yes, no, 1, 0 (any case) is an error naming the key and the
    value (PETSc's own said only "Unknown logical value: maybe"). @*/
PetscErrorCode HsOptionsBool(PetscOptionItems *PetscOptionsObject, const char key[], const char help[],
                             const char man[], PetscBool cur, PetscBool *val, PetscBool *set)
{
  char      buf[32];
  PetscBool flg;

  PetscFunctionBeginUser;
  if (set)
    *set = PETSC_FALSE;
  PetscCall(HsOptionsString(PetscOptionsObject, key, help, man, cur ? "true" : "false", buf, sizeof buf, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  if (!buf[0])
    *val = PETSC_TRUE;
  else {
    PetscErrorCode ierr;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = PetscOptionsStringToBool(buf, val);
    PetscCall(PetscPopErrorHandler());
    PetscCheck(!ierr, PetscOptionsObject->comm, PETSC_ERR_ARG_WRONG,
               "option -%s%s %s: expected true or false (yes, no, 1, 0)",
               PetscOptionsObject->prefix ? PetscOptionsObject->prefix : "", key + 1, buf);
  }
  if (set)
    *set = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsOptionsInt - an integer option in [lo, hi] (bvp/ internal; between PetscOptionsBegin/End, as
    PetscOptionsInt): the whole value must be a decimal integer in range; "1.5", "12abc", a value
    beyond hi (no wrap-around modulo 2^32) and a missing value are errors naming the key. @*/
PetscErrorCode HsOptionsInt(PetscOptionItems *PetscOptionsObject, const char key[], const char help[], const char man[],
                            PetscInt cur, PetscInt *val, PetscBool *set, PetscInt lo, PetscInt hi)
{
  char      buf[256], dflt[32], name[256];
  long long v = 0;
  int       why;
  PetscBool flg;
  MPI_Comm  comm = PetscOptionsObject->comm;

  PetscFunctionBeginUser;
  if (set)
    *set = PETSC_FALSE;
  PetscCall(PetscSNPrintf(dflt, sizeof dflt, "%" PetscInt_FMT, cur));
  PetscCall(HsOptionsString(PetscOptionsObject, key, help, man, dflt, buf, sizeof buf, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  key = HsOptionName(PetscOptionsObject->prefix, key, name, sizeof name);
  PetscCheck(buf[0], comm, PETSC_ERR_ARG_WRONG, "option %s needs a value", key);
  why = HsParseInt(buf, lo, hi, &v); /* blanks around it allowed, as around a real (HsParseReal) */
  PetscCheck(why != HS_NUMBER_SYNTAX, comm, PETSC_ERR_ARG_WRONG, "%s %s: expected a whole number", key, buf);
  PetscCheck(!why, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "%s %s is out of range: it must lie in [%" PetscInt_FMT ", %" PetscInt_FMT "]", key, buf, lo, hi);
  *val = (PetscInt)v;
  if (set)
    *set = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsOptionsReal - a real option (bvp/ internal; as PetscOptionsReal): the whole value must be a
    finite decimal number (HsParseReal); "abc", "0x1p3", "1e", "1e400", "nan" and a missing value are errors naming
    the key. @*/
PetscErrorCode HsOptionsReal(PetscOptionItems *PetscOptionsObject, const char key[], const char help[],
                             const char man[], PetscReal cur, PetscReal *val, PetscBool *set)
{
  char      buf[256], dflt[32], name[256];
  double    v = 0;
  int       why;
  PetscBool flg;
  MPI_Comm  comm = PetscOptionsObject->comm;

  PetscFunctionBeginUser;
  if (set)
    *set = PETSC_FALSE;
  PetscCall(PetscSNPrintf(dflt, sizeof dflt, "%g", (double)cur));
  PetscCall(HsOptionsString(PetscOptionsObject, key, help, man, dflt, buf, sizeof buf, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  key = HsOptionName(PetscOptionsObject->prefix, key, name, sizeof name);
  PetscCheck(buf[0], comm, PETSC_ERR_ARG_WRONG, "option %s needs a value", key);
  why = HsParseReal(buf, &v); /* decimal only: strtod's hexadecimal (0x1p3), inf and nan are refused */
  PetscCheck(!why, comm, why == HS_NUMBER_SYNTAX ? PETSC_ERR_ARG_WRONG : PETSC_ERR_ARG_OUTOFRANGE, "%s %s %s", key, buf,
             HsParseRealWhy(why));
  *val = (PetscReal)v;
  if (set)
    *set = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@ HsOptionsChoice - a string option with a fixed set of values (bvp/ internal); between
    PetscOptionsBegin/End.

  Input: key, help, man - as PetscOptionsString; choices[0..n-1] - the admissible values;
         idx - the current choice (shown by -help).
  Output: idx - the chosen index if the key is given; set - whether it was (may be NULL).
  An unknown value is an error that names the key and lists the choices.
@*/
PetscErrorCode HsOptionsChoice(PetscOptionItems *PetscOptionsObject, MPI_Comm comm, const char *key, const char *help,
                               const char *man, const char *const *choices, PetscInt n, PetscInt *idx, PetscBool *set)
{
  char      val[256], list[256] = "", name[256];
  PetscBool flg, eq;

  PetscFunctionBeginUser;
  if (set)
    *set = PETSC_FALSE;
  PetscCall(HsOptionsString(PetscOptionsObject, key, help, man, choices[*idx], val, sizeof val, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscStrcmp(val, choices[i], &eq));
    if (eq) {
      *idx = i;
      if (set)
        *set = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
    (void)HsStrAppend(list, sizeof list, i ? " or " : "");
    (void)HsStrAppend(list, sizeof list, choices[i]);
  }
  SETERRQ(comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown %s '%s' (choose %s)",
          HsOptionName(PetscOptionsObject->prefix, key, name, sizeof name), val, list);
}

/* The number of values an entry of a list option stands for: 1, or for an integer range "a-b[:inc]"
 * (PetscOptionsGetIntArray) the count PETSc reserves for it. */
static PetscInt EntryCount(const char *e, size_t len)
{
  char buf[64], *end;
  long a, b, inc = 1;

  if (len == 0 || len >= sizeof buf)
    return 1;
  memcpy(buf, e, len), buf[len] = 0;
  for (size_t i = buf[0] == '-' ? 2 : 1; i < len; i++)
    if (buf[i] == '-') {
      a = strtol(buf, &end, 10);
      if (end != buf + i)
        return 1;
      b = strtol(buf + i + 1, &end, 10);
      if (*end == ':')
        inc = strtol(end + 1, NULL, 10);
      return b > a && inc > 0 ? (PetscInt)((b - a) / inc + (b - a) % inc) : 1;
    }
  return 1;
}

/*@ HsOptionsListLength - the number of values of a list option (bvp/ internal), 0 if it is not
    given, counting an integer range "a-b" as PETSc expands it; so that PetscOptions*Array can be given
    an array that takes all of them (PETSc drops values beyond the array silently). @*/
PetscErrorCode HsOptionsListLength(PetscOptions options, const char prefix[], const char key[], PetscInt *n)
{
  const char *val = NULL;
  PetscBool   flg;

  PetscFunctionBeginUser;
  *n = 0;
  PetscCall(PetscOptionsFindPair(options, prefix, key, &val, &flg));
  if (!flg)
    PetscFunctionReturn(0);
  if (!val)
    val = "";
  for (const char *e = val;;) {
    size_t len = strcspn(e, ",");
    *n += EntryCount(e, len);
    if (!e[len])
      break;
    e += len + 1;
  }
  PetscFunctionReturn(0);
}

/*@ HsOptionsCheckIntList - every comma-separated value of the list option key is a whole decimal number within
    PetscInt's range, or PETSc's range a-b or a-b:c of such numbers, else an error naming the key and the value
    (bvp/ internal; before PetscOptionsIntArray, which reads 4294967301 as 5 (modulo 2^32) and an empty value as
    nothing). Nothing if the key is not given. @*/
PetscErrorCode HsOptionsCheckIntList(MPI_Comm comm, PetscOptions options, const char prefix[], const char key[])
{
  const char *val = NULL;
  PetscBool   flg;

  PetscFunctionBeginUser;
  PetscCall(TrimNumbers(options, prefix, key)); /* blanks around a number: PETSc reads the list */
  PetscCall(PetscOptionsFindPair(options, prefix, key, &val, &flg));
  if (!flg || !val)
    PetscFunctionReturn(0);
  for (PetscInt k = 1;; k++) {
    size_t    len = strcspn(val, ","), a = len ? 1 + strcspn(val + 1, "-") : 0, b = a < len ? a + 1 : len;
    size_t    c  = b + strcspn(val + b, ":");
    PetscBool ok = (PetscBool)(len && WholeNumber(val, a < len ? a : len) &&
                               (a >= len || (WholeNumber(val + b, (c < len ? c : len) - b) &&
                                             (c >= len || WholeNumber(val + c + 1, len - c - 1)))));
    PetscCheck(ok, comm, PETSC_ERR_ARG_WRONG,
               "option %s: value %" PetscInt_FMT " ('%.*s') is not a whole number within %d-bit integers (decimal "
               "digits; a range a-b)",
               key, k, (int)(len < 40 ? len : 40), val, (int)(8 * sizeof(PetscInt)));
    if (!val[len])
      break;
    val += len + 1;
  }
  PetscFunctionReturn(0);
}

/*@ HsOptionsCheckRealList - every comma-separated value of the list option key is a finite decimal number
    (HsParseReal), else an error naming the key and the value (bvp/ internal; before PetscOptionsRealArray, whose
    strtod takes 0x1p3 as 8 and nan or inf as numbers). Nothing if the key is not given. @*/
PetscErrorCode HsOptionsCheckRealList(MPI_Comm comm, PetscOptions options, const char prefix[], const char key[])
{
  const char *val = NULL;
  PetscBool   flg;

  PetscFunctionBeginUser;
  PetscCall(TrimNumbers(options, prefix, key)); /* blanks around a number: PETSc reads the list */
  PetscCall(PetscOptionsFindPair(options, prefix, key, &val, &flg));
  if (!flg || !val)
    PetscFunctionReturn(0);
  for (PetscInt k = 1;; k++) {
    size_t len = strcspn(val, ",");
    char   num[256];
    double v;
    int    why = len < sizeof num ? (memcpy(num, val, len), num[len] = 0, HsParseReal(num, &v)) : HS_NUMBER_SYNTAX;
    PetscCheck(!why, comm, PETSC_ERR_ARG_WRONG, "option %s: value %" PetscInt_FMT " ('%.*s') %s", key, k,
               (int)(len < 40 ? len : 40), val, HsParseRealWhy(why));
    if (!val[len])
      break;
    val += len + 1;
  }
  PetscFunctionReturn(0);
}
