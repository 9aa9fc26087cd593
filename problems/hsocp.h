/* hamshoot: problem files (.ocp, docs/problem-format.md): a mechanical system,
 * its costs and boundary data as expressions, derivatives derived symbolically
 * (problems/ocp.c on the expression engine of problems/expr.c). */
#ifndef HSOCP_H
#define HSOCP_H

#include <stddef.h>

#include "hsproblem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Reads a problem file. Returns HS_SUCCESS; HS_EPARSE with "file:line:column: what is wrong" in
 *  msg (msglen bytes); HS_ENOMEM. */
int HsProblemCreateFromFile(const char *path, HsProblem **prob, char *msg, int msglen);
/** At most this many coordinates (V's third derivatives: n^3 entries), and with a mass matrix that
 *  depends on q at most HS_OCP_MAX_COORDINATES_MASS (its third derivatives: n^5 entries). */
#define HS_OCP_MAX_COORDINATES      1000
/** At most this many 'param' lines, and as many 'let' lines (each name is checked against the others). */
#define HS_OCP_MAX_NAMES 10000
/** The largest default N a problem file may set (a file does not choose a run's memory; -N does). */
#define HS_OCP_MAX_FILE_N 1000000
/** At most this many controls (R has m^2 entries), and a B(q)'s second derivatives at most this many entries. */
#define HS_OCP_MAX_CONTROLS   10000
#define HS_OCP_MAX_BQ_ENTRIES 1e7
/** force(q, u) and control_cost: their second derivatives in (q, u), (n + 1)(n + m)^2 entries, at most this many
 *  (10,000 controls and one coordinate, a 200 kB file, had taken 3.7 GB and a minute before the graph's cap). */
#define HS_OCP_MAX_CTRL_ENTRIES 1e7
#define HS_OCP_MAX_COORDINATES_MASS 60
/** Problem files larger than this are refused (HsProblemReadFile). */
#define HS_OCP_MAX_BYTES (16 << 20)
/** The bytes of a problem file (free() *text); HS_EPARSE for a directory, a NUL byte, > 16 MiB. */
int HsProblemReadFile(const char *path, char **text, size_t *len, char *msg, int msglen);
/** A problem from a file's bytes (as HsProblemCreateFromFile; path names it in messages). */
int HsProblemCreateFromText(const char *path, const char *text, size_t len, HsProblem **prob, char *msg, int msglen);

#ifdef __cplusplus
}
#endif
#endif
