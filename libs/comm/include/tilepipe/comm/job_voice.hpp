// The job's voice: which rank of a launched job (mpirun, mpiexec, srun) prints the error that
// ends the whole job, so that the user reads one line however many ranks saw the fault.
#pragma once

#include <string>

namespace tp::comm {

/// When a rank claims the voice: at once (an error of its own), or in its turn (a fault that
/// several ranks see alike: a stopped peer, a set-up that cannot go on).
enum class VoiceTurn { at_once, in_turn };

/// True when this process is to print the error that ends the job; it must then print and end
/// the job (MPI_Abort, or a failing exit that the launcher turns into the job's end) at once.
/// The voice is one per host, claimed by the first rank to ask (an abstract Unix socket named
/// after the launcher's pid: held until the process dies). `in_turn`: a rank first waits its
/// turn, 2 s for each rank of this host before it (by local rank) that is not stopped, so that
/// the same fault seen on several ranks is reported by the lowest running one and the job ends
/// before the others' turns come, whenever each noticed it. A rank that does not get the voice,
/// or that asks when a rank of this host is already gone (its speaker ended the job, or it died
/// and the launcher reports it), waits up to 5 s for the job to end before it returns false (the
/// caller then ends the job silently). Outside a launched job: true at once.
bool take_job_voice(VoiceTurn turn) noexcept;

/// "rank 1 (pid 4242)": a stopped process of this job on this host (one that shares this
/// process's parent, the launcher, and whose /proc state is T), or "".
std::string stopped_job_sibling();

}  // namespace tp::comm
