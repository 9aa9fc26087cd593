/* hamshoot: private data of the transcription formulation (bvp/impls only), shared with the
 * formulations built on it (ipopt: the direct NLP, whose solution is checked against the
 * transcription's kkt residual). A derived formulation's data begins with an HsTranscription. */
#ifndef HSTRANSCRIPTIONIMPL_H
#define HSTRANSCRIPTIONIMPL_H

#include "../interface/hsbvpimpl.h"

typedef struct {
  DM         da; /* N+1 points, 4n unknowns per point: (x_k, lambda_{k+1/2}) */
  PetscReal *R;  /* 2n: the terminal residual */
} HsTranscription;

PetscErrorCode HsTranscriptionSetOps(HsSolver s);
PetscErrorCode HsTranscriptionDestroy(HsSolver s);
PetscErrorCode HsOrder4SetUp(HsSolver s); /* -hs_scheme conserving4 (order4.c) */

#endif
