/* Unit tests of the constrained scheme (costate/constrained.c): every Jacobian block of the interval, node and
 * end equations against central differences, on the shipped constrained problem files (a B that depends on q,
 * two constraints, a crane with a winch), at points off the solution (random unknowns); and the load-time
 * checks of the class and the end data (problems/ocp.c, problems/constraints.c). */
#include "../costate/hsconstrained.h"
#include "../problems/hsocp.h"

#include "hscheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ZMAX 64

typedef int (*ResFn)(HsCons *cs, const double *z[3], double *F, double *J[3]);

static int Interval(HsCons *cs, const double *z[3], double *F, double *J[3])
{
  return HsConsInterval(cs, z[0], z[1], F, J ? J[0] : NULL, J ? J[1] : NULL);
}
static int Node(HsCons *cs, const double *z[3], double *F, double *J[3])
{
  return HsConsNode(cs, 1, z[0], z[1], z[2], F, J ? J[0] : NULL, J ? J[1] : NULL, J ? J[2] : NULL);
}
static int Terminal(HsCons *cs, const double *z[3], double *F, double *J[3])
{
  return HsConsTerminal(cs, z[0], z[1], F, J ? J[0] : NULL, J ? J[1] : NULL);
}

/* The blocks of fn in its np points against central differences; the largest error relative to the block's size. */
static double CheckBlocks(HsCons *cs, ResFn fn, int np, double (*z)[ZMAX])
{
  int           D = HsConsBlockSize(cs), r = D / 2;
  static double J[3][ZMAX * ZMAX], Fp[ZMAX], Fm[ZMAX], F[ZMAX];
  double       *Jp[3] = {J[0], J[1], J[2]}, err = 0, scale = 1;
  const double *zz[3] = {z[0], z[1], z[2]};

  if (fn(cs, zz, F, Jp))
    return INFINITY;
  for (int b = 0; b < np; b++)
    for (int c = 0; c < D; c++) {
      double e = 1e-6 * (1 + fabs(z[b][c])), keep = z[b][c];
      z[b][c] = keep + e, fn(cs, zz, Fp, NULL);
      z[b][c] = keep - e, fn(cs, zz, Fm, NULL);
      z[b][c] = keep;
      for (int i = 0; i < r; i++) {
        double fd = (Fp[i] - Fm[i]) / (2 * e);
        err       = fmax(err, fabs(fd - J[b][i * D + c]));
        scale     = fmax(scale, fabs(fd));
      }
    }
  return err / scale;
}

static void CheckFile(const char *dir, const char *file)
{
  char       path[512], msg[512];
  HsProblem *P;
  HsCons    *cs;
  double     z[3][ZMAX];

  snprintf(path, sizeof path, "%s/%s", dir, file);
  CHECK(HsProblemCreateFromFile(path, &P, msg, sizeof msg) == 0, "%s: %s", file, msg);
  if (!P)
    return;
  CHECK(P->nc > 0 && P->Phi && P->const_mass, "%s: not read as constrained", file);
  CHECK(HsConsCreate(P, 10, &cs, msg, sizeof msg) == 0, "%s: %s", file, msg);
  srand(7);
  for (int b = 0; b < 3; b++)
    for (int c = 0; c < HsConsBlockSize(cs); c++)
      z[b][c] = 2.0 * rand() / RAND_MAX - 1;
  CHECK(CheckBlocks(cs, Interval, 2, z) < 1e-7, "%s: interval Jacobian %g", file, CheckBlocks(cs, Interval, 2, z));
  CHECK(CheckBlocks(cs, Node, 3, z) < 1e-7, "%s: node Jacobian %g", file, CheckBlocks(cs, Node, 3, z));
  CHECK(CheckBlocks(cs, Terminal, 2, z) < 1e-7, "%s: terminal Jacobian %g", file, CheckBlocks(cs, Terminal, 2, z));
  HsConsSetKKT(cs, 1); /* the direct transcription's KKT form of the node equations */
  CHECK(CheckBlocks(cs, Node, 3, z) < 1e-7, "%s: node Jacobian (KKT) %g", file, CheckBlocks(cs, Node, 3, z));
  HsConsDestroy(&cs);
  HsProblemDestroy(&P);
}

