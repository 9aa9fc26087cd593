/* hamshoot: problem allocation, destruction and the built-in registry. */
#include "hsmechanical.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int HsProblemAllocate(const char *name, int n, int m, HsProblem **prob)
{
  HsProblem *p;

  *prob = NULL;
  if (n < 1 || m < 1)
    return -1;
  p = calloc(1, sizeof(*p));
  if (!p)
    return -1;
  strncpy(p->name, name, HS_NAME_LEN - 1);
  p->n        = n;
  p->m        = m;
  p->B        = calloc((size_t)(n * m), sizeof(double));
  p->R        = calloc((size_t)(m * m), sizeof(double));
  p->x0       = calloc((size_t)(2 * n), sizeof(double));
  p->xT       = calloc((size_t)(2 * n), sizeof(double));
  p->xT_fixed = calloc((size_t)(2 * n), sizeof(int));
  if (!p->B || !p->R || !p->x0 || !p->xT || !p->xT_fixed) {
    HsProblemDestroy(&p);
    return -1;
  }
  *prob = p;
  return 0;
}

void HsProblemDestroy(HsProblem **prob)
{
  HsProblem *p;

  if (!prob || !*prob)
    return;
  p = *prob;
  if (p->destroy_ctx)
    p->destroy_ctx(p->ctx);
  free(p->B);
  free(p->R);
  free(p->x0);
  free(p->xT);
  free(p->xT_fixed);
  free(p);
  *prob = NULL;
}

int HsProblemHasEll(const HsProblem *prob) { return prob->ell.f != NULL; }

static const struct {
  const char *name;
  int (*create)(HsProblem **);
} hs_problems[] = {
    {"pendulum", HsProblemCreatePendulum},
    {"kepler", HsProblemCreateKepler},
    {"saddle", HsProblemCreateSaddle},
    {"crane", HsProblemCreateCrane},
    {"manipulator3", HsProblemCreateManipulator3},
    {"ncar", HsProblemCreateNcar},
};

const char *HsProblemListNames(void) { return "pendulum kepler saddle crane manipulator3 ncar"; }

int HsProblemCreateByName(const char *name, HsProblem **prob)
{
  size_t i;

  *prob = NULL;
  for (i = 0; i < sizeof(hs_problems) / sizeof(hs_problems[0]); i++)
    if (!strcmp(name, hs_problems[i].name))
      return hs_problems[i].create(prob);
  return 1;
}

int HsProblemAddParam(HsProblem *prob, const char *name, const char *help, double *value, double min, double max)
{
  if (prob->nparams >= HS_MAX_PARAMS)
    return -1;
  prob->params[prob->nparams++] = (HsParam){name, help, value, min, max, 0};
  return 0;
}

void HsProblemParamSetInteger(HsProblem *prob)
{
  if (prob->nparams > 0)
    prob->params[prob->nparams - 1].integer = 1;
}

int HsProblemSetParam(HsProblem *prob, const char *name, double value)
{
  for (int i = 0; i < prob->nparams; i++)
    if (!strcmp(prob->params[i].name, name)) {
      if (!(value >= prob->params[i].min && value <= prob->params[i].max))
        return 2;
      if (prob->params[i].integer && value != floor(value))
        return 3;
      *prob->params[i].value = value;
      HsProblemMechanicalInvalidate(prob);
      if (prob->update)
        prob->update(prob);
      return 0;
    }
  return 1;
}
