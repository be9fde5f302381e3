// A test plugin: relax1d (a time loop with a negative dependence, relax.hpp), and two built-in
// kernels built as a plugin's (sor2d, wave2d), whose reports must equal the built-in ones'.
#include "relax.hpp"

#include <tilepipe/kernels/sor.hpp>
#include <tilepipe/kernels/wave.hpp>
#include <tilepipe/plugin.hpp>

TILEPIPE_PLUGIN_KERNEL(relax::Relax, "relax1d")
TILEPIPE_PLUGIN_KERNEL(tp::kernels::Sor<2>, "sor2d")
TILEPIPE_PLUGIN_KERNEL(tp::kernels::Wave<2>, "wave2d")
