// The umbrella header for kernel plugins: TILEPIPE_PLUGIN_KERNEL(Type, "name"), any number of times
// in one shared library, makes `tilepipe run --plugin ./libmine.so --kernel name` run Type
// (docs/kernels.md, "Your kernel as a plugin"; docs/adr/0006-kernel-plugins.md).
#pragma once

#include <tilepipe/runtime/kernel_entry.hpp>

#include <vector>

namespace tp::plugin::detail {

// Hidden whatever visibility the plugin is compiled with: every library keeps its own list and
// table. (A function-local static of a default-visibility inline function is STB_GNU_UNIQUE: the
// dynamic loader would bind every plugin loaded later to the first one's object.)

/// This library's kernels, in the order their registrations ran.
[[gnu::visibility("hidden")]] inline std::vector<runtime::KernelEntry>& entries() {
  static std::vector<runtime::KernelEntry> registered;
  return registered;
}

[[gnu::visibility("hidden")]] inline runtime::PluginTable& table() {
  static runtime::PluginTable t;
  return t;
}

[[gnu::visibility("hidden")]] inline bool add(runtime::KernelEntry entry) {
  entries().push_back(std::move(entry));
  return true;
}

}  // namespace tp::plugin::detail

/// The one symbol a plugin exports (every translation unit that includes this header defines it;
/// the linker keeps one). The loader reads abi_version before anything else.
extern "C" [[gnu::visibility("default"), gnu::used]] inline const tp::runtime::PluginTable*
tilepipe_plugin_table() {
  tp::runtime::PluginTable& table = tp::plugin::detail::table();
  table.abi_version = tp::runtime::plugin_abi_version;
  table.kernels = tp::plugin::detail::entries().data();
  table.count = tp::plugin::detail::entries().size();
  return &table;
}

#define TP_PLUGIN_CONCAT_(a, b) a##b
#define TP_PLUGIN_CONCAT(a, b) TP_PLUGIN_CONCAT_(a, b)

/// Registers kernel type `Type` (a tp::exec::Kernel; name a template with commas through an
/// alias) under `name` (a string literal) in this plugin. At namespace scope.
#define TILEPIPE_PLUGIN_KERNEL(Type, name)                                           \
  namespace {                                                                        \
  [[maybe_unused]] const bool TP_PLUGIN_CONCAT(tp_plugin_registered_, __COUNTER__) = \
      ((void)&::tilepipe_plugin_table,                                               \
       ::tp::plugin::detail::add(::tp::runtime::make_entry<Type>(name)));            \
  }
