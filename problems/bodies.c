/* hamshoot: rigid bodies and joints in problem files (docs/multibody.md).
 *
 * A text expansion before the normal parse (problems/ocp.c): the lines
 *
 *   body NAME: planar|spatial, MASS, E1, E2[, E3]    centre phi and 2 or 3 directors, mass diag(m I, E1 I, ...)
 *   point NAME: BODY|ground, C1, C2[, C3]            phi + sum C_i d_i (ground: the fixed point C)
 *   joint NAME: revolute|spherical, P1, P2[, axis I J]  P1 = P2; spatial revolute: director I of P1's body
 *                                                    parallel to director J of P2's body
 *   joint NAME: prismatic, P1, P2, axis I            P2 slides along director I of P1's body, directors locked
 *   rotor NAME: BODY, I, L, MASS, E_AXIAL, E_ACROSS  a rotor spinning about director I of a spatial body, its
 *                                                    centre at phi + L d_I: two directors of its own
 *   torque NAME: JOINT|ROTOR                         a control: the joint's torque (prismatic: force) on P2's
 *                                                    body (minus on P1's), or the rotor's motor torque (minus on
 *                                                    its body)
 *   gravity: G1, G2[, G3]                            V = -sum m g.phi
 *   start|end NAME: PX, PY, ANGLE | PX, PY, PZ, W, X, Y, Z | ANGLE   x0 | xT at rest: a body's centre and angle
 *                                                    (planar) or quaternion (spatial), a rotor's angle
 *
 * become the keys coordinates, mass, constraints, potential (added to a 'potential' of the file), controls and B (and
 * for a free system, without gravity or a joint to the ground, its linear and angular momentum as 'invariant' lines),
 * written as text after the file's last line (the body lines become blank lines, so every other line keeps its
 * number), which the parser then reads like any problem file: everything downstream is unchanged. An error in
 * the generated text is reported at the body line it comes from (HsBodiesCreate).
 */
#include "hsbodies.h"
#include "hsocp.h"
#include "hstext.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { J_REVOLUTE, J_SPHERICAL, J_PRISMATIC };
enum { G_COORD, G_MASS, G_CONS, G_POT, G_CONTROLS, G_B, G_X0, G_XT, G_COUNT };

typedef struct {
  char *name, *mass, *E[3];
  int   line, dim, base;
  char *pose[2][7]; /* 'start' and 'end': the centre and the angle (planar) or quaternion (spatial) */
  int   pose_line[2];
} Body;

typedef struct {
  char *name, *c[3];
  int   line, body; /* -1: ground */
} Point;

typedef struct {
  char *name;
  int   line, kind, p1, p2, ax1, ax2; /* axes 1..3 (spatial revolute), 0 otherwise */
} Joint;

typedef struct {
  char *name, *l, *m, *Ea, *Et;
  int   line, body, axis, base; /* axis 1..3; base: its first coordinate (its directors e1, e2) */
  char *pose[2][1];             /* 'start' and 'end': its angle */
  int   pose_line[2];
} Rotor;

typedef struct {
  char *name;
  int   line, joint, rotor; /* one of them -1 */
  int   consistent;         /* 'consistent': B at the contravariant directors (docs/consistent-torques.md) */
} Torque;

typedef struct {
  Body        body[HS_BODIES_MAX];
  Point       point[HS_BODIES_MAX];
  Joint       joint[HS_BODIES_MAX];
  Torque      torque[HS_BODIES_MAX];
  Rotor       rotor[HS_BODIES_MAX];
  int         nb, np, nj, nt, nr, dim, n, nbc; /* nbc: the bodies' coordinates (the rotors' follow) */
  char       *g[3];
  int         ng, gline;
  int         pot_line, key_line[G_COUNT]; /* the file's 'potential' line; lines of keys the bodies generate */
  int         origin[G_COUNT];             /* generated key -> the body line it is reported at */
  char       *is_body;                     /* per line (1-based): a body line */
  int         nlines, gen_line[G_COUNT];   /* the file's lines; the generated keys' lines in the expanded text */
  int         inv_line;                    /* the first generated 'invariant' line in the expanded text (0: none) */
  const char *path;
  int         line;
  char       *msg;
  int         msglen;
} Model;

typedef struct {
  char  *s;
  size_t len, cap;
  int    err; /* 1 out of memory, 2 longer than HS_OCP_MAX_BYTES */
} Buf;

/* Appends to b; the expansion is capped as a file is (HS_OCP_MAX_BYTES): an expression repeated by every joint that
 * names its point had made 350 MB of text (and 1 GB of memory) from a 0.9 MB file. */
static void Put(Buf *b, const char *fmt, ...)
{
  va_list ap;
  int     k;

  if (b->err)
    return;
  va_start(ap, fmt);
  k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0 || b->len + (size_t)k + 1 > HS_OCP_MAX_BYTES) {
    b->err = 2;
    return;
  }
  if (b->len + (size_t)k + 1 > b->cap) {
    size_t cap = 2 * (b->len + (size_t)k + 1) + 256;
    char  *s   = realloc(b->s, cap);
    if (!s) {
      b->err = 1;
      return;
    }
    b->s = s, b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)k;
}

static int Fail(Model *M, int col, const char *fmt, ...)
{
  va_list ap;
  int     ret;

  va_start(ap, fmt);
  ret = HsTextFailV(M->msg, M->msglen, M->path, M->line, col, fmt, ap);
  va_end(ap);
  return ret;
}

static int IsName(const char *t)
{
  if (!isalpha((unsigned char)*t) && *t != '_')
    return 0;
  for (; *t; t++)
    if (!isalnum((unsigned char)*t) && *t != '_')
      return 0;
  return 1;
}

/* The kind of a key: 1 body, 2 point, 3 joint, 4 torque, 5 rotor, 6 gravity, 7 start, 8 end, 0 another key; *name:
 * the NAME after the word. */
static int BodyKey(char *key, char **name)
{
  static const char *words[] = {"body", "point", "joint", "torque", "rotor", "\n", "start", "end"};
  *name                      = NULL;
  if (!strcmp(key, "gravity"))
    return 6;
  for (int k = 0; k < 8; k++) {
    size_t l = strlen(words[k]);
    if (!strncmp(key, words[k], l) && (!key[l] || isspace((unsigned char)key[l]))) {
      *name = HsTextTrim(key + l);
      return k + 1;
    }
  }
  return 0;
}

/* Splits val at the commas outside parentheses (in place): up to max items, trimmed; their count, max + 1 for more,
 * or -1 if the parentheses do not balance (an item is then no expression on its own). */
static int Split(char *val, char **item, int max)
{
  int n = 0, depth = 0;
  item[n++] = val;
  for (char *c = val; *c; c++) {
    depth += *c == '(' ? 1 : *c == ')' ? -1 : 0;
    if (depth < 0)
      return -1;
    if (*c == ',' && !depth) {
      *c = 0;
      if (n == max)
        return max + 1;
      item[n++] = c + 1;
    }
  }
  for (int i = 0; i < n; i++)
    item[i] = HsTextTrim(item[i]);
  return depth ? -1 : n;
}

static int FindName(char *const *names, size_t stride, int cnt, const char *name)
{
  for (int i = 0; i < cnt; i++)
    if (!strcmp(*(char *const *)((const char *)names + stride * (size_t)i), name))
      return i;
  return -1;
}

#define FIND(arr, cnt, key) FindName(&(arr)[0].name, sizeof((arr)[0]), (cnt), (key))

static int Dup(char **dst, const char *src) { return (*dst = strdup(src)) ? 0 : HS_ENOMEM; }

