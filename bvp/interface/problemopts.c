/* hamshoot: problems from the options database: -problem NAME|FILE and the
 * problem parameters -p_NAME VALUE (PETSc side, so that problems/ stays free
 * of PETSc). Every parameter is listed by -help with its range. */
#include "hsbvpimpl.h"

#include <stdlib.h>
#include <string.h>

#include "../../problems/hsbodies.h"
#include "../../problems/hsocp.h"
#include "../../problems/hstext.h"

/* A name names a problem file if it contains ".ocp" or a '/'. */
static PetscBool IsProblemFile(const char *name) { return (PetscBool)(strstr(name, ".ocp") || strchr(name, '/')); }

/* The text of a problem file on stdout (-problem_print_expanded) with each terminal control but the line ends (LF,
 * CRLF) and tabs shown as '?' (HsTextControl): an escape sequence in a comment of a file from others had reached the
 * terminal raw. */
static PetscErrorCode PrintText(MPI_Comm comm, const char *text, size_t len)
{
  char *c = malloc(len + 1);

  PetscFunctionBeginUser;
  PetscCheck(c, comm, PETSC_ERR_MEM, "out of memory printing the problem file");
  memcpy(c, text, len), c[len] = 0;
  for (char *p = c; *p;) {
    int n;
    if (HsTextControl(p, &n) && *p != '\n' && *p != '\t' && !(*p == '\r' && p[1] == '\n'))
      memset(p, '?', (size_t)n);
    p += n;
  }
  PetscCall(PetscPrintf(comm, "%s", c));
  free(c);
  PetscFunctionReturn(0);
}

/* A problem file read by rank 0 and sent to every rank (a file that only some nodes can see, or that
 * a network file system shows late, must not make the ranks disagree); each rank parses the same
 * bytes, and a rank that cannot (out of memory) makes every rank fail. */
static PetscErrorCode CreateFromFile(MPI_Comm comm, const char *name, PetscBool print, HsProblem **prob)
{
  char        msg[1024] = "", *text = NULL;
  size_t      len       = 0;
  long long   hdr[2]    = {0, 0}; /* status, length */
  int         st, worst;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    hdr[0] = HsProblemReadFile(name, &text, &len, msg, sizeof msg);
    hdr[1] = (long long)len;
  }
  PetscCallMPI(MPI_Bcast(hdr, 2, MPI_LONG_LONG, 0, comm));
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(hdr[0] != HS_ENOMEM, comm, PETSC_ERR_MEM, "%s: out of memory reading the problem file", name);
  PetscCheck(hdr[0] == 0, comm, PETSC_ERR_ARG_WRONG, "%s", msg);
  if (rank)
    text = malloc((size_t)hdr[1] + 1);
  st = text ? 0 : HS_ENOMEM;
  PetscCallMPI(MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MIN, comm));
  if (worst == 0)
    PetscCallMPI(MPI_Bcast(text, (int)hdr[1], MPI_CHAR, 0, comm)); /* at most HS_OCP_MAX_BYTES */
  if (worst == 0 && print) { /* -problem_print_expanded: the text the parser reads (docs/multibody.md) */
    char *out = NULL;
    if (HsBodiesPresent(text, (size_t)hdr[1]) && !HsBodiesExpand(name, text, (size_t)hdr[1], &out, msg, sizeof msg))
      PetscCall(PrintText(comm, out, strlen(out)));
    else if (!HsBodiesPresent(text, (size_t)hdr[1]))
      PetscCall(PrintText(comm, text, (size_t)hdr[1]));
    free(out);
  }
  if (worst == 0)
    st = HsProblemCreateFromText(name, text, (size_t)hdr[1], prob, msg, sizeof msg);
  free(text);
  PetscCallMPI(MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MIN, comm));
  if (worst && !st)
    HsProblemDestroy(prob);
  PetscCheck(worst != HS_ENOMEM, comm, PETSC_ERR_MEM, "%s: out of memory reading the problem file", name);
  PetscCheck(worst == 0, comm, PETSC_ERR_ARG_WRONG, "%s", msg);
  PetscFunctionReturn(0);
}

