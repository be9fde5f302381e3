// The LCS kernel as a plugin: `tilepipe run --plugin ./libtp_lcs.so --kernel lcs --size 500x400
// --param seed=7 --nodes 2 --verify`.
#include "lcs.hpp"

#include <tilepipe/plugin.hpp>

TILEPIPE_PLUGIN_KERNEL(lcs::Lcs, "lcs")