/* 'body NAME: planar|spatial, MASS, E1, E2[, E3]' */
static int ParseBody(Model *M, const char *name, char **it, int ni, int col)
{
  Body *b = &M->body[M->nb];
  int   dim, ret;

  if (ni < 1 || (strcmp(it[0], "planar") && strcmp(it[0], "spatial")))
    return Fail(M, col, "body %s: expected 'planar' or 'spatial' first", name);
  dim = it[0][0] == 'p' ? 2 : 3;
  if (ni != 2 + dim)
    return Fail(M, col, "body %s: a %s body takes its mass and %d Euler-tensor values (%d items after '%s'), found %d",
                name, it[0], dim, 1 + dim, it[0], ni - 1);
  if (M->dim && dim != M->dim)
    return Fail(M, col, "body %s: a %s body among %s ones (line %d): all bodies of a file are planar or all spatial",
                name, it[0], M->dim == 2 ? "planar" : "spatial", M->body[0].line);
  for (int i = 1; i < ni; i++)
    if (!*it[i])
      return Fail(M, col, "body %s: item %d is empty", name, i + 1);
  M->dim = dim, b->dim = dim, b->line = M->line, b->base = M->n;
  M->n += dim * (dim + 1);
  if ((ret = Dup(&b->name, name)) || (ret = Dup(&b->mass, it[1])))
    return ret;
  for (int i = 0; i < dim; i++)
    if ((ret = Dup(&b->E[i], it[2 + i])))
      return ret;
  M->nb++;
  return 0;
}

/* 'point NAME: BODY|ground, C1, C2[, C3]' */
static int ParsePoint(Model *M, const char *name, char **it, int ni, int col)
{
  Point *p = &M->point[M->np];
  int    ret;

  if (!M->dim)
    return Fail(M, col, "point %s: declare a body first (its dimension sets the point's)", name);
  p->body = strcmp(it[0], "ground") ? FIND(M->body, M->nb, it[0]) : -1;
  if (p->body < 0 && strcmp(it[0], "ground"))
    return Fail(M, col, "point %s: unknown body '%s' (a body must be declared above its points)", name, it[0]);
  if (ni != 1 + M->dim)
    return Fail(M, col, "point %s: expected the body and %d coordinates in its directors, found %d items", name, M->dim,
                ni);
  for (int i = 1; i < ni; i++)
    if (!*it[i])
      return Fail(M, col, "point %s: coordinate %d is empty", name, i);
  p->line = M->line;
  if ((ret = Dup(&p->name, name)))
    return ret;
  for (int i = 0; i < M->dim; i++)
    if ((ret = Dup(&p->c[i], it[1 + i])))
      return ret;
  M->np++;
  return 0;
}

/* Director numbers: text is exactly 'axis I' (count 1), 'axis I J' (count 2) or, without the word (word NULL), 'I';
 * each a decimal 1..3 (blanks between items). 0 when so, with the numbers in a[]; -1 else (scanf's
 * %d had read 'axis 4294967297' as 1 and 'axis 3 3.7' or 'axis 3 3 3' as 3 3). */
static int DirectorNumbers(const char *text, const char *word, int count, int *a)
{
  const char *p = text;

  if (word) {
    if (strncmp(p, word, strlen(word)))
      return -1;
    p += strlen(word);
  }
  for (int k = 0; k < count; k++) {
    if ((word || k) && *p != ' ' && *p != '\t')
      return -1;
    p += strspn(p, " \t");
    if (*p < '1' || *p > '3')
      return -1;
    a[k] = *p++ - '0';
  }
  return p[strspn(p, " \t")] ? -1 : 0;
}

/* 'joint NAME: revolute|spherical, P1, P2[, axis I J]' */
static int ParseJoint(Model *M, const char *name, char **it, int ni, int col)
{
  Joint *j = &M->joint[M->nj];
  int    b1, b2, axes[2];

  if (ni < 3 || (strcmp(it[0], "revolute") && strcmp(it[0], "spherical") && strcmp(it[0], "prismatic")))
    return Fail(M, col, "joint %s: expected 'revolute', 'spherical' or 'prismatic', then two points", name);
  j->kind = it[0][0] == 'r' ? J_REVOLUTE : it[0][0] == 's' ? J_SPHERICAL : J_PRISMATIC;
  for (int k = 0; k < 2; k++)
    if ((*(k ? &j->p2 : &j->p1) = FIND(M->point, M->np, it[1 + k])) < 0)
      return Fail(M, col, "joint %s: unknown point '%s' (a point must be declared above its joints)", name, it[1 + k]);
  b1 = M->point[j->p1].body, b2 = M->point[j->p2].body;
  if (b1 == b2)
    return Fail(M, col, "joint %s: points %s and %s are on the same %s%s", name, it[1], it[2],
                b1 < 0 ? "ground" : "body ", b1 < 0 ? "" : M->body[b1].name);
  if (j->kind == J_PRISMATIC && (ni != 4 || DirectorNumbers(it[3], "axis", 1, &j->ax1) || j->ax1 > M->dim))
    return Fail(M, col,
                "joint %s: a prismatic joint needs 'axis I' (I in 1..%d: %s slides along director I of %s's "
                "body) as its fourth item",
                name, M->dim, it[2], it[1]);
  if (M->dim == 2 && (j->kind == J_SPHERICAL || (j->kind == J_REVOLUTE && ni != 3)))
    return Fail(M, col,
                "joint %s: planar bodies join by 'revolute, P1, P2' (no axis: every planar axis is normal "
                "to the plane)",
                name);
  if (M->dim == 3 && j->kind == J_REVOLUTE && (ni != 4 || DirectorNumbers(it[3], "axis", 2, axes)))
    return Fail(M, col,
                "joint %s: a spatial revolute joint needs 'axis I J' (I, J in 1..3: director I of %s's body "
                "along director J of %s's body) as its fourth item",
                name, it[1], it[2]);
  if (M->dim == 3 && j->kind == J_REVOLUTE)
    j->ax1 = axes[0], j->ax2 = axes[1];
  if (M->dim == 3 && j->kind == J_SPHERICAL && ni != 3)
    return Fail(M, col, "joint %s: a spherical joint takes two points only", name);
  j->line = M->line;
  M->nj++;
  return Dup(&j->name, name);
}

/* 'rotor NAME: BODY, I, L, MASS, E_AXIAL, E_ACROSS' */
static int ParseRotor(Model *M, const char *name, char **it, int ni, int col)
{
  Rotor *r = &M->rotor[M->nr];
  int    ret;

  if (ni != 6)
    return Fail(M, col, "rotor %s: expected 'BODY, I, L, MASS, E_AXIAL, E_ACROSS' (6 items), found %d", name, ni);
  if ((r->body = FIND(M->body, M->nb, it[0])) < 0 || M->body[r->body].dim != 3)
    return Fail(M, col, "rotor %s: '%s' is not a spatial body declared above", name, it[0]);
  if (DirectorNumbers(it[1], NULL, 1, &r->axis))
    return Fail(M, col, "rotor %s: its axis '%s' is not a director's number 1, 2 or 3", name, it[1]);
  for (int i = 2; i < 6; i++)
    if (!*it[i])
      return Fail(M, col, "rotor %s: item %d is empty", name, i + 1);
  r->line = M->line;
  if ((ret = Dup(&r->name, name)) || (ret = Dup(&r->l, it[2])) || (ret = Dup(&r->m, it[3])) ||
      (ret = Dup(&r->Ea, it[4])) || (ret = Dup(&r->Et, it[5])))
    return ret;
  M->nr++;
  return 0;
}

