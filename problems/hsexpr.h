/* hamshoot: symbolic expressions for problem files (serial C, no PETSc/MPI).
 *
 * An HsExpr is a directed acyclic graph of scalar expressions in a fixed set
 * of variables. Nodes are hash-consed (an expression that is built twice is
 * one node), simplified as they are built (constant folding, x + 0, x * 1,
 * x * 0, x - x, integer powers), and differentiated symbolically with a memo,
 * so that the derivatives of a mass matrix up to third order share their
 * common subexpressions (sin, cos of the same angle, parameter products).
 *
 * An HsExprProgram is a straight-line register program for a list of output
 * nodes: the nodes that depend only on the slow variables (problem
 * parameters) run once per parameter change (HsExprProgramSetSlow), the rest
 * on every evaluation (HsExprProgramEval). See problems/expr.c for why this
 * is not GNU libmatheval.
 *
 * Syntax: numbers, names, + - * / ^ (right-associative, binds tighter than a
 * unary minus: -x^2 = -(x^2)), parentheses, the functions sin cos tan asin
 * acos atan sinh cosh tanh exp log sqrt abs sign step (1 for x >= 0, else 0)
 * with one argument and atan2 min max pow with two, the constants pi and e.
 */
#ifndef HSEXPR_H
#define HSEXPR_H

#include "hsproblem.h" /* status codes */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct HsExpr_s        HsExpr;
typedef struct HsExprProgram_s HsExprProgram;

/** Looks a name (not NUL-terminated, len characters) up: returns 0 and its node in *node
 *  (a variable from HsExprVariable, or any expression: a named subexpression), -1 if the
 *  name is unknown, -2 if it is known but not allowed here, -3 if out of memory. */
typedef int (*HsExprLookupFn)(const char *name, int len, void *ctx, int *node);

/** Creates an empty graph over nvars variables (any number); variables 0..nfast-1 change on
 *  every evaluation, nfast..nvars-1 are slow (parameters). Returns HS_SUCCESS, HS_EINVAL (bad
 *  sizes) or HS_ENOMEM. */
int HsExprCreate(int nvars, int nfast, HsExpr **ex);
/** Frees the graph and sets *ex = NULL; NULL-safe. Programs made from it stay valid. */
void HsExprDestroy(HsExpr **ex);

/** Parses text into *node. Returns HS_SUCCESS; HS_EPARSE (syntax), HS_EUNKNOWN (unknown name or
 *  function), HS_EINVAL (a known name the lookup does not allow here), each with msg saying what
 *  was expected or found and *errpos the 0-based offset in text; HS_ENOMEM. */
/** The deepest expression graph HsExprParse accepts: every recursion over a graph (derivatives to
 *  third order, programs) goes about as deep as the graph, and must stay far from the stack's limit.
 *  Long sums and products are built as balanced trees of blocks of 64 operands, so only nesting
 *  (parentheses, functions and powers, at most 200 levels each) makes a graph deep. */
#define HS_EXPR_MAX_DEPTH 2000

int HsExprParse(HsExpr *ex, const char *text, HsExprLookupFn lookup, void *lctx, int *node, int *errpos, char *msg,
                int msglen);
/** 1 if name is a function or a constant of the syntax (sin, ..., pi, e), else 0. */
int HsExprIsReservedName(const char *name);
/** The node of the constant c, of variable v. Return the node or -1 (no memory). */
int HsExprConstant(HsExpr *ex, double c);
int HsExprVariable(HsExpr *ex, int v);
/** d(node)/d(variable v) as a node, or -1 (no memory). */
int HsExprDiff(HsExpr *ex, int node, int v);
/** 1 if node depends on variable v (structurally), else 0. */
int HsExprDependsOn(const HsExpr *ex, int node, int v);
/** 1 if node depends on any of the fast variables. */
int HsExprDependsOnFast(const HsExpr *ex, int node);
/** 1 and the value if node is a numeric constant, else 0. */
int HsExprIsConstant(const HsExpr *ex, int node, double *value);
/** Number of nodes in the graph. */
int HsExprSize(const HsExpr *ex);
/** The most memory a graph may hold (nodes, dependency sets, hash, derivative memos): a growth beyond it fails
 *  as out of memory, and HsExprOverBudget says that the budget, not the machine, refused it. */
#define HS_EXPR_MAX_BYTES (1ULL << 30)
int HsExprOverBudget(const HsExpr *ex);
/** 1 if node uses abs, sign, step, min or max of a fast variable's function (derivatives taken piecewise), else 0;
 *  -1 without memory. */
int HsExprNonsmooth(const HsExpr *ex, int node);

/** A program computing out[i] = value of outs[i] (nout nodes, repetitions allowed). */
int  HsExprProgramCreate(const HsExpr *ex, int nout, const int *outs, HsExprProgram **prog);
void HsExprProgramDestroy(HsExprProgram **prog);
/** Runs the slow part (nodes in the slow variables only) with vars[nfast..nvars-1]. */
void HsExprProgramSetSlow(HsExprProgram *prog, const double *vars);
/** Evaluates the outputs with the fast variables vars[0..nfast-1] (the slow part
 *  must have run). Returns 0, or 1 if an output is not finite. */
int HsExprProgramEval(HsExprProgram *prog, const double *vars, double *out);
/** The outputs (the same bits as HsExprProgramEval) and in err a first-order bound on each one's round-off (running
 *  error analysis: the fast variables exact, constants and parameters to half an ulp; INFINITY: no bound). Allocates:
 *  for tests, not hot loops. Returns 0, 1 if an output is not finite, -1 without memory. */
int HsExprProgramEvalBound(HsExprProgram *prog, const double *vars, double *out, double *err);
/** The same with the outputs in consecutive parts of sizes[0..nparts-1], written to dst[i]
 *  (a NULL dst[i]: that part is not stored). */
int HsExprProgramEvalParts(HsExprProgram *prog, const double *vars, int nparts, const int *sizes, double *const *dst);
/** Number of instructions run per evaluation (fast) and per parameter change (slow). */
void HsExprProgramGetSize(const HsExprProgram *prog, int *nfast, int *nslow);

#ifdef __cplusplus
}
#endif
#endif
