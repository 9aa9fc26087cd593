/* hamshoot: rigid bodies and joints in problem files (docs/multibody.md): the keys body, point,
 * joint, torque and gravity expanded as text into the standard keys (coordinates, mass, constraints,
 * potential, controls, B) of docs/problem-format.md, which problems/ocp.c then reads. */
#ifndef HSBODIES_H
#define HSBODIES_H

#include <stddef.h>

#include "hsproblem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** At most this many bodies, points, joints and torques each in a file. */
#define HS_BODIES_MAX 200
/** Names of bodies, points, joints, rotors and torques: at most this many characters (the coordinates' names add 3). */
#define HS_BODIES_NAME_MAX 60

/** 1 if the text has a body, point, joint, torque or gravity line (then HsBodiesCreate reads it), else 0. */
int HsBodiesPresent(const char *text, size_t len);
/** The text with the body lines expanded into the standard keys (free() *out); HS_EPARSE with
 *  "file:line:column: what is wrong" in msg; HS_ENOMEM. */
int HsBodiesExpand(const char *path, const char *text, size_t len, char **out, char *msg, int msglen);
/** A problem from a text with body lines: HsBodiesExpand, then HsProblemCreateFromText. */
int HsBodiesCreate(const char *path, const char *text, size_t len, HsProblem **prob, char *msg, int msglen);

#ifdef __cplusplus
}
#endif
#endif