/* 'torque NAME: JOINT|ROTOR' and 'gravity: G1, G2[, G3]' */
static int ParseTorqueGravity(Model *M, int kind, const char *name, char **it, int ni, int col)
{
  Torque *t = &M->torque[M->nt];

  if (kind == 6) {
    if (M->gline)
      return Fail(M, col, "gravity given twice (line %d)", M->gline);
    if (ni < 2 || ni > 3)
      return Fail(M, col, "gravity: expected 2 (planar) or 3 (spatial) components, found %d", ni);
    M->ng = ni, M->gline = M->line;
    for (int i = 0; i < ni; i++)
      if (Dup(&M->g[i], it[i]))
        return HS_ENOMEM;
    return 0;
  }
  if (ni > 2) /* 'JOINT, consistent, x': its items, not the joint's name, are wrong */
    return Fail(M, col, "torque %s: expected 'JOINT' or 'JOINT, consistent' (or a rotor), found %d items", name, ni);
  t->consistent = ni == 2 && !strcmp(it[1], "consistent");
  if (ni == 2 && !t->consistent)
    return Fail(M, col, "torque %s: expected 'JOINT' or 'JOINT, consistent' (or a rotor), found '%s' after it", name,
                it[1]);
  t->joint = ni == 1 + t->consistent ? FIND(M->joint, M->nj, it[0]) : -1;
  t->rotor = ni == 1 + t->consistent ? FIND(M->rotor, M->nr, it[0]) : -1;
  if (t->joint < 0 && t->rotor < 0)
    return Fail(M, col, "torque %s: expected the name of a joint or rotor declared above, found '%s'", name, it[0]);
  if (t->consistent && t->joint >= 0 && M->joint[t->joint].kind == J_PRISMATIC)
    return Fail(M, col, "torque %s: 'consistent' applies to a torque (a revolute joint or a rotor), not to a force",
                name);
  if (t->joint >= 0 && M->joint[t->joint].kind == J_SPHERICAL)
    return Fail(M, col, "torque %s: joint %s is spherical: a torque acts about a revolute joint's axis", name, it[0]);
  for (int i = 0; i < M->nt; i++)
    if (t->joint >= 0 ? M->torque[i].joint == t->joint : M->torque[i].rotor == t->rotor)
      return Fail(M, col, "torque %s: %s already has torque %s (line %d)", name, it[0], M->torque[i].name,
                  M->torque[i].line);
  t->line = M->line;
  M->nt++;
  return Dup(&t->name, name);
}

/* 'start NAME: ...' (e = 0) or 'end NAME: ...' (e = 1): a body's centre and its angle (planar) or the quaternion of
 * its rotation (spatial), or a rotor's angle. */
static int ParsePose(Model *M, int e, const char *name, char **it, int ni, int col)
{
  static const char *word[] = {"start", "end"};
  int                b = FIND(M->body, M->nb, name), r = b < 0 ? FIND(M->rotor, M->nr, name) : -1, want, *line;
  char             **pose;

  if (b < 0 && r < 0)
    return Fail(M, 1, "%s %s: no body or rotor of that name above", word[e], name);
  want = r >= 0 ? 1 : M->body[b].dim == 2 ? 3 : 7;
  line = r >= 0 ? &M->rotor[r].pose_line[e] : &M->body[b].pose_line[e];
  pose = r >= 0 ? M->rotor[r].pose[e] : M->body[b].pose[e];
  if (*line)
    return Fail(M, 1, "%s %s: given twice (line %d)", word[e], name, *line);
  if (ni != want)
    return Fail(M, col, "%s %s: expected %s, found %d items", word[e], name,
                r >= 0      ? "the rotor's angle"
                : want == 3 ? "the centre and the angle of d1 from e1 (3 items)"
                            : "the centre and a quaternion w, x, y, z of the rotation (7 items)",
                ni);
  for (int i = 0; i < ni; i++)
    if (!*it[i])
      return Fail(M, col, "%s %s: item %d is empty", word[e], name, i + 1);
    else if (Dup(&pose[i], it[i]))
      return HS_ENOMEM;
  *line = M->line;
  return 0;
}

/* One body line (kind 1..8 of BodyKey): the name checked, the value split, then the parser of its kind. */
static int ParseLine(Model *M, int kind, const char *name, char *val, int col)
{
  static const char *what[] = {"", "body", "point", "joint", "torque", "rotor", "gravity", "start", "end"};
  char              *it[8];
  int                ni, cnt[] = {0, M->nb, M->np, M->nj, M->nt, M->nr}, prev = -1;

  if (kind < 6 && strlen(name) > HS_BODIES_NAME_MAX)
    return Fail(M, 1, "%s: a name of at most %d characters", what[kind], HS_BODIES_NAME_MAX);
  if (kind < 6 && (!IsName(name) || !strcmp(name, "ground")))
    return Fail(M, 1, "%s: '%s' is not a name (a letter or '_', then letters, digits, '_'; not 'ground')", what[kind],
                name);
  if (kind == 1 || kind == 5) /* bodies and rotors: one namespace (a pose names either) */
    prev = FIND(M->body, M->nb, name) >= 0 ? 1 : FIND(M->rotor, M->nr, name) >= 0 ? 5 : -1;
  else if (kind == 2)
    prev = FIND(M->point, M->np, name) >= 0 ? 2 : -1;
  if (prev < 0 && (kind == 3 || kind == 5)) /* joints and rotors: one namespace (a torque names either) */
    prev = FIND(M->joint, M->nj, name) >= 0 ? 3 : FIND(M->rotor, M->nr, name) >= 0 ? 5 : -1;
  else if (kind == 4)
    prev = FIND(M->torque, M->nt, name) >= 0 ? 4 : -1;
  if (prev >= 0) /* the kind of the name's first declaration */
    return Fail(M, 1, "duplicate %s name '%s'", what[prev], name);
  if (kind < 6 && cnt[kind] == HS_BODIES_MAX)
    return Fail(M, 1, "more than %d %s lines (HS_BODIES_MAX)", HS_BODIES_MAX, what[kind]);
  if ((ni = Split(val, it, 8)) > 7 || ni < 0 || !*val)
    return Fail(M, col, "%s: %s", what[kind],
                !*val    ? "no value"
                : ni < 0 ? "unbalanced parentheses"
                         : "too many items");
  if (kind >= 7)
    return ParsePose(M, kind - 7, name, it, ni, col);
  switch (kind) {
  case 1:
    return ParseBody(M, name, it, ni, col);
  case 2:
    return ParsePoint(M, name, it, ni, col);
  case 3:
    return ParseJoint(M, name, it, ni, col);
  case 5:
    return ParseRotor(M, name, it, ni, col);
  default:
    return ParseTorqueGravity(M, kind, name, it, ni, col);
  }
}

/* Coordinate names: body b's centre (dir 0) or director dir (1..3), component k (0..2). */
static void Coord(char *dst, size_t len, const Body *b, int dir, int k)
{
  if (dir)
    snprintf(dst, len, "%s_%d%c", b->name, dir, "xyz"[k]);
  else
    snprintf(dst, len, "%s_%c", b->name, "xyz"[k]);
}

/* Coordinate names of rotor k's transverse director dir (1, 2), component c. */
static void RotorCoord(char *dst, size_t len, const Rotor *R, int dir, int c)
{
  snprintf(dst, len, "%s_%d%c", R->name, dir, "xyz"[c]);
}

/* Component k of point p: phi + sum_i c_i d_i, or the ground point's constant. */
static void PutPoint(Buf *o, const Model *M, const Point *p, int k)
{
  char c[160];

  if (p->body < 0) {
    Put(o, "(%s)", p->c[k]);
    return;
  }
  Coord(c, sizeof c, &M->body[p->body], 0, k);
  Put(o, "%s", c);
  for (int i = 0; i < M->dim; i++) {
    Coord(c, sizeof c, &M->body[p->body], i + 1, k);
    Put(o, " + (%s)*%s", p->c[i], c);
  }
}

/* The dot product of director i of body a and director j of body b (ground: its unit vectors). */
static void PutDot(Buf *o, const Model *M, int a, int i, int b, int j)
{
  char x[160], y[160];

  if (a < 0 && b < 0) {
    Put(o, "%d", i == j);
    return;
  }
  if (a < 0) {
    Coord(x, sizeof x, &M->body[b], j, i - 1);
    Put(o, "%s", x);
    return;
  }
  if (b < 0) {
    Coord(x, sizeof x, &M->body[a], i, j - 1);
    Put(o, "%s", x);
    return;
  }
  for (int k = 0; k < M->dim; k++) {
    Coord(x, sizeof x, &M->body[a], i, k), Coord(y, sizeof y, &M->body[b], j, k);
    Put(o, "%s%s*%s", k ? " + " : "", x, y);
  }
}

