// The recurrence kernel as a plugin: `tilepipe run --plugin ./libtp_recurrence.so --kernel
// recurrence --size 1000x1000 --nodes 2 --verify` (docs/kernels.md, "Your kernel as a plugin").
#include "recurrence.hpp"

#include <tilepipe/plugin.hpp>

TILEPIPE_PLUGIN_KERNEL(recurrence::Recurrence, "recurrence")
