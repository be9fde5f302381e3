// A test plugin, second translation unit: the examples' recurrence once more under another name
// (two units of one plugin register into one table).
#include "../../../examples/02_recurrence/recurrence.hpp"

#include <tilepipe/plugin.hpp>

TILEPIPE_PLUGIN_KERNEL(recurrence::Recurrence, "recurrence_b")