/* A prismatic joint's constraints: the two bodies' directors locked together (d1.e2 = 0 planar; d1.e2, d1.e3, d2.e3
 * spatial, d of P1's body, e of P2's), and P2 - P1 normal to the directors of P1's body other than the axis I. */
static void PutPrismatic(Buf *o, const Model *M, const Joint *J)
{
  int  b1 = M->point[J->p1].body, b2 = M->point[J->p2].body;
  char x[160];

  for (int i = 1; i <= M->dim; i++)
    for (int j = i + 1; j <= M->dim; j++)
      if (i == 1 || j == 3)
        Put(o, ", "), PutDot(o, M, b1, i, b2, j);
  for (int k = 1; k <= M->dim; k++) {
    if (k == J->ax1)
      continue;
    Put(o, ", ");
    for (int c = 0; c < M->dim; c++) {
      if (b1 < 0 && c != k - 1)
        continue;
      Put(o, "%s(", b1 < 0 || !c ? "" : " + "), PutPoint(o, M, &M->point[J->p2], c), Put(o, " - (");
      PutPoint(o, M, &M->point[J->p1], c), Put(o, "))");
      if (b1 >= 0)
        Coord(x, sizeof x, &M->body[b1], k, c), Put(o, "*%s", x);
    }
  }
}

/* 'constraints:' each body's directors orthonormal (norms, then the products), then each joint: P1 - P2 = 0 and, for
 * a spatial revolute joint, director I of P1's body normal to the two directors of P2's body other than J (of P1's
 * other two and ground's J when P2 is on the ground). */
static void PutConstraints(Buf *o, const Model *M)
{
  const char *sep = "";
  char        x[160];

  Put(o, "constraints: ");
  for (int b = 0; b < M->nb; b++) {
    for (int i = 1; i <= M->dim; i++, sep = ", ") {
      Put(o, "%s0.5*(", sep);
      for (int k = 0; k < M->dim; k++)
        Coord(x, sizeof x, &M->body[b], i, k), Put(o, "%s%s^2", k ? " + " : "", x);
      Put(o, " - 1)");
    }
    for (int i = 1; i <= M->dim; i++)
      for (int j = i + 1; j <= M->dim; j++)
        Put(o, ", "), PutDot(o, M, b, i, b, j);
  }
  for (int k = 0; k < M->nr; k++) { /* |e1| = |e2| = 1, e1.e2 = 0, e1.d_i = e2.d_i = 0 */
    const Rotor *R = &M->rotor[k];
    char         y[160];
    for (int i = 1; i <= 2; i++) {
      Put(o, ", 0.5*(");
      for (int c = 0; c < 3; c++)
        RotorCoord(x, sizeof x, R, i, c), Put(o, "%s%s^2", c ? " + " : "", x);
      Put(o, " - 1)");
    }
    for (int i = 0; i <= 2; i++) {
      Put(o, ", ");
      for (int c = 0; c < 3; c++) {
        RotorCoord(x, sizeof x, R, i ? i : 1, c);
        if (i)
          Coord(y, sizeof y, &M->body[R->body], R->axis, c);
        else
          RotorCoord(y, sizeof y, R, 2, c);
        Put(o, "%s%s*%s", c ? " + " : "", x, y);
      }
    }
  }
  for (int jn = 0; jn < M->nj; jn++) {
    const Joint *J  = &M->joint[jn];
    int          b1 = M->point[J->p1].body, b2 = M->point[J->p2].body;
    if (J->kind == J_PRISMATIC) {
      PutPrismatic(o, M, J);
      continue;
    }
    for (int k = 0; k < M->dim; k++)
      Put(o, ", "), PutPoint(o, M, &M->point[J->p1], k), Put(o, " - ("), PutPoint(o, M, &M->point[J->p2], k),
          Put(o, ")");
    for (int k = 1; J->kind == J_REVOLUTE && J->ax1 && k <= 3; k++)
      if (b2 >= 0 && k != J->ax2)
        Put(o, ", "), PutDot(o, M, b1, J->ax1, b2, k);
      else if (b2 < 0 && k != J->ax1)
        Put(o, ", "), PutDot(o, M, b1, k, b2, J->ax2);
  }
  Put(o, "\n");
}

/* 'mass:' diag(m I, E1 I, E2 I[, E3 I]) for each body. */
/* Entry (r, c) of the mass matrix (PutMass). */
static void PutMassEntry(Buf *o, const Model *M, int r, int c)
{
  int    b = 0, dim = M->dim, dr, dc;
  size_t n0 = o->len;

  if (r >= M->nbc || c >= M->nbc) { /* a rotor's transverse directors: E_across each */
    if (r == c)
      Put(o, "%s", M->rotor[(r - M->nbc) / 6].Et);
  } else {
    while (b + 1 < M->nb && M->body[b + 1].base <= r)
      b++;
    dr = (r - M->body[b].base) / dim, dc = (c - M->body[b].base) / dim;
    if (c >= M->body[b].base && c < M->body[b].base + dim * (dim + 1) && (r - c) % dim == 0) {
      if (dr == dc)
        Put(o, "%s", dr ? M->body[b].E[dr - 1] : M->body[b].mass);
      for (int k = 0; k < M->nr; k++) { /* a rotor at phi + l d_i: m |phi' + l d_i'|^2 + E_axial |d_i'|^2 */
        const Rotor *R = &M->rotor[k];
        if (R->body != b)
          continue;
        if (dr == dc && !dr)
          Put(o, " + (%s)", R->m);
        else if (dr == dc && dr == R->axis)
          Put(o, " + (%s)*(%s)^2 + (%s)", R->m, R->l, R->Ea);
        else if ((!dr && dc == R->axis) || (!dc && dr == R->axis))
          Put(o, "%s(%s)*(%s)", o->len > n0 ? " + " : "", R->m, R->l);
      }
    }
  }
  if (o->len == n0)
    Put(o, "0");
}

/* 'mass:' diag(m I, E1 I, E2 I[, E3 I]) for each body, with its rotors' mass and axial Euler value on its centre and
 * axis director (and their coupling m l), then E_across I for each rotor director. */
static void PutMass(Buf *o, const Model *M)
{
  Put(o, "mass: ");
  for (int r = 0; r < M->n; r++)
    for (int c = 0; c < M->n; c++)
      Put(o, "%s", r || c ? ", " : ""), PutMassEntry(o, M, r, c);
  Put(o, "\n");
}

/* 'coordinates:' and 'potential:' (gravity: V = -sum_b m_b g.phi_b; with user, the file's potential plus it). */
static void PutCoordsPotential(Buf *o, const Model *M, int which, const char *user)
{
  char x[160];

  if (which == G_COORD) {
    Put(o, "coordinates: ");
    for (int b = 0; b < M->nb; b++)
      for (int d = 0; d <= M->dim; d++)
        for (int k = 0; k < M->dim; k++)
          Coord(x, sizeof x, &M->body[b], d, k), Put(o, "%s%s", b || d || k ? ", " : "", x);
    for (int r = 0; r < M->nr; r++)
      for (int d = 1; d <= 2; d++)
        for (int k = 0; k < 3; k++)
          RotorCoord(x, sizeof x, &M->rotor[r], d, k), Put(o, ", %s", x);
    Put(o, "\n");
    return;
  }
  if (user)
    Put(o, "%s%s", user, M->ng ? " + " : "");
  else
    Put(o, "potential: %s", M->ng ? "" : "0");
  if (M->ng) {
    Put(o, "-(");
    for (int b = 0; b < M->nb; b++) {
      Put(o, "%s(%s)*(", b ? " + " : "", M->body[b].mass);
      for (int k = 0; k < M->dim; k++)
        Coord(x, sizeof x, &M->body[b], 0, k), Put(o, "%s(%s)*%s", k ? " + " : "", M->g[k], x);
      Put(o, ")");
    }
    for (int r = 0; r < M->nr; r++) { /* a rotor's centre phi + l d_i */
      const Rotor *R = &M->rotor[r];
      char         y[160];
      Put(o, " + (%s)*(", R->m);
      for (int k = 0; k < 3; k++) {
        Coord(x, sizeof x, &M->body[R->body], 0, k), Coord(y, sizeof y, &M->body[R->body], R->axis, k);
        Put(o, "%s(%s)*(%s + (%s)*%s)", k ? " + " : "", M->g[k], x, R->l, y);
      }
      Put(o, ")");
    }
    Put(o, ")");
  }
  Put(o, "\n");
}

