/* hamshoot benchmark: what this machine charges for the first touch of fresh memory (bench/README.md,
 * scaling_bench at N = 1e6, where a solve touches 8.5 GB once).
 *
 *   build/bench/touch_bench [MB] [mode]     MB: 1000 by default; mode: 0 page by page (malloc), 1 mmap with
 *                                           MAP_POPULATE, 2 mmap with madvise(MADV_HUGEPAGE)
 *
 * Allocates MB megabytes, writes one byte per 4 KiB page (the first touch: the kernel's page fault and
 * zeroing, and on a virtual machine the host's), then one byte per cache line again (memory already
 * touched), and prints both times. Each run is a new process, as a solve is. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double Now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
  size_t n    = (size_t)(argc > 1 ? atol(argv[1]) : 1000) << 20;
  int    mode = argc > 2 ? atoi(argv[2]) : 0;
  double t0 = Now(), t1, t2, t3;
  char  *p;

  if (!n || mode < 0 || mode > 2) {
    fprintf(stderr, "usage: touch_bench [MB > 0] [mode 0, 1 or 2]\n");
    return 1;
  }
  if (mode == 0)
    p = malloc(n);
  else {
    p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (mode == 1 ? MAP_POPULATE : 0), -1, 0);
    if (p == MAP_FAILED)
      p = NULL;
    else if (mode == 2)
      madvise(p, n, MADV_HUGEPAGE);
  }
  if (!p) {
    fprintf(stderr, "touch_bench: cannot allocate %zu MB\n", n >> 20);
    return 1;
  }
  t1 = Now();
  for (size_t i = 0; i < n; i += 4096)
    p[i] = 1;
  t2 = Now();
  for (size_t i = 0; i < n; i += 64)
    p[i] += 1;
  t3 = Now();
  printf("%zu MB, %s: allocation %.3f s, first touch %.3f s (%.2f GB/s with the allocation), touched again %.3f s "
         "(check %d)\n",
         n >> 20, mode == 0 ? "malloc" : mode == 1 ? "mmap MAP_POPULATE" : "mmap MADV_HUGEPAGE", t1 - t0, t2 - t1,
         n / (t2 - t0) / 1e9, t3 - t2, p[0]);
  return 0;
}
