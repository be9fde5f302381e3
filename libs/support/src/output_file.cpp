// OutputFile: path checks before the work, then a temporary in the same directory renamed on top.
#include <tilepipe/support/output_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

namespace tp {

namespace {

std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

Unexpected bad_path(std::string_view path, const std::string& why) {
  return fail(Errc::invalid_argument, "cannot write " + in_quotes(path) + ": " + why);
}

Unexpected write_failed(std::string_view path, const std::string& why) {
  return fail(Errc::system, "cannot write " + in_quotes(path) + ": " + why);
}

/// The process's umask, read without changing it (umask(2) would race with other threads).
mode_t current_umask() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
  }
  return 022;
}

/// The mode the file gets: the replaced file's, else what open(O_CREAT, 0666) would give.
mode_t mode_for(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) return st.st_mode & 07777;
  return static_cast<mode_t>(0666) & ~current_umask();
}

/// The file name's extension when it looks like one (".png"), else empty.
std::string extension_of(const std::string& target) {
  std::string ext = std::filesystem::path(target).extension().string();
  const bool plain =
      ext.size() >= 2 && ext.size() <= 16 && std::all_of(ext.begin() + 1, ext.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      });
  return plain ? ext : std::string();
}

}  // namespace

Expected<OutputFile> OutputFile::make(std::string path) {
  if (path.empty()) return bad_path(path, "the path is empty (name a file)");
  namespace fs = std::filesystem;
  std::string target = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::path(path), ec);
    if (ec) return bad_path(path, "cannot follow the symbolic link: " + ec.message());
    target = resolved.string();
  }
  const fs::path tpath(target);
  if (!tpath.has_filename()) return bad_path(path, "it names a directory (it ends in '/')");
  const std::string directory = tpath.has_parent_path() ? tpath.parent_path().string() : ".";
  if (::stat(directory.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return bad_path(path, "directory " + in_quotes(directory) + " does not exist");
    if (errno == ENOTDIR) return bad_path(path, in_quotes(directory) + " is not a directory");
    return bad_path(path, "directory " + in_quotes(directory) + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return bad_path(path, in_quotes(directory) + " is not a directory");
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return bad_path(path, "it is a directory");
    if (!S_ISREG(st.st_mode)) return bad_path(path, "it is not a regular file");
    if (::access(target.c_str(), W_OK) != 0) {
      return bad_path(path, std::string("it is not writable (") + std::strerror(errno) + ")");
    }
  } else if (errno != ENOENT) {
    return bad_path(path, std::strerror(errno));
  }
  OutputFile out(std::move(path), std::move(target), directory);
  // A file can be created there: the probe is removed at once.
  int fd = -1;
  auto probe = out.create_temp("", &fd);
  if (!probe) {
    return bad_path(out.path_, "cannot create a file in directory " + in_quotes(directory) + ": " +
                                   probe.error().message);
  }
  ::close(fd);
  ::unlink(probe->c_str());
  return out;
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      directory_(std::move(other.directory_)),
      temp_(std::exchange(other.temp_, std::string())),
      owner_(other.owner_) {}

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    target_ = std::move(other.target_);
    directory_ = std::move(other.directory_);
    temp_ = std::exchange(other.temp_, std::string());
    owner_ = other.owner_;
  }
  return *this;
}

OutputFile::~OutputFile() {
  discard();
}

Expected<std::string> OutputFile::create_temp(std::string_view suffix, int* fd_out) {
  // ".NAME.tmp-<six random letters>.ext": hidden, next to the target (rename stays on one file
  // system), with a short enough name for NAME_MAX; mkostemps fills the six X of the template.
  std::string name = std::filesystem::path(target_).filename().string();
  if (name.size() > 120) name.resize(120);
  std::string pattern =
      directory_ + "/." + name + ".tmp-" + std::string(6, 'X') + std::string(suffix);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const int fd = ::mkostemps(buf.data(), static_cast<int>(suffix.size()), O_CLOEXEC);
  if (fd < 0) return fail(Errc::system, std::strerror(errno));
  *fd_out = fd;
  return std::string(buf.data());
}

Status OutputFile::write(std::string_view contents) {
  int fd = -1;
  auto temp = create_temp("", &fd);
  if (!temp) return write_failed(path_, temp.error().message);
  const auto give_up = [&](int err) {
    ::close(fd);
    ::unlink(temp->c_str());
    return write_failed(path_, std::strerror(err));
  };
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return give_up(errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, mode_for(target_)) != 0) return give_up(errno);
  if (::fsync(fd) != 0) return give_up(errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp->c_str());
    return write_failed(path_, std::strerror(err));
  }
  if (::rename(temp->c_str(), target_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp->c_str());
    return write_failed(path_, std::strerror(err));
  }
  return {};
}

Expected<std::string> OutputFile::reserve_temp() {
  discard();
  int fd = -1;
  auto temp = create_temp(extension_of(target_), &fd);
  if (!temp) return write_failed(path_, temp.error().message);
  ::close(fd);
  temp_ = *temp;
  owner_ = ::getpid();
  return temp_;
}

Status OutputFile::commit() {
  if (temp_.empty()) return fail(Errc::internal, "OutputFile::commit without reserve_temp");
  if (::chmod(temp_.c_str(), mode_for(target_)) != 0 ||
      ::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    discard();
    return write_failed(path_, std::strerror(err));
  }
  temp_.clear();
  return {};
}

void OutputFile::discard() noexcept {
  if (!temp_.empty() && owner_ == ::getpid()) ::unlink(temp_.c_str());
  temp_.clear();
}

}  // namespace tp