/* The text of dir/file with the line starting with key replaced by line (malloc'ed; NULL on failure). */
static char *Replaced(const char *dir, const char *file, const char *key, const char *line)
{
  char   path[512], msg[512], *text, *out, *at, *eol;
  size_t len;

  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (HsProblemReadFile(path, &text, &len, msg, sizeof msg))
    return NULL;
  out = malloc(len + strlen(line) + 2);
  at = strstr(text, key), eol = at ? strchr(at, '\n') : NULL;
  if (out && at && eol) {
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), line);
    strcat(out, eol);
  }
  free(text);
  return out;
}

/* pendulum_cartesian.ocp with one line replaced so that it leaves the exact class: read as extended (naming why), and
 * the extended scheme's interval, node and end blocks against central differences (its constraint terms' own
 * Jacobian is a difference too: 1e-6 relative). */
static void CheckExtended(const char *dir, const char *key, const char *line, const char *want)
{
  char       msg[512], *text = Replaced(dir, "pendulum_cartesian.ocp", key, line);
  HsProblem *P             = NULL;
  HsDisc    *disc          = NULL;
  HsCons    *cs            = NULL;
  double     z[3][ZMAX];

  if (!text || HsProblemCreateFromText("ext.ocp", text, strlen(text), &P, msg, sizeof msg)) {
    CHECK(0, "'%s': %s", line, text ? msg : "cannot read");
    free(text);
    return;
  }
  CHECK(P->cons_extended && strstr(P->cons_extended, want), "'%s': class %s, expected '%s'", line,
        P->cons_extended ? P->cons_extended : "exact", want);
  CHECK(HsDiscCreate(P, "bem", "constrained", 10, HS_DG_TOL_DEFAULT, &disc, msg, sizeof msg) == 0, "%s", msg);
  CHECK(HsConsCreate(P, 10, &cs, msg, sizeof msg) == 0, "%s", msg);
  if (disc && cs) {
    HsConsSetDisc(cs, disc);
    srand(11);
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < HsConsBlockSize(cs); c++)
        z[b][c] = (b == 0 ? 0.4 : b == 1 ? -0.3 : 0.7) + 0.5 * rand() / RAND_MAX; /* q away from 0 */
    CHECK(!HsConsIsExact(cs), "'%s': the extended scheme", line);
    CHECK(CheckBlocks(cs, Interval, 2, z) < 1e-6, "'%s': interval Jacobian %g", line, CheckBlocks(cs, Interval, 2, z));
    CHECK(CheckBlocks(cs, Node, 3, z) < 1e-6, "'%s': node Jacobian %g", line, CheckBlocks(cs, Node, 3, z));
    CHECK(CheckBlocks(cs, Terminal, 2, z) < 1e-6, "'%s': end Jacobian %g", line, CheckBlocks(cs, Terminal, 2, z));
  }
  HsConsDestroy(&cs);
  HsDiscDestroy(&disc);
  HsProblemDestroy(&P);
  free(text);
}

/* The constraints' third derivatives (problems/ocp.c, Phi3) against central differences of their Hessians at a
 * random q, each of the nc n^3 entries (a wrong layout or a missed permutation shows as an entry off); NULL for
 * quadratic constraints. */
