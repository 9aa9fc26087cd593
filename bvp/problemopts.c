/* hamshoot: problems from the options database: -problem NAME|FILE and the
 * problem parameters -p_NAME VALUE (PETSc side, so that problems/ stays free
 * of PETSc). Every parameter is listed by -help with its range. */
#include "hsbvpimpl.h"

#include <string.h>

#include "../problems/hsocp.h"

/* A name names a problem file if it contains ".ocp" or a '/'. */
static PetscBool IsProblemFile(const char *name) { return (PetscBool)(strstr(name, ".ocp") || strchr(name, '/')); }

/*@ HsProblemCreateFromOptions - the problem named by -problem: a built-in problem (pendulum, kepler,
    saddle, crane, manipulator3, ncar; default pendulum) or a problem file FILE.ocp
    (docs/problem-format.md), with its -p_NAME parameters applied (HsProblemSetFromOptions).

  Collective (every rank creates its own copy of the serial problem).

  Input: comm - the communicator of the solve; prefix - options prefix (may be NULL).
  Output: prob - the problem; destroy it with HsProblemDestroy(). An unknown name, a malformed file
          or a bad parameter is an error with a message naming it.
@*/
PetscErrorCode HsProblemCreateFromOptions(MPI_Comm comm, const char prefix[], HsProblem **prob)
{
  char name[PETSC_MAX_PATH_LEN] = "pendulum", msg[1024] = "", help[512];
  int  st;

  PetscFunctionBeginUser;
  *prob = NULL;
  PetscCall(PetscSNPrintf(help, sizeof help, "built-in problem (%s) or a problem file NAME.ocp", HsProblemListNames()));
  PetscOptionsBegin(comm, prefix, "hamshoot problem", "HsProblem");
  PetscCall(PetscOptionsString("-problem", help, "HsProblemCreateFromOptions", name, name, sizeof name, NULL));
  PetscOptionsEnd();
  if (IsProblemFile(name)) {
    st = HsProblemCreateFromFile(name, prob, msg, sizeof msg);
    PetscCheck(st == 0, comm, msg[0] ? PETSC_ERR_ARG_WRONG : PETSC_ERR_MEM, "%s",
               msg[0] ? msg : "out of memory reading the problem file");
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
    PetscCall(PetscStrlcat(names, i ? " -p_" : "-p_", sizeof names));
    PetscCall(PetscStrlcat(names, prob->params[i].name, sizeof names));
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
    PetscCall(PetscSNPrintf(key, sizeof key, "-p_%s", p->name));
    PetscCall(PetscSNPrintf(help, sizeof help, "%s, in [%g, %g]%s", p->help, p->min, p->max,
                            p->integer ? ", a whole number" : ""));
    PetscCall(PetscOptionsReal(key, help, "HsProblemSetParam", *p->value, &v, &set));
    if (!set)
      continue;
    PetscCheck(!(p->integer && v != PetscFloorReal(v)), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "%s %g must be a whole number (%s)", key, (double)v, p->help);
    PetscCheck(HsProblemSetParam(prob, p->name, (double)v) == 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "%s %g is outside [%g, %g] (%s)", key, (double)v, p->min, p->max, p->help);
  }
  PetscOptionsEnd();
  PetscCall(CheckUnknownParams(comm, prefix, prob));
  PetscFunctionReturn(0);
}
