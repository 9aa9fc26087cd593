/* hamshoot benchmark: the memory bandwidth P processes get together (bench/README.md, "Scaling"): the limit of
 * any code that streams through memory, as the band solver's elimination and the Jacobian's evaluation do.
 *
 *   mpirun -n P [--bind-to core] build/bench/stream_bench [MB]
 *
 * Each rank allocates three arrays of MB megabytes (default 200), touches them, and runs STREAM's triad
 * a = b + s c ten times between barriers (all ranks at once); the best time gives the bandwidth per rank (24
 * bytes per element: two reads, one write; write-allocate traffic not counted, as STREAM does) and rank 0 prints
 * one line: P, the aggregate GB/s, GB/s per rank, and the efficiency per rank against one rank's (run with P = 1
 * first, or compare lines). Weak scaling of a bandwidth-bound code cannot beat the per-rank line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  int     rank, size;
  size_t  n;
  double *a, *b, *c, best = 1e30, s = 3.0;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  n = ((size_t)(argc > 1 ? atol(argv[1]) : 200) << 20) / sizeof(double);
  a = malloc(n * sizeof *a), b = malloc(n * sizeof *b), c = malloc(n * sizeof *c);
  if (!n || !a || !b || !c) {
    fprintf(stderr, "stream_bench: cannot allocate 3 x %zu doubles\n", n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t i = 0; i < n; i++)
    a[i] = 0, b[i] = 1, c[i] = 2;
  for (int r = 0; r < 10; r++) {
    double t0, t;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (size_t i = 0; i < n; i++)
      a[i] = b[i] + s * c[i];
    t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); /* the slowest rank's */
    if (t < best)
      best = t;
  }
  if (!rank)
    printf("stream_bench: P = %d, triad %.1f GB/s in all, %.2f GB/s per rank (a[0] = %g)\n", size,
           24.0 * n * size / best / 1e9, 24.0 * n / best / 1e9, a[0]);
  free(a), free(b), free(c);
  MPI_Finalize();
  return 0;
}
