/* Does a raw MPI transfer progress while both ranks compute? Rank 0 starts MPI_Isend, rank 1
 * MPI_Irecv, both then compute (spin on the clock, no MPI call) for a while, then wait. The
 * receiver's wait after the computation, against the transfer time with no computation, gives
 * the share of the transfer that moved during the computation (docs/benchmarks.md, "Progress").
 * Same protocol and JSON fields as tp_progress (bench/progress/tp_progress.cpp).
 * usage: mpi_progress LO HI REPEATS   (powers of two from LO to HI bytes) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void spin_until(double deadline) {
  while (MPI_Wtime() < deadline) {
  }
}

/* One transfer of `bytes` from rank 0 to rank 1, with `compute` seconds of computation between
 * posting and waiting; returns (on rank 1) the seconds from the end of the computation (or from
 * the post when compute is 0) to the completion of the receive. */
static double transfer(char* buf, long bytes, double compute, int rank) {
  MPI_Request rq;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (rank == 0) {
    MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &rq);
  } else {
    MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &rq);
  }
  if (compute > 0) spin_until(t0 + compute);
  const double t1 = MPI_Wtime();
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  return MPI_Wtime() - t1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long lo = argc > 1 ? atol(argv[1]) : 1024;
  const long hi = argc > 2 ? atol(argv[2]) : 4194304;
  const int repeats = argc > 3 ? atoi(argv[3]) : 15;
  if (lo < 1 || hi < lo || repeats < 1 || repeats > 101) {
    if (rank == 0) fprintf(stderr, "usage: mpi_progress LO HI REPEATS (1 <= LO <= HI, 1..101)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* buf = malloc((size_t)hi);
  memset(buf, 0x5a, (size_t)hi);
  double alone[101], overlapped[101];
  int first = 1;
  if (rank == 0) printf("[\n");
  for (long bytes = lo; bytes <= hi; bytes *= 2) {
    transfer(buf, bytes, 0.0, rank); /* warm-up */
    for (int r = 0; r < repeats; ++r) alone[r] = transfer(buf, bytes, 0.0, rank);
    qsort(alone, (size_t)repeats, sizeof(double), cmp);
    /* Everyone computes for the same time: twice rank 1's median transfer plus 50 us. */
    double t_alone = alone[repeats / 2];
    MPI_Bcast(&t_alone, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    const double compute = 2.0 * t_alone + 50e-6;
    for (int r = 0; r < repeats; ++r) overlapped[r] = transfer(buf, bytes, compute, rank);
    qsort(overlapped, (size_t)repeats, sizeof(double), cmp);
    double result[2] = {t_alone, overlapped[repeats / 2]};
    if (rank == 1) MPI_Send(result, 2, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Recv(result, 2, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double hidden = 1.0 - result[1] / result[0];
      if (hidden < 0) hidden = 0;
      printf("%s  {\"bytes\": %ld, \"transfer_us\": %.3f, \"compute_us\": %.3f, "
             "\"wait_after_compute_us\": %.3f, \"hidden\": %.4f}",
             first ? "" : ",\n", bytes, result[0] * 1e6, compute * 1e6, result[1] * 1e6, hidden);
      first = 0;
    }
  }
  if (rank == 0) printf("\n]\n");
  free(buf);
  MPI_Finalize();
  return 0;
}
