// A team of threads that runs numbered steps with a barrier between consecutive steps.
#pragma once

#include <tilepipe/exec/kernel.hpp>

#include <functional>

namespace tp::exec {

/// Runs body(thread, step) on `threads` threads (the caller is thread 0) for step = 0 .. steps-1,
/// all threads finishing step s before any starts step s+1 (one barrier per step). If a body
/// throws, later steps are skipped on every thread and the first exception is rethrown here.
/// Preconditions: threads >= 1, steps >= 0.
void run_steps(int threads, Index steps, const std::function<void(int thread, Index step)>& body);

}  // namespace tp::exec