/*@ HsProblemCreateFromOptions - the problem named by -problem: a built-in problem (pendulum, kepler,
    saddle, crane, manipulator3, ncar; default pendulum) or a problem file FILE.ocp
    (docs/problem-format.md), with its -p_NAME parameters applied (HsProblemSetFromOptions).

  Collective (every rank creates its own copy of the serial problem; a problem file is read by rank 0
  and its bytes sent to the others, so that every rank sees the same file or all fail together).

  Input: comm - the communicator of the solve; prefix - options prefix (may be NULL).
  Output: prob - the problem; destroy it with HsProblemDestroy(). An unknown name, a malformed file
          or a bad parameter is an error with a message naming it.
@*/
PetscErrorCode HsProblemCreateFromOptions(MPI_Comm comm, const char prefix[], HsProblem **prob)
{
  char      name[PETSC_MAX_PATH_LEN] = "pendulum", help[512];
  int       st;
  PetscBool print = PETSC_FALSE;

  PetscFunctionBeginUser;
  *prob = NULL;
  PetscCall(PetscSNPrintf(help, sizeof help, "built-in problem (%s) or a problem file NAME.ocp", HsProblemListNames()));
  PetscOptionsBegin(comm, prefix, "hamshoot problem", "HsProblem");
  HsOptionsCall(HsOptionsString(PetscOptionsObject, "-problem", help, "HsProblemCreateFromOptions", name, name,
                                sizeof name, NULL));
  HsOptionsCall(HsOptionsBool(PetscOptionsObject, "-problem_print_expanded",
                              "print the problem file as the parser reads it (bodies and joints expanded)",
                              "HsProblemCreateFromOptions", print, &print, NULL));
  PetscOptionsEnd();
  if (IsProblemFile(name)) {
    PetscCall(CreateFromFile(comm, name, print, prob));
  } else {
    st = HsProblemCreateByName(name, prob);
    PetscCheck(st != HS_EUNKNOWN, comm, PETSC_ERR_ARG_UNKNOWN_TYPE,
               "unknown problem '%s' (-problem: %s, or a problem file NAME.ocp)", name, HsProblemListNames());
    PetscCheck(st == HS_SUCCESS, comm, PETSC_ERR_MEM, "cannot create problem '%s'", name);
  }
  PetscCall(HsProblemSetFromOptions(comm, prefix, *prob));
  PetscFunctionReturn(0);
}

/* An error if the database holds a -<prefix>p_NAME that is not a parameter of prob (a typo must not
 * be silently ignored). */
static PetscErrorCode CheckUnknownParams(MPI_Comm comm, const char prefix[], const HsProblem *prob)
{
  char  *all, *tok, *save = NULL, key[256], names[1024] = "";
  size_t klen;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(key, sizeof key, "-%sp_", prefix ? prefix : ""));
  klen = strlen(key);
  for (int i = 0; i < prob->nparams; i++) {
    (void)HsStrAppend(names, sizeof names, i ? " -p_" : "-p_");
    (void)HsStrAppend(names, sizeof names, prob->params[i].name);
  }
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    int known = 0;
    if (strncmp(tok, key, klen))
      continue;
    for (int i = 0; i < prob->nparams; i++)
      known |= !strcmp(tok + klen, prob->params[i].name);
    if (!known) {
      char bad[128];
      PetscCall(PetscStrncpy(bad, tok, sizeof bad));
      PetscCall(PetscFree(all));
      SETERRQ(comm, PETSC_ERR_ARG_WRONG, "unknown problem parameter %s for '%s' (parameters: %s)", bad, prob->name,
              names[0] ? names : "none");
    }
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Sets parameter i to v (given as key): a value outside its range, or one that makes the problem
 * invalid (a file's M(q) no longer positive definite, ...), is an error naming key and the reason. */
static PetscErrorCode SetParam(MPI_Comm comm, HsProblem *prob, int i, const char *key, PetscReal v)
{
  const HsParam *p = &prob->params[i];
  const char    *r = strstr(p->help, " in ");
  int            st;

  PetscFunctionBeginUser;
  PetscCheck(!PetscIsInfOrNanReal(v), comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g is not a finite number", key, (double)v);
  st = HsProblemSetParam(prob, p->name, (double)v);
  PetscCheck(st != HS_ERANGE || !prob->why[0], comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g is not admissible: %s", key,
             (double)v, prob->why);
  PetscCheck(st != HS_ERANGE || !r, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g is not%s", key, (double)v, r);
  PetscCheck(st != HS_ERANGE, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s %g is outside [%g, %g] (%s)", key, (double)v, p->min,
             p->max, p->help);
  PetscCheck(st == 0, comm, PETSC_ERR_MEM, "%s %g: out of memory", key, (double)v);
  PetscFunctionReturn(0);
}

/*@ HsProblemSetFromOptions - applies -p_NAME VALUE to each parameter NAME of the problem (in the
    order the problem lists them); each is listed by -help with its meaning and range.

  Collective. A value outside the parameter's range, a non-integer for an integer parameter and a
  -p_ key that is not a parameter of this problem are errors naming the key.
@*/
PetscErrorCode HsProblemSetFromOptions(MPI_Comm comm, const char prefix[], HsProblem *prob)
{
  char title[128];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(title, sizeof title, "Parameters of problem '%s'", prob->name));
  PetscOptionsBegin(comm, prefix, title, "HsProblem");
  for (int i = 0; i < prob->nparams; i++) {
    const HsParam *p = &prob->params[i];
    char           key[96], help[512];
    PetscReal      v;
    PetscBool      set;
    HsOptionsCall(PetscSNPrintf(key, sizeof key, "-p_%s", p->name));
    HsOptionsCall(PetscSNPrintf(help, sizeof help, "%s, in [%g, %g]%s", p->help, p->min, p->max,
                            p->integer ? ", a whole number" : ""));
    HsOptionsCall(HsOptionsReal(PetscOptionsObject, key, help, "HsProblemSetParam", *p->value, &v, &set));
    if (!set)
      continue;
    HsOptionsCheck(!(p->integer && v != PetscFloorReal(v)), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "%s %g must be a whole number (%s)", key, (double)v, p->help);
    HsOptionsCall(SetParam(comm, prob, i, key, v));
  }
  PetscOptionsEnd();
  PetscCall(CheckUnknownParams(comm, prefix, prob));
  PetscFunctionReturn(0);
}