/* B's entry for coordinate r and torque t: the joint's torque acts on P2's body about its axis (+) and on P1's body
 * (-); the rate of a body's angle about its director k, on the constraints, is 1/2 (d_j.d_i' - d_i.d_j') with
 * (i, j, k) cyclic (planar: 1/2 (d_1 x d_1' + d_2 x d_2')), linear in the directors. */
/* The three component names of a vector: body b's director dir (1..3), rotor k's director dir (1, 2), or the ground's
 * unit vector e_dir (b = -1). */
static void Vec3(char v[3][160], const Model *M, int b, int rotor, int dir)
{
  for (int c = 0; c < 3; c++) {
    if (rotor >= 0)
      RotorCoord(v[c], sizeof v[c], &M->rotor[rotor], dir, c);
    else if (b >= 0)
      Coord(v[c], sizeof v[c], &M->body[b], dir, c);
    else
      snprintf(v[c], sizeof v[c], "%d", c == dir - 1);
  }
}

/* The consistent force of the torque s u n on a spatial frame f (three vectors) on its vector i (0..2), component c:
 * 1/2 s (n x f^i)_c with the contravariant f^i = f_j x f_k / det f ((i, j, k) cyclic), i.e.
 * 1/2 s (f_j,c (n.f_k) - f_k,c (n.f_j)) / (f_1.(f_2 x f_3)). */
static void PutConsistent3(Buf *o, char f[3][3][160], char n[3][160], int i, int c, int s)
{
  int j = (i + 1) % 3, k = (i + 2) % 3;

  Put(o, "%s0.5*(%s*(%s*%s + %s*%s + %s*%s) - %s*(%s*%s + %s*%s + %s*%s))/", s < 0 ? "-" : "", f[j][c], n[0], f[k][0],
      n[1], f[k][1], n[2], f[k][2], f[k][c], n[0], f[j][0], n[1], f[j][1], n[2], f[j][2]);
  Put(o, "(%s*(%s*%s - %s*%s) + %s*(%s*%s - %s*%s) + %s*(%s*%s - %s*%s))", f[0][0], f[1][1], f[2][2], f[1][2], f[2][1],
      f[0][1], f[1][2], f[2][0], f[1][0], f[2][2], f[0][2], f[1][0], f[2][1], f[1][1], f[2][0]);
}

/* B's entry of a consistent torque (docs/consistent-torques.md) on body coordinate (b, dir, comp): the body's part
 * (sign s; planar: 1/2 s d_2/D on d_1, -1/2 s d_1/D on d_2, D = d_1 x d_2; spatial: PutConsistent3 with the axis n
 * of the child's director, the rotor's axis), and for a rotor torque on its axis director the rotor's part. */
static void PutBConsistentBody(Buf *o, const Model *M, const Torque *T, int b, int dir, int comp, int s)
{
  const Joint *J  = T->joint >= 0 ? &M->joint[T->joint] : NULL;
  const Rotor *Rt = T->rotor >= 0 ? &M->rotor[T->rotor] : NULL;
  char         f[3][3][160], n[3][160], x[160], y[4][160];
  int          terms = 0;

  if (M->dim == 2 && s) {
    Coord(x, sizeof x, &M->body[b], 3 - dir, comp);
    for (int d = 0; d < 4; d++)
      Coord(y[d], sizeof y[d], &M->body[b], d / 2 + 1, d % 2);
    Put(o, "%s0.5*%s/(%s*%s - %s*%s)", (dir == 1 ? s : -s) < 0 ? "-" : "", x, y[0], y[3], y[1], y[2]);
    return;
  }
  if (Rt)
    Vec3(n, M, Rt->body, -1, Rt->axis);
  else
    Vec3(n, M, M->point[J->p2].body, -1, J->ax2);
  if (s) {
    for (int i = 0; i < 3; i++)
      Vec3(f[i], M, b, -1, i + 1);
    PutConsistent3(o, f, n, dir - 1, comp, s), terms++;
  }
  if (Rt && b == Rt->body && dir == Rt->axis) { /* the rotor's frame (e1, e2, d_I): its third vector */
    Vec3(f[0], M, -1, T->rotor, 1), Vec3(f[1], M, -1, T->rotor, 2), Vec3(f[2], M, b, -1, dir);
    Put(o, "%s", terms ? " + " : ""), PutConsistent3(o, f, n, 2, comp, 1), terms++;
  }
  if (!terms)
    Put(o, "0");
}

/* B's entry for coordinate r and a consistent torque t: 0 on the centres; a rotor's own directors e1, e2 from its
 * frame (e1, e2, d_I); the bodies' directors by PutBConsistentBody. */
static void PutBConsistent(Buf *o, const Model *M, int r, int t)
{
  const Torque *T = &M->torque[t];
  const Joint  *J = T->joint >= 0 ? &M->joint[T->joint] : NULL;
  char          f[3][3][160], n[3][160];
  int           b = 0, dir, comp, s;

  if (r >= M->nbc) {
    int k = (r - M->nbc) / 6;
    if (T->rotor != k) {
      Put(o, "0");
      return;
    }
    Vec3(f[0], M, -1, k, 1), Vec3(f[1], M, -1, k, 2), Vec3(f[2], M, M->rotor[k].body, -1, M->rotor[k].axis);
    memcpy(n, f[2], sizeof n);
    PutConsistent3(o, f, n, (r - M->nbc) % 6 / 3, (r - M->nbc) % 3, 1);
    return;
  }
  while (b + 1 < M->nb && M->body[b + 1].base <= r)
    b++;
  dir = (r - M->body[b].base) / M->dim, comp = (r - M->body[b].base) % M->dim;
  s = J ? (b == M->point[J->p2].body   ? 1
           : b == M->point[J->p1].body ? -1
                                       : 0)
        : (b == M->rotor[T->rotor].body ? -1 : 0);
  if (!dir || (!s && (J || dir != M->rotor[T->rotor].axis)))
    Put(o, "0");
  else
    PutBConsistentBody(o, M, T, b, dir, comp, s);
}

static void PutB(Buf *o, const Model *M, int r, int t)
{
  const Torque *T   = &M->torque[t];
  const Joint  *J   = T->joint >= 0 ? &M->joint[T->joint] : NULL;
  const Rotor  *Rt  = T->rotor >= 0 ? &M->rotor[T->rotor] : NULL;
  int           dim = M->dim, b = 0, dir, comp, s, axis, i, j, from, pc;
  char          x[160];

  if (T->consistent) {
    PutBConsistent(o, M, r, t);
    return;
  }
  if (r >= M->nbc) { /* a rotor's director e1 or e2: its spin rate 1/2 (e2.e1' - e1.e2') */
    if (!Rt || (r - M->nbc) / 6 != T->rotor) {
      Put(o, "0");
      return;
    }
    dir = (r - M->nbc) % 6 / 3 + 1, comp = (r - M->nbc) % 3;
    RotorCoord(x, sizeof x, Rt, 3 - dir, comp);
    Put(o, "%s0.5*%s", dir == 1 ? "" : "-", x);
    return;
  }
  while (b + 1 < M->nb && M->body[b + 1].base <= r)
    b++;
  dir = (r - M->body[b].base) / dim, comp = (r - M->body[b].base) % dim;
  if (Rt)
    s = b == Rt->body ? -1 : 0;
  else
    s = b == M->point[J->p2].body ? 1 : b == M->point[J->p1].body ? -1 : 0;
  if (s && J && J->kind == J_PRISMATIC) { /* the force f d_I at P2 (-f d_I at P1): f d_I . (P2 - P1)' */
    const Point *P  = &M->point[s > 0 ? J->p2 : J->p1];
    int          b1 = M->point[J->p1].body;
    if (b1 < 0 && comp != J->ax1 - 1)
      Put(o, "0");
    else if (b1 < 0)
      Put(o, "%s(%s)", s < 0 ? "-" : "", dir ? P->c[dir - 1] : "1");
    else
      Coord(x, sizeof x, &M->body[b1], J->ax1, comp),
          Put(o, "%s(%s)*%s", s < 0 ? "-" : "", dir ? P->c[dir - 1] : "1", x);
    return;
  }
  if (!dir || !s) {
    Put(o, "0");
    return;
  }
  if (dim == 2) { /* d(theta) = 1/2 (d x dd) for each director: coefficient of dd = 1/2 (-d_y, d_x) */
    Coord(x, sizeof x, &M->body[b], dir, 1 - comp);
    Put(o, "%s0.5*%s", (comp ? s : -s) < 0 ? "-" : "", x);
    return;
  }
  axis = Rt ? Rt->axis : s > 0 ? J->ax2 : J->ax1, i = axis % 3 + 1, j = (axis + 1) % 3 + 1;
  if (dir == axis) {
    Put(o, "0");
    return;
  }
  from = dir == i ? j : i, pc = dir == i ? s : -s;
  Coord(x, sizeof x, &M->body[b], from, comp);
  Put(o, "%s0.5*%s", pc < 0 ? "-" : "", x);
}