static void CheckPhi3(const char *dir, const char *file, const char *line)
{
  char       msg[512], *text = line ? Replaced(dir, file, "constraints:", line) : NULL;
  HsProblem *P             = NULL;
  double     q[ZMAX], H3[4096], Hp[1024], Hm[1024], err = 0, scale = 0;

  if (!line) { /* the shipped file itself */
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    CHECK(HsProblemCreateFromFile(path, &P, msg, sizeof msg) == 0, "%s: %s", file, msg);
  } else if (!text || HsProblemCreateFromText("phi3.ocp", text, strlen(text), &P, msg, sizeof msg))
    CHECK(0, "'%s': %s", line, text ? msg : "cannot read");
  free(text);
  if (!P)
    return;
  int n = P->n, nc = P->nc;
  if (!line) {
    CHECK(P->Phi3 == NULL, "%s: quadratic constraints, but Phi3 is set", file);
    HsProblemDestroy(&P);
    return;
  }
  CHECK(P->Phi3 && nc * n * n * n <= 4096, "'%s': no third derivatives of Phi", line);
  srand(5);
  for (int i = 0; i < n; i++)
    q[i] = 0.3 + 0.6 * rand() / RAND_MAX;
  if (P->Phi3 && !P->Phi3(q, H3, P->ctx))
    for (int s = 0; s < n; s++) {
      double e = 1e-5 * (1 + fabs(q[s])), keep = q[s];
      q[s] = keep + e, P->Phi(q, NULL, NULL, Hp, P->ctx);
      q[s] = keep - e, P->Phi(q, NULL, NULL, Hm, P->ctx);
      q[s] = keep;
      for (int k = 0; k < nc * n * n; k++) {
        double fd = (Hp[k] - Hm[k]) / (2 * e);
        err = fmax(err, fabs(fd - H3[k * n + s])), scale = fmax(scale, fabs(fd));
      }
    }
  CHECK(scale > 0.1 && err < 1e-8 * scale, "'%s': Phi3 against differences of Hphi: %g (scale %g)", line, err, scale);
  HsProblemDestroy(&P);
}

/* A problem file's text with one line replaced; the message of reading it must contain want. */
static void CheckRefused(const char *dir, const char *file, const char *key, const char *line, const char *want)
{
  char       path[512], msg[1024], *text, *out;
  size_t     len;
  HsProblem *P = NULL;

  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (HsProblemReadFile(path, &text, &len, msg, sizeof msg)) {
    CHECK(0, "%s", msg);
    return;
  }
  out = malloc(len + strlen(line) + 2);
  {
    char *at = strstr(text, key), *eol = at ? strchr(at, '\n') : NULL;
    if (at && eol) {
      size_t pre = (size_t)(at - text);
      memcpy(out, text, pre);
      strcpy(out + pre, line);
      strcat(out, eol);
    } else
      snprintf(out, len + strlen(line) + 2, "%s%s\n", text, line);
  }
  CHECK(HsProblemCreateFromText(path, out, strlen(out), &P, msg, sizeof msg) != 0 && strstr(msg, want),
        "%s with '%s': expected '%s', got '%s'", file, line, want, P ? "(accepted)" : msg);
  HsProblemDestroy(&P);
  free(out), free(text);
}

/* HsProblemBlendTerminal on a constrained problem: the straight blend moved onto the constraints (Phi = 0, G M^{-1} p =
 * 0 to round-off), reach 1 the goal itself. */
static void CheckBlend(const char *dir, const char *file)
{
  char       path[512], msg[512];
  HsProblem *P;
  double     goal[64], Phi[8], G[64], g[64];

  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (HsProblemCreateFromFile(path, &P, msg, sizeof msg)) {
    CHECK(0, "%s", msg);
    return;
  }
  memcpy(goal, P->xT, sizeof(double) * (size_t)(2 * P->n));
  goal[P->n] += 0.3; /* a momentum off the tangent space too */
  for (int r = 1; r <= 3; r++) {
    double reach = 0.25 * r, worst = 0;
    HsProblemBlendTerminal(P, goal, reach);
    P->Phi(P->xT, Phi, G, NULL, P->ctx);
    P->E.grad(P->xT, g, P->ctx);
    for (int i = 0; i < P->nc; i++) {
      double v = 0;
      for (int l = 0; l < P->n; l++)
        v += G[i * P->n + l] * g[P->n + l];
      worst = fmax(worst, fmax(fabs(Phi[i]), fabs(v)));
    }
    CHECK(worst < 1e-12, "%s: the blend at reach %g is %g off the constraints", file, reach, worst);
  }
  HsProblemDestroy(&P);
}

