/* Raw MPI_Send/MPI_Recv ping-pong between ranks 0 and 1 (OSU-style), for comparison with
 * `tilepipe pingpong`. Same sizes, batches and JSON fields. Built by run_comm_bench.sh with each
 * MPI's own compiler wrapper (mpicc.openmpi, mpicc.mpich).
 * usage: mpi_pingpong LO HI ITERS   (LO may be 0; powers of two up to HI) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static long trips_for(long bytes, long iters) {
  if (bytes <= 65536) return iters;
  long t = iters * 65536 / bytes;
  return t < 10 ? 10 : t;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long lo = argc > 1 ? atol(argv[1]) : 0;
  const long hi = argc > 2 ? atol(argv[2]) : 4194304;
  const long iters = argc > 3 ? atol(argv[3]) : 1000;
  char* buf = malloc(hi > 0 ? (size_t)hi : 1);
  memset(buf, 0x5a, hi > 0 ? (size_t)hi : 1);
  int first = 1;
  if (rank == 0) printf("[\n");
  for (long bytes = lo; bytes <= hi; bytes = bytes == 0 ? 1 : bytes * 2) {
    const long trips = trips_for(bytes, iters);
    const long batches = trips < 15 ? trips : 15;
    const long per = trips / batches;
    double samples[15];
    for (long b = -1; b < batches; ++b) { /* b == -1: warm-up */
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (long i = 0; i < per; ++i) {
        if (rank == 0) {
          MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
      }
      if (b >= 0) samples[b] = (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)per);
    }
    qsort(samples, (size_t)batches, sizeof(double), cmp);
    if (rank == 0) {
      const double med = samples[batches / 2];
      printf("%s  {\"bytes\": %ld, \"latency_us\": %.4f, \"latency_us_min\": %.4f, "
             "\"latency_us_max\": %.4f, \"bandwidth_mb_per_s\": %.1f, \"round_trips\": %ld}",
             first ? "" : ",\n", bytes, med, samples[0], samples[batches - 1],
             med > 0 ? (double)bytes / med : 0.0, per * batches);
      first = 0;
    }
    if (bytes == 0 && hi == 0) break;
  }
  if (rank == 0) printf("\n]\n");
  free(buf);
  MPI_Finalize();
  return 0;
}