/* The quaternion template t (in w, x, y, z) with the pose's items q[3..6] put in. */
static void PutQuat(Buf *o, const char *t, char *const *q)
{
  for (; *t; t++) {
    const char *c = strchr("wxyz", *t);
    if (c)
      Put(o, "(%s)", q[3 + (c - "wxyz")]);
    else
      Put(o, "%c", *t);
  }
}

/* Component c of director k (1..dim) of body b in pose e: planar d1 = (cos a, sin a), d2 = (-sin a, cos a); spatial
 * the column k of the rotation of the quaternion (w, x, y, z), normalized by its square norm. */
static void PutDirector(Buf *o, const Body *B, int e, int k, int c)
{
  static const char *rot[3][3] = {{"w^2 + x^2 - y^2 - z^2", "2*(x*y - w*z)", "2*(x*z + w*y)"},
                                  {"2*(x*y + w*z)", "w^2 - x^2 + y^2 - z^2", "2*(y*z - w*x)"},
                                  {"2*(x*z - w*y)", "2*(y*z + w*x)", "w^2 - x^2 - y^2 + z^2"}};
  if (B->dim == 2) {
    Put(o, "%s%s(%s)", k == 2 && !c ? "-" : "", (k == 1) == (c == 0) ? "cos" : "sin", B->pose[e][2]);
    return;
  }
  Put(o, "("), PutQuat(o, rot[c][k - 1], B->pose[e]), Put(o, ")/("), PutQuat(o, "w^2 + x^2 + y^2 + z^2", B->pose[e]);
  Put(o, ")");
}

/* 'x0:' (e = 0) or 'xT:' (e = 1) from the start or end lines: the bodies' centres and directors, the rotors'
 * directors e1 = cos(a) b1 + sin(a) b2, e2 = -sin(a) b1 + cos(a) b2 with (b1, b2, d_I) the body's directors in cyclic
 * order, then the momenta 0 (rest). */
static void PutPose(Buf *o, const Model *M, int e)
{
  Put(o, "%s: ", e ? "xT" : "x0");
  for (int b = 0; b < M->nb; b++)
    for (int d = 0; d <= M->dim; d++)
      for (int c = 0; c < M->dim; c++) {
        Put(o, "%s", b || d || c ? ", " : "");
        if (d)
          PutDirector(o, &M->body[b], e, d, c);
        else
          Put(o, "%s", M->body[b].pose[e][c]);
      }
  for (int r = 0; r < M->nr; r++) {
    const Rotor *R = &M->rotor[r];
    const Body  *B = &M->body[R->body];
    for (int d = 1; d <= 2; d++)
      for (int c = 0; c < 3; c++) {
        Put(o, ", %s%s(%s)*(", d == 2 ? "-" : "", d == 1 ? "cos" : "sin", R->pose[e][0]);
        PutDirector(o, B, e, R->axis % 3 + 1, c), Put(o, ") + %s(%s)*(", d == 1 ? "sin" : "cos", R->pose[e][0]);
        PutDirector(o, B, e, (R->axis + 1) % 3 + 1, c), Put(o, ")");
      }
  }
  for (int i = 0; i < M->n; i++)
    Put(o, ", 0");
  Put(o, "\n");
}

/* 'controls:' and 'B:' from the torque lines. */
static void PutControls(Buf *o, const Model *M)
{
  Put(o, "controls: %d\nB: ", M->nt);
  for (int r = 0; r < M->n; r++)
    for (int t = 0; t < M->nt; t++)
      Put(o, "%s", r || t ? ", " : ""), PutB(o, M, r, t);
  Put(o, "\n");
}

/* Name of the vector coordinate v (v < nb (dim + 1): body v / (dim + 1)'s centre or director; after them the rotors'
 * directors), component k. */
static void VecCoord(char *dst, size_t len, const Model *M, int v, int k)
{
  int nbv = M->nb * (M->dim + 1);
  if (v < nbv)
    Coord(dst, len, &M->body[v / (M->dim + 1)], v % (M->dim + 1), k);
  else
    RotorCoord(dst, len, &M->rotor[(v - nbv) / 2], (v - nbv) % 2 + 1, k);
}

/* 'invariant' lines of a free system (no joint to the ground, no gravity): the total linear momentum P = sum_b
 * p_phi_b (the momenta of the centres) and the angular momentum about the origin L = sum_a q_a x p_a over every vector
 * coordinate (centres and directors; planar: the scalar q_x p_y - q_y p_x), docs/multibody.md "Momentum". */
static void PutInvariants(Buf *o, const Model *M)
{
  int  nv = M->nb * (M->dim + 1) + 2 * M->nr, nl = M->dim == 3 ? 3 : 1;
  char a[160], b[160], c[160], d[160];

  for (int k = 0; k < M->dim; k++) {
    Put(o, "invariant P_%c: ", "xyz"[k]);
    for (int bd = 0; bd < M->nb; bd++)
      Coord(a, sizeof a, &M->body[bd], 0, k), Put(o, "%sp_%s", bd ? " + " : "", a);
    Put(o, "\n");
  }
  for (int l = 0; l < nl; l++) { /* component l of L: (q x p)_l = q_i p_j - q_j p_i, (l, i, j) cyclic */
    int i = M->dim == 3 ? (l + 1) % 3 : 0, j = M->dim == 3 ? (l + 2) % 3 : 1;
    if (M->dim == 3)
      Put(o, "invariant L_%c: ", "xyz"[l]);
    else
      Put(o, "invariant L: ");
    for (int v = 0; v < nv; v++) {
      VecCoord(a, sizeof a, M, v, i), VecCoord(b, sizeof b, M, v, j);
      VecCoord(c, sizeof c, M, v, j), VecCoord(d, sizeof d, M, v, i);
      Put(o, "%s%s*p_%s - %s*p_%s", v ? " + " : "", a, c, b, d);
    }
    Put(o, "\n");
  }
}

/* Whether body b is in a joint (then its attitude follows its neighbours', which independent geodesics ignore). */
static int Jointed(const Model *M, int b)
{
  for (int j = 0; j < M->nj; j++)
    if (M->point[M->joint[j].p1].body == b || M->point[M->joint[j].p2].body == b)
      return 1;
  return 0;
}

/* 'frame NAME: ...' lines (docs/problem-format.md, "Frames"): the directors of each spatial body in no joint, and of
 * each rotor on such a body (e1, e2, d_I): the default guess is then the geodesic frame guess. A jointed body gets
 * none: the boom of problems/boom_spatial.ocp, each body on its own geodesic, converged to another extremal
 * (measured: Richardson limit 2358.74 against the generalized coordinates' 1821.14). */
