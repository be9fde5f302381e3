// The umbrella header for users of the runtime: `tp::runtime::run(kernel, size, options)`.
#pragma once

#include <tilepipe/runtime/run.hpp>
