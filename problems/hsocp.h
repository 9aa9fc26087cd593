/* hamshoot: problem files (.ocp, docs/problem-format.md): a mechanical system,
 * its costs and boundary data as expressions, derivatives derived symbolically
 * (problems/ocp.c on the expression engine of problems/expr.c). */
#ifndef HSOCP_H
#define HSOCP_H

#include "hsproblem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Reads a problem file. Returns HS_SUCCESS; HS_EPARSE with "file:line:column: what is wrong" in
 *  msg (msglen bytes); HS_ENOMEM. */
int HsProblemCreateFromFile(const char *path, HsProblem **prob, char *msg, int msglen);

#ifdef __cplusplus
}
#endif
#endif
