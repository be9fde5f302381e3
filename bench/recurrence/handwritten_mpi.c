/* The classic hand-written MPI pipeline of the 2-D recurrence
 * A[i][j] = A[i-1][j] + A[i][j-1] - A[i-1][j-1] (the code users write instead of tilepipe):
 * each rank owns a band of columns; rows go in chunks of G (the grouping factor); per chunk a
 * rank receives the G values of its left neighbour's last column, computes its G x width block
 * and sends its own last column's G values to the right neighbour. Same boundary and the same
 * sum of bit patterns as examples/02_recurrence, so results compare bit for bit.
 *
 *   mpirun -np P handwritten_mpi N G SWEEPS
 * prints one JSON line on rank 0: seconds (MPI_Wtime around the sweeps, after a barrier),
 * process_s (from main's start: set-up included, MPI_Init aside), sum. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double boundary(long i, long j) { return (double)((7 * i + 13 * j) % 101) / 101.0; }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const double start = now();
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4) {
    if (rank == 0) fprintf(stderr, "usage: handwritten_mpi N G SWEEPS\n");
    MPI_Finalize();
    return 2;
  }
  const long n = atol(argv[1]);
  const long g = atol(argv[2]);
  const int sweeps = atoi(argv[3]);
  /* Columns 1..n split as evenly as possible; the band keeps one halo column (index 0). */
  const long lo = 1 + n * rank / size, hi = 1 + n * (rank + 1) / size; /* [lo, hi) */
  const long w = hi - lo + 1;
  double* a = malloc(sizeof(double) * (size_t)(n + 1) * (size_t)w);
  double* in = malloc(sizeof(double) * (size_t)(g + 1));
  double* out = malloc(sizeof(double) * (size_t)g);
  if (!a || !in || !out) MPI_Abort(MPI_COMM_WORLD, 1);
  for (long i = 0; i <= n; ++i)
    for (long c = 0; c < w; ++c) a[i * w + c] = 0.0;
  for (long c = 0; c < w; ++c) a[c] = boundary(0, lo - 1 + c); /* row 0 */
  if (rank == 0)
    for (long i = 0; i <= n; ++i) a[i * w] = boundary(i, 0); /* column 0 */
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int s = 0; s < sweeps; ++s) {
    for (long i0 = 1; i0 <= n; i0 += g) {
      const long rows = i0 + g <= n + 1 ? g : n + 1 - i0;
      if (rank > 0) {
        MPI_Recv(in, (int)rows, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (long r = 0; r < rows; ++r) a[(i0 + r) * w] = in[r];
      }
      for (long i = i0; i < i0 + rows; ++i) {
        double* row = a + i * w;
        const double* up = row - w;
        for (long c = 1; c < w; ++c) row[c] = up[c] + row[c - 1] - up[c - 1];
        out[i - i0] = row[w - 1];
      }
      if (rank < size - 1) MPI_Send(out, (int)rows, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - t0;
  uint64_t mine = 0;
  for (long i = 1; i <= n; ++i)
    for (long c = 1; c < w; ++c) {
      uint64_t bits;
      memcpy(&bits, &a[i * w + c], sizeof bits);
      mine += bits;
    }
  uint64_t sum = 0;
  MPI_Reduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("{\"n\": %ld, \"ranks\": %d, \"group\": %ld, \"sweeps\": %d, \"seconds\": %.6f, "
           "\"process_s\": %.6f, \"sum\": \"%016llx\"}\n",
           n, size, g, sweeps, seconds, now() - start, (unsigned long long)sum);
  }
  free(a);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
