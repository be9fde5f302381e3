// A test plugin built for another plugin ABI version: the loader must refuse it.
#include <tilepipe/runtime/kernel_registry.hpp>

extern "C" [[gnu::visibility("default")]] const tp::runtime::PluginTable* tilepipe_plugin_table() {
  static tp::runtime::PluginTable table{tp::runtime::plugin_abi_version + 1000, nullptr, 0};
  return &table;
}
