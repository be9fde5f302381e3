// Last words: an error that ends the process before any caller can receive it (an MPI job about
// to be aborted: MPI_Abort kills every rank, so the Error never returns) goes to a process-wide
// sink that the application installs (the CLI prints its `tilepipe: error: ...` line there).
#pragma once

#include <tilepipe/support/error.hpp>

namespace tp {

/// Receives the error that ends the process; must not throw and should flush what it writes.
using LastWordsSink = void (*)(const Error& error) noexcept;

/// Installs `sink` (null: none). Set it once, before any rank starts; thread-safe.
void set_last_words_sink(LastWordsSink sink) noexcept;

/// Hands `error` to the sink: the first call in the process only (later calls return false, so
/// that the watchdog thread and the main thread never both speak); false without a sink.
/// Thread-safe.
bool say_last_words(const Error& error) noexcept;

}  // namespace tp
