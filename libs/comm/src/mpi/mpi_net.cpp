// MpiNet: point-to-point via MPI_Isend/MPI_Improbe/MPI_Imrecv, one-sided via MPI_Put + counter.
#include "mpi_net.hpp"

#include "mpi_watchdog.hpp"

#include <climits>
#include <string>

namespace tp::comm::detail {

namespace {

/// Library-internal tags are negative (>= -64); MPI tags must be >= 0.
constexpr int tag_offset = 64;

}  // namespace

std::string mpi_error_text(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(call) + ": " + std::string(text, static_cast<std::size_t>(len));
}

#define TP_MPI_CHECK(call)                                                         \
  do {                                                                             \
    const int tp_mpi_rc_ = (call);                                                 \
    if (tp_mpi_rc_ != MPI_SUCCESS) {                                               \
      return fail(Errc::system, mpi_error_text(#call, tp_mpi_rc_).substr(0, 200)); \
    }                                                                              \
  } while (0)

MpiNet::~MpiNet() {
  for (auto& w : windows_) {
    MPI_Win_unlock_all(w.data);
    MPI_Win_unlock_all(w.counter);
    MPI_Win_free(&w.data);
    MPI_Win_free(&w.counter);
  }
  for (auto& r : requests_) {
    if (r != MPI_REQUEST_NULL) {
      MPI_Cancel(&r);
      MPI_Request_free(&r);
    }
  }
  MPI_Comm_free(&comm_);
}

int MpiNet::add_request(MPI_Request r) {
  if (!free_requests_.empty()) {
    const int h = free_requests_.back();
    free_requests_.pop_back();
    requests_[static_cast<std::size_t>(h)] = r;
    return h;
  }
  requests_.push_back(r);
  return static_cast<int>(requests_.size() - 1);
}

Expected<int> MpiNet::isend(int dest, int tag, const std::byte* data, std::size_t bytes) {
  if (bytes > INT_MAX) {
    return fail(Errc::out_of_range, "MPI transport: message of " + std::to_string(bytes) +
                                        " bytes exceeds " + std::to_string(INT_MAX));
  }
  MPI_Request r = MPI_REQUEST_NULL;
  TP_MPI_CHECK(
      MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, tag + tag_offset, comm_, &r));
  return add_request(r);
}

Expected<bool> MpiNet::probe(NetIncoming& out) {
  int flag = 0;
  MPI_Message msg = MPI_MESSAGE_NULL;
  MPI_Status st;
  TP_MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &msg, &st));
  if (flag == 0) return false;
  int count = 0;
  TP_MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
  int h = 0;
  if (!free_messages_.empty()) {
    h = free_messages_.back();
    free_messages_.pop_back();
    messages_[static_cast<std::size_t>(h)] = msg;
  } else {
    messages_.push_back(msg);
    h = static_cast<int>(messages_.size() - 1);
  }
  out = NetIncoming{st.MPI_SOURCE, st.MPI_TAG - tag_offset, static_cast<std::size_t>(count), h};
  return true;
}

Expected<int> MpiNet::receive(int message, std::byte* buffer, std::size_t bytes) {
  MPI_Message& m = messages_[static_cast<std::size_t>(message)];
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = MPI_Imrecv(buffer, static_cast<int>(bytes), MPI_BYTE, &m, &r);
  free_messages_.push_back(message);
  if (rc != MPI_SUCCESS) return fail(Errc::system, mpi_error_text("MPI_Imrecv", rc));
  return add_request(r);
}

Status MpiNet::discard(int message, std::size_t bytes) {
  MPI_Message& m = messages_[static_cast<std::size_t>(message)];
  std::vector<std::byte> scratch(bytes);
  const int rc =
      MPI_Mrecv(scratch.data(), static_cast<int>(bytes), MPI_BYTE, &m, MPI_STATUS_IGNORE);
  free_messages_.push_back(message);
  if (rc != MPI_SUCCESS) return fail(Errc::system, mpi_error_text("MPI_Mrecv", rc));
  return {};
}

Expected<bool> MpiNet::test(int handle) {
  MPI_Request& r = requests_[static_cast<std::size_t>(handle)];
  int flag = 0;
  const int rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    free_requests_.push_back(handle);
    return fail(Errc::system, mpi_error_text("MPI_Test", rc));
  }
  if (flag != 0) free_requests_.push_back(handle);
  return flag != 0;
}

Expected<int> MpiNet::create_window(std::byte* base, std::size_t bytes) {
  const MpiWatchdog watchdog(progress_timeout_, "a one-sided window's creation");
  if (!watchdog.started()) {
    return fail(Errc::system, "cannot start the watchdog thread: " + watchdog.why_not());
  }
  Window w;
  TP_MPI_CHECK(
      MPI_Win_create(base, static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm_, &w.data));
  std::uint64_t* counter = nullptr;
  TP_MPI_CHECK(MPI_Win_allocate(sizeof(std::uint64_t), sizeof(std::uint64_t), MPI_INFO_NULL, comm_,
                                &counter, &w.counter));
  *counter = 0;
  TP_MPI_CHECK(MPI_Win_set_errhandler(w.data, MPI_ERRORS_RETURN));
  TP_MPI_CHECK(MPI_Win_set_errhandler(w.counter, MPI_ERRORS_RETURN));
  // Passive target for the whole lifetime: puts are flushed per call, no fences needed.
  TP_MPI_CHECK(MPI_Win_lock_all(0, w.data));
  TP_MPI_CHECK(MPI_Win_lock_all(0, w.counter));
  TP_MPI_CHECK(MPI_Barrier(comm_));
  windows_.push_back(w);
  return static_cast<int>(windows_.size() - 1);
}

Status MpiNet::put(int window, int target, std::size_t offset, const std::byte* data,
                   std::size_t bytes, bool notify) {
  const Window& w = windows_[static_cast<std::size_t>(window)];
  if (bytes > INT_MAX) return fail(Errc::out_of_range, "MPI put larger than INT_MAX bytes");
  if (bytes > 0) {
    TP_MPI_CHECK(MPI_Put(data, static_cast<int>(bytes), MPI_BYTE, target,
                         static_cast<MPI_Aint>(offset), static_cast<int>(bytes), MPI_BYTE, w.data));
  }
  // Remote completion of the data before the counter moves: the owner that sees the new count
  // (and calls MPI_Win_sync) sees the data.
  TP_MPI_CHECK(MPI_Win_flush(target, w.data));
  if (notify) {
    const std::uint64_t one = 1;
    TP_MPI_CHECK(
        MPI_Accumulate(&one, 1, MPI_UINT64_T, target, 0, 1, MPI_UINT64_T, MPI_SUM, w.counter));
    TP_MPI_CHECK(MPI_Win_flush(target, w.counter));
  }
  return {};
}

Expected<std::uint64_t> MpiNet::notifications(int window) {
  const Window& w = windows_[static_cast<std::size_t>(window)];
  int me = 0;
  TP_MPI_CHECK(MPI_Comm_rank(comm_, &me));
  std::uint64_t value = 0;
  TP_MPI_CHECK(MPI_Fetch_and_op(nullptr, &value, MPI_UINT64_T, me, 0, MPI_NO_OP, w.counter));
  TP_MPI_CHECK(MPI_Win_flush(me, w.counter));
  TP_MPI_CHECK(MPI_Win_sync(w.data));
  return value;
}

}  // namespace tp::comm::detail