static void PutFrames(Buf *o, const Model *M)
{
  char a[160];

  for (int b = 0; b < M->nb; b++) {
    if (M->body[b].dim != 3 || Jointed(M, b))
      continue;
    Put(o, "frame %s: ", M->body[b].name);
    for (int d = 1; d <= 3; d++)
      for (int k = 0; k < 3; k++)
        Coord(a, sizeof a, &M->body[b], d, k), Put(o, "%s%s", d + k > 1 ? ", " : "", a);
    Put(o, "\n");
  }
  for (int r = 0; r < M->nr; r++) {
    const Rotor *R = &M->rotor[r];
    if (Jointed(M, R->body))
      continue;
    Put(o, "frame %s: ", R->name);
    for (int d = 1; d <= 2; d++)
      for (int k = 0; k < 3; k++)
        RotorCoord(a, sizeof a, R, d, k), Put(o, "%s%s", d + k > 1 ? ", " : "", a);
    for (int k = 0; k < 3; k++)
      Coord(a, sizeof a, &M->body[R->body], R->axis, k), Put(o, ", %s", a);
    Put(o, "\n");
  }
}

/* Whether the system is free: no gravity and no joint to the ground (its momenta are then conserved). */
static int Free(const Model *M)
{
  if (M->ng)
    return 0;
  for (int j = 0; j < M->nj; j++)
    if (M->point[M->joint[j].p1].body < 0 || M->point[M->joint[j].p2].body < 0)
      return 0;
  return 1;
}

/* A key of the file that the bodies generate: its line into M->key_line (coordinates, mass and kinetic_energy, and
 * constraints are refused at once; controls and B when torques are given, MissingOrConflict). */
static int KeyConflict(Model *M, const char *key, int col)
{
  static const char *gen[] = {"coordinates", "mass", "kinetic_energy", "constraints"};
  for (int k = 0; k < 4; k++)
    if (!strcmp(key, gen[k]))
      return Fail(M, col,
                  "%s: generated from the body, point and joint lines in this file: remove it (hamshoot -problem "
                  "FILE -problem_print_expanded shows the generated keys)",
                  key);
  if (!strcmp(key, "controls"))
    M->key_line[G_CONTROLS] = M->line;
  if (!strcmp(key, "B"))
    M->key_line[G_B] = M->line;
  if (!strcmp(key, "potential"))
    M->pot_line = M->line;
  if (!strcmp(key, "x0") || !strcmp(key, "xT"))
    M->key_line[key[1] == '0' ? G_X0 : G_XT] = M->line;
  return 0;
}

/* A line's key and value (in place: the comment cut, both trimmed); 0 for a blank line or one without ':'. */
static int LineKey(char *line, char **key, char **val)
{
  char *t, *colon, *hash = strchr(line, '#');

  if (hash)
    *hash = 0;
  t = HsTextTrim(line);
  if (!*t || !(colon = strchr(t, ':')))
    return 0;
  *colon = 0;
  *key = HsTextTrim(t), *val = HsTextTrim(colon + 1);
  return 1;
}

/* Pass 1: every line of the file; the body lines parsed, the others' keys checked (KeyConflict). */
static int ParseAll(Model *M, char *text)
{
  int ret = 0;

  M->line = 0;
  for (char *line = text, *next; !ret && line; line = next) {
    char *key, *val, *name;
    int   kind;
    if ((next = strchr(line, '\n')))
      *next++ = 0;
    M->line++;
    if (!LineKey(line, &key, &val))
      continue; /* the parser reports a line without ':' */
    if (!(kind = BodyKey(key, &name)))
      ret = KeyConflict(M, key, (int)(key - line) + 1);
    else if ((M->is_body[M->line] = 1))
      ret = ParseLine(M, kind, name ? name : "", val, (int)(val - line) + 1);
  }
  return ret;
}

/* 'start' (e = 0) or 'end' lines: none, or one for every body and rotor, and then no 'x0' ('xT') of the file. */
static int CheckPoses(Model *M, int e)
{
  static const char *word[] = {"start", "end"}, *key[] = {"x0", "xT"};
  int                first = 0, missing = -1, mrot = 0;

  for (int b = 0; b < M->nb; b++)
    if (M->body[b].pose_line[e])
      first = first && first < M->body[b].pose_line[e] ? first : M->body[b].pose_line[e];
    else if (missing < 0)
      missing = b;
  for (int r = 0; r < M->nr; r++)
    if (M->rotor[r].pose_line[e])
      first = first && first < M->rotor[r].pose_line[e] ? first : M->rotor[r].pose_line[e];
    else if (missing < 0)
      missing = r, mrot = 1;
  if (!first)
    return 0;
  M->line = first;
  if (missing >= 0)
    return Fail(M, 1, "%s lines give the %s state: one for every body and rotor, and %s '%s' has none", word[e],
                e ? "terminal" : "initial", mrot ? "rotor" : "body",
                mrot ? M->rotor[missing].name : M->body[missing].name);
  if (M->key_line[G_X0 + e]) {
    M->line = M->key_line[G_X0 + e];
    return Fail(M, 1, "%s: the %s lines (line %d) give it: remove one or the other", key[e], word[e], first);
  }
  M->origin[G_X0 + e] = first;
  return 0;
}

/* After pass 1: at least one body; gravity of the bodies' dimension; no 'controls' or 'B' with torques. */
static int CheckModel(Model *M)
{
  int ret;

  if (!M->nb) {
    M->line = M->np ? M->point[0].line : M->nj ? M->joint[0].line : M->nt ? M->torque[0].line : M->gline;
    return Fail(M, 1, "body lines without a body: declare one ('body NAME: planar|spatial, MASS, E1, E2[, E3]')");
  }
  if (M->ng && M->ng != M->dim) {
    M->line = M->gline;
    return Fail(M, 1, "gravity: %d components for %s bodies (%d)", M->ng, M->dim == 2 ? "planar" : "spatial", M->dim);
  }
  for (int g = G_CONTROLS; g <= G_B; g++)
    if (M->nt && M->key_line[g]) {
      M->line = M->key_line[g];
      return Fail(M, 1, "%s: generated from the torque lines (line %d): remove it", g == G_B ? "B" : "controls",
                  M->torque[0].line);
    }
  for (int e = 0; e < 2; e++)
    if ((ret = CheckPoses(M, e)))
      return ret;
  M->nbc = M->n;
  for (int r = 0; r < M->nr; r++)
    M->rotor[r].base = M->n, M->n += 6;
  if (M->n > HS_OCP_MAX_COORDINATES_MASS) {
    M->line = M->body[M->nb - 1].line;
    return Fail(M, 1, "the bodies have %d coordinates, at most %d for a constrained problem", M->n,
                HS_OCP_MAX_COORDINATES_MASS);
  }
  return 0;
}

/* Pass 2: the file's lines (body lines blank; the file's potential plus gravity), then the generated keys, each on
 * one line, with the body line each is reported at (M->origin, M->gen_line). */