/* HsProblemBlendTerminal with free terminal coordinates (tests/data/wheel_rest_directors.ocp: the body's director a
 * fixed, the wheel's b free, xT 0 there): the fixed a of the blend on |a| = 1 to round-off, the free components left
 * as they were. The projection took b = 0 from xT, where |b|^2 = 1 has a zero gradient (a singular Gram matrix): the
 * blend stayed at |a| < 1, and conserving4's continuation in reach ended every step with CONSTRAINTS_VIOLATED. */
static void CheckBlendFree(const char *dir)
{
  char       path[512], msg[512];
  HsProblem *P;
  double     goal[8];

  snprintf(path, sizeof path, "%s/../tests/data/wheel_rest_directors.ocp", dir);
  if (HsProblemCreateFromFile(path, &P, msg, sizeof msg)) {
    CHECK(0, "%s", msg);
    return;
  }
  memcpy(goal, P->xT, sizeof goal);
  for (int r = 1; r <= 3; r++) {
    double reach = 0.25 * r, a;
    HsProblemBlendTerminal(P, goal, reach);
    a = hypot(P->xT[0], P->xT[1]);
    CHECK(fabs(a - 1) < 1e-13 && P->xT[2] == 0 && P->xT[3] == 0 && !P->xT_fixed[2] && !P->xT_fixed[3],
          "wheel_rest_directors: the blend at reach %g has |a| = %.17g, b = (%g, %g)", reach, a, P->xT[2], P->xT[3]);
    CHECK(fabs(atan2(P->xT[1], P->xT[0]) - reach * 1.0) < 0.1, "wheel_rest_directors: the blend at reach %g turns a "
          "by %g", reach, atan2(P->xT[1], P->xT[0]));
  }
  HsProblemDestroy(&P);
}

/* The end at rest of the extended class (docs/constrained.md, "Rest ends and conserved quantities") as read from
 * tests/data/wheel_rest_directors.ocp: one conserved invariant whose grad_p is the rotation (-a2, a1, -b2, b1) and its
 * q-derivatives, the body's constraint (fixed coordinates only) left out at the end, the wheel's kept. */
