/* The benchmark's rinse between measured runs (bench_recurrence.py --rinse): maps MIB MiB of
 * anonymous memory in huge pages where the kernel gives them, writes one byte per 4 KiB page and
 * exits, printing {"touch_s": seconds}. On the VM this project is measured on, the first touch
 * of memory costs 0.1-1.8 s per GB depending on what the previous process did with it (after a
 * process that wrote its whole array, the next one pays the most); a rinse before every measured
 * run makes each start from the same state, whichever configuration ran before it.
 *
 *   touch_memory MIB */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char** argv) {
  if (argc != 2 || atol(argv[1]) < 1) {
    fprintf(stderr, "usage: touch_memory MIB\n");
    return 2;
  }
  const size_t bytes = (size_t)atol(argv[1]) << 20;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("touch_memory: mmap");
    return 1;
  }
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("{\"touch_s\": %.6f}\n", (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
  return 0;
}
