// A file the user asked for: checked before any work, written under a temporary name, renamed.
#pragma once

#include <tilepipe/support/expected.hpp>

#include <sys/types.h>
#include <string>
#include <string_view>

namespace tp {

/// An output file: `make` checks, before any work, that the path can be created or replaced;
/// `write` (or `reserve_temp` + `commit` for a writer in another process) puts the contents under
/// a fresh temporary name in the same directory and renames it onto the path when complete, so
/// that the path holds either its old contents or the whole new file, never a part. A temporary
/// that was not committed is removed by the destructor. No other file is written or removed.
///
/// Errors name the path (`cannot write 'out/t.json': directory 'out' does not exist`); the
/// caller adds which option named it. Bad paths are Errc::invalid_argument, failures while
/// writing Errc::system. Not thread-safe; movable, not copyable.
class OutputFile {
 public:
  /// Checks `path`: not empty; not a directory nor another non-regular file; its directory
  /// exists and a file can be created there (probed by creating and removing a temporary); an
  /// existing file is writable. A symbolic link is followed: its target is replaced.
  static Expected<OutputFile> make(std::string path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  /// The path as given.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Writes `contents` to a temporary in the path's directory, flushes it to disk and renames it
  /// onto the path; on failure removes the temporary and leaves the path as it was.
  Status write(std::string_view contents);

  /// For a writer in another process: creates an empty temporary next to the path whose name
  /// ends like the path (same extension) and returns its name; commit() renames it onto the path.
  Expected<std::string> reserve_temp();
  /// Renames the reserved temporary onto the path (with the mode a new file gets, or the
  /// replaced file's mode).
  Status commit();
  /// Removes the reserved temporary, if any (the destructor does this too).
  void discard() noexcept;

 private:
  explicit OutputFile(std::string path, std::string target, std::string directory)
      : path_(std::move(path)), target_(std::move(target)), directory_(std::move(directory)) {}

  Expected<std::string> create_temp(std::string_view suffix, int* fd_out);

  std::string path_;       ///< as given (for messages)
  std::string target_;     ///< what is replaced: the path, or a symbolic link's target
  std::string directory_;  ///< target_'s directory ("." for a bare name)
  std::string temp_;       ///< the reserved temporary, or empty
  pid_t owner_ = 0;        ///< the process that reserved temp_ (a forked copy must not remove it)
};

}  // namespace tp