static void CheckRestEnd(const char *dir)
{
  char       path[512], msg[1024];
  HsProblem *P    = NULL;
  double     q[4] = {0.3, -0.7, 1.1, 0.2}, g[4], dg[16], want[4] = {0.7, 0.3, -0.2, 1.1};

  snprintf(path, sizeof path, "%s/../tests/data/wheel_rest_directors.ocp", dir);
  if (HsProblemCreateFromFile(path, &P, msg, sizeof msg)) {
    CHECK(0, "%s", msg);
    return;
  }
  CHECK(P->ncinv == 1 && P->cinv_grad && P->cons_end_moves && !P->cons_end_moves[0] && P->cons_end_moves[1],
        "wheel_rest_directors: ncinv %d, moves %d %d", P->ncinv, P->cons_end_moves ? P->cons_end_moves[0] : -1,
        P->cons_end_moves ? P->cons_end_moves[1] : -1);
  if (P->cinv_grad && !P->cinv_grad(q, g, dg, P->ctx)) {
    double e = 0;
    for (int i = 0; i < 4; i++)
      e = fmax(e, fabs(g[i] - want[i]));
    CHECK(e < 1e-15 && dg[0 * 4 + 1] == -1 && dg[1 * 4 + 0] == 1 && dg[2 * 4 + 3] == -1 && dg[3 * 4 + 2] == 1,
          "wheel_rest_directors: grad_p L off by %.3g, or its q-derivatives wrong", e);
  }
  HsProblemDestroy(&P);
  CheckRefused(dir, "../tests/data/wheel_rest_directors.ocp", "conserved: L\n", "conserved: M", "not an invariant");
  CheckRefused(dir, "../tests/data/wheel_rest_directors.ocp", "invariant L:", "invariant L: a1*p_a2^2",
               "not linear in the momenta");
  CheckRefused(dir, "../tests/data/wheel_rest_directors.ocp", "xT:",
               "xT: 0.5403023058681398, 0.8414709848078965, *, *, "
               "0, 0, 0.1, 0",
               "free terminal coordinates with fixed momenta");
  CheckRefused(dir, "../tests/data/wheel_rest_directors.ocp", "xT:",
               "xT: 0.5403023058681398, 0.8414709848078965, *, *, "
               "*, *, *, *",
               "free terminal components or a terminal cost outside the exact class");
  CheckRefused(dir, "pendulum_cartesian.ocp", "R:", "R: 1\ninvariant K: x*p_y\nconserved: K",
               "conserved: only for a constrained problem in the extended class");
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : "problems";

  CheckFile(dir, "pendulum_cartesian.ocp");
  CheckFile(dir, "double_pendulum_cartesian.ocp");
  CheckFile(dir, "crane_natural.ocp");
  CheckFile(dir, "../tests/data/pendulum_cartesian_free.ocp");  /* free end, terminal cost: FreeEnd's rows */
  CheckFile(dir, "../tests/data/pendulum_cartesian_reach.ocp"); /* fixed coordinates, free momenta */
  CheckBlend(dir, "pendulum_cartesian.ocp");
  CheckBlend(dir, "double_pendulum_cartesian.ocp");
  CheckBlend(dir, "fourbar.ocp");
  CheckBlendFree(dir);
  CheckExtended(dir, "constraints:", "constraints: 0.5*(x^4 + y^2 - 1)", "not quadratic");
  CheckExtended(dir, "mass:", "mass: m*(1 + x^2), 0, 0, m", "mass matrix that depends on q");
  CheckExtended(dir, "potential:", "potential: m*g*y + 0.5*x^2", "not linear in q");
  CheckExtended(dir, "B:", "B: -y^2, x", "not affine");
  CheckRefused(dir, "pendulum_cartesian.ocp", "x0:", "x0: 0, -0.9, 0, 0", "x0: constraint 1");
  CheckRefused(dir, "pendulum_cartesian.ocp", "xT:", "xT: l, 0, 1, 0", "xT: the velocity");
  CheckRefused(dir, "pendulum_cartesian.ocp", "xT:", "xT: l, 0, *, 0", "momenta fixed in part");
  CheckRefused(dir, "pendulum_cartesian.ocp", "xT:", "xT: *, 0, 0, 0", "free terminal coordinates with fixed momenta");
  CheckRefused(dir, "double_pendulum_cartesian.ocp", "xT:", "xT: 1, 0, *, *, *, *, *, *",
               "constraint 1 involves only fixed terminal coordinates"); /* the tenth review: a singular Jacobian */
  CheckRefused(dir, "pendulum_cartesian.ocp", "potential:", "potential: m*g*y + x^4\nterminal_cost: x^2",
               "terminal cost outside the exact class");
  CheckRefused(dir, "../tests/data/pendulum_cartesian_reach.ocp", "mass:", "mass: m*(1 + x^2), 0, 0, m",
               "free terminal components or a terminal cost outside the exact class");
  CheckRefused(dir, "double_pendulum_cartesian.ocp", "constraints:",
               "constraints: 0.5*(x1^2 + y1^2 - 1), x1^2 + y1^2 - 1", "dependent");
  CheckRefused(dir, "pendulum_cartesian.ocp", "constraints:", "constraints: 0.5*(x^2 + y^2 - l^2), x, y",
               "leave no motion");
  CheckRefused(dir, "pendulum_cartesian.ocp", "R:", "R: 1\nrunning_cost: x^2", "running cost");
  CheckRestEnd(dir);
  CheckPhi3(dir, "pendulum_cartesian.ocp", NULL);
  CheckPhi3(dir, "pendulum_cartesian.ocp", "constraints: 0.5*(x^2 + y^2 - l^2) + 0.2*x^2*y*(x^2 + y^2 - l^2)");
  CheckPhi3(dir, "double_pendulum_cartesian.ocp",
            "constraints: 0.5*(x1^2 + y1^2 - 1)*(1 + 0.3*x1*y1), 0.5*((x2 - x1)^2 + (y2 - y1)^2 - 1)*(1 + "
            "0.2*sin(x2)*y1)");
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