static void Emit(Buf *o, Model *M, const char *text, size_t len)
{
  int         line = 1, at;
  const char *end  = text + len;

  for (const char *l = text; l < end; line++) {
    const char *nl = memchr(l, '\n', (size_t)(end - l)), *e = nl ? nl : end;
    if (M->is_body[line])
      Put(o, "\n");
    else if (line == M->pot_line && M->ng) {
      const char *h = memchr(l, '#', (size_t)(e - l)), *u = h ? h : e;
      while (u > l && isspace((unsigned char)u[-1]))
        u--;
      char *user = strndup(l, (size_t)(u - l));
      if (!user)
        o->err = 1;
      else
        PutCoordsPotential(o, M, G_POT, user);
      free(user);
    } else
      Put(o, "%.*s\n", (int)(e - l), l);
    l = nl ? nl + 1 : end;
  }
  at                 = line;
  M->origin[G_COORD] = M->origin[G_MASS] = M->body[0].line;
  M->origin[G_CONS]                      = M->nj ? M->joint[0].line : M->body[0].line;
  M->origin[G_POT]                       = M->gline ? M->gline : M->body[0].line;
  M->origin[G_CONTROLS] = M->origin[G_B] = M->nt ? M->torque[0].line : 0;
  M->gen_line[G_COORD]                   = at++, PutCoordsPotential(o, M, G_COORD, NULL);
  M->gen_line[G_MASS]                    = at++, PutMass(o, M);
  M->gen_line[G_CONS]                    = at++, PutConstraints(o, M);
  if (!M->pot_line)
    M->gen_line[G_POT] = at++, PutCoordsPotential(o, M, G_POT, NULL);
  if (M->nt)
    M->gen_line[G_CONTROLS] = at++, M->gen_line[G_B] = at++, PutControls(o, M);
  for (int e = 0; e < 2; e++)
    if (M->origin[G_X0 + e])
      M->gen_line[G_X0 + e] = at++, PutPose(o, M, e);
  if (Free(M)) /* the momenta as monitored invariants (their lines last; a message there maps to the first body) */
    M->inv_line = at, PutInvariants(o, M);
  PutFrames(o, M);
}

static void ModelFree(Model *M)
{
  if (!M)
    return;
  for (int b = 0; b < M->nb; b++)
    free(M->body[b].name), free(M->body[b].mass), free(M->body[b].E[0]), free(M->body[b].E[1]), free(M->body[b].E[2]);
  for (int p = 0; p < M->np; p++)
    free(M->point[p].name), free(M->point[p].c[0]), free(M->point[p].c[1]), free(M->point[p].c[2]);
  for (int j = 0; j < M->nj; j++)
    free(M->joint[j].name);
  for (int t = 0; t < M->nt; t++)
    free(M->torque[t].name);
  for (int r = 0; r < M->nr; r++)
    free(M->rotor[r].name), free(M->rotor[r].l), free(M->rotor[r].m), free(M->rotor[r].Ea), free(M->rotor[r].Et),
        free(M->rotor[r].pose[0][0]), free(M->rotor[r].pose[1][0]);
  for (int b = 0; b < M->nb; b++)
    for (int e = 0; e < 2; e++)
      for (int i = 0; i < 7; i++)
        free(M->body[b].pose[e][i]);
  free(M->g[0]), free(M->g[1]), free(M->g[2]), free(M->is_body);
  free(M);
}

/*@ HsBodiesPresent - whether a problem file's text declares rigid bodies (docs/multibody.md).

  Not collective. Input: text, len - the file's bytes. Returns 1 if a line's key is 'body NAME', 'point NAME',
  'joint NAME', 'torque NAME' or 'gravity' (then HsBodiesCreate reads the text), else 0.
@*/
int HsBodiesPresent(const char *text, size_t len)
{
  const char *end   = text + len;
  int         found = 0;

  for (const char *l = text; l < end && !found;) {
    const char *nl = memchr(l, '\n', (size_t)(end - l)), *e = nl ? nl : end;
    char       *line = strndup(l, (size_t)(e - l)), *key, *val, *name;
    if (!line)
      return 1; /* HsBodiesCreate reports the memory */
    found = LineKey(line, &key, &val) && BodyKey(key, &name);
    free(line);
    l = nl ? nl + 1 : end;
  }
  return found;
}

/* The model of a text (pass 1, checked) and its expansion (pass 2) into *out; *mp the model (ModelFree). */
static int Expand(const char *path, const char *text, size_t len, char **out, Model **mp, char *msg, int msglen)
{
  Model *M = calloc(1, sizeof(*M));
  char  *copy;
  Buf    o   = {NULL, 0, 0, 0};
  int    ret = 0;

  *out = NULL, *mp = M;
  if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
    text += 3, len -= 3;
  if (!M || !(copy = strndup(text, len)))
    return HS_ENOMEM;
  M->path = path, M->msg = msg, M->msglen = msglen, M->nlines = 1;
  for (size_t i = 0; i < len; i++)
    M->nlines += text[i] == '\n';
  if (!(M->is_body = calloc((size_t)M->nlines + 2, 1)))
    ret = HS_ENOMEM;
  if (!ret)
    ret = ParseAll(M, copy);
  free(copy);
  if (!ret)
    ret = CheckModel(M);
  if (!ret)
    Emit(&o, M, text, len);
  if (!ret && o.err == 2)
    ret = HS_EPARSE, snprintf(msg, (size_t)msglen,
                              "%s: its bodies and joints expand to more than %d MiB of problem text (HS_OCP_MAX_BYTES, "
                              "as a file): long expressions of points or bodies that many joints repeat",
                              path, HS_OCP_MAX_BYTES >> 20);
  else if (!ret && o.err)
    ret = HS_ENOMEM;
  if (ret)
    free(o.s);
  else
    *out = o.s;
  return ret;
}

/*@ HsBodiesExpand - the text of a problem file with its rigid bodies expanded (docs/multibody.md): the body, point,
    joint, torque and gravity lines become blank lines, and the keys coordinates, mass, constraints, potential (or
    the file's potential plus gravity, on its own line), controls and B (with torques) are appended, one line each.

  Not collective. Input: path - the file's name, for messages; text, len - its bytes; msg, msglen - room for a
  message. Output: out - the expanded text, NUL-terminated (free() it).

  Returns HS_SUCCESS, HS_EPARSE ("file:line:column: what is wrong" in msg) or HS_ENOMEM.
@*/
int HsBodiesExpand(const char *path, const char *text, size_t len, char **out, char *msg, int msglen)
{
  Model *M;
  int    ret = Expand(path, text, len, out, &M, msg, msglen);

  ModelFree(M);
  return ret;
}

/* A message "path:L:C: what" about a generated line L: reported at the body line it comes from (the first generated
 * line is the file's last when the file ends in a newline: it had been reported as line nlines, past the file). */
static void MapMessage(const Model *M, const char *path, char *msg, int msglen)
{
  static const char *keys[] = {"coordinates", "mass", "constraints", "potential", "controls", "B", "x0", "xT"};
  size_t             pl     = strlen(path);
  int                L, C, used;
  char              *rest;

  if (strncmp(msg, path, pl) || sscanf(msg + pl, ":%d:%d:%n", &L, &C, &used) != 2 || L < M->gen_line[G_COORD])
    return;
  if (M->inv_line && L >= M->inv_line && (rest = strdup(msg + pl + used))) { /* a name clash, more than 16 */
    snprintf(msg, (size_t)msglen,
             "%s:%d:1: in the 'invariant' lines of the momenta generated from the bodies (a free system; "
             "-problem_print_expanded shows them):%s",
             path, M->body[0].line, rest);
    free(rest);
    return;
  }
  for (int g = 0; g < G_COUNT; g++)
    if (M->gen_line[g] == L && (rest = strdup(msg + pl + used))) {
      snprintf(msg, (size_t)msglen,
               "%s:%d:1: in the '%s' generated from the bodies (-problem_print_expanded shows "
               "it):%s",
               path, M->origin[g], keys[g], rest);
      free(rest);
      return;
    }
}

/*@ HsBodiesCreate - a problem from the text of a problem file with rigid bodies (docs/multibody.md):
    HsBodiesExpand, then HsProblemCreateFromText on the expanded text; an error in a generated key is reported at
    the body line it comes from.

  Not collective. Input: path, text, len, msg, msglen as HsProblemCreateFromText. Output: prob - the problem.

  Returns HS_SUCCESS, HS_EPARSE or HS_ENOMEM.
@*/
int HsBodiesCreate(const char *path, const char *text, size_t len, HsProblem **prob, char *msg, int msglen)
{
  Model *M;
  char  *out;
  int    ret = Expand(path, text, len, &out, &M, msg, msglen);

  *prob = NULL;
  if (!ret) {
    ret = HsProblemCreateFromText(path, out, strlen(out), prob, msg, msglen);
    if (ret == HS_EPARSE)
      MapMessage(M, path, msg, msglen);
  }
  free(out);
  ModelFree(M);
  return ret;
}
