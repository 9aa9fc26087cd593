/* hamshoot: the private header of floor impls/ (bvp/impls: the formulations). Each constructor fills
 * s->ops and s->data (interface/hsbvpimpl.h); HsInitializePackage registers them by name (bvp/register.c).
 * The formulations' own headers (transcriptionimpl.h, shootimpl.h, ipoptimpl.h) are private to impls/. */
#ifndef HSIMPLS_H
#define HSIMPLS_H

#include "../interface/hsbvpimpl.h"

PetscErrorCode HsSolverCreate_Transcription(HsSolver s);
PetscErrorCode HsSolverCreate_Shooting(HsSolver s);
PetscErrorCode HsSolverCreate_Ipopt(HsSolver s);

#endif
