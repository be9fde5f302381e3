// The kernel registry and the plugin loader (dlopen).
#include <tilepipe/runtime/kernel_registry.hpp>

#include <dlfcn.h>

#include <set>

namespace tp::runtime {

Status KernelRegistry::add(const KernelEntry& entry, std::string origin) {
  for (const auto& slot : entries_) {
    if (slot.entry.name == entry.name) {
      std::string where = slot.origin.empty() ? "" : " (from " + slot.origin + ")";
      return Unexpected{Error::about("plugin", Errc::invalid_argument,
                                     (origin.empty() ? std::string() : origin + ": ") + "kernel '" +
                                         std::string(entry.name) + "' is registered already" +
                                         where)};
    }
  }
  entries_.push_back(Slot{entry, std::move(origin)});
  return {};
}

Expected<const KernelEntry*> KernelRegistry::find(std::string_view name) const {
  std::set<std::string> origins;
  for (const auto& slot : entries_) {
    if (slot.entry.name == name) return &slot.entry;
    origins.insert(slot.origin);
  }
  std::string from;
  for (const auto& o : origins) from += (from.empty() ? "" : ", ") + o;
  return Unexpected{Error::about(
      "kernel", Errc::invalid_argument,
      "'" + std::string(name) + "' is not a kernel of " + (from.empty() ? "the registry" : from) +
          " (" + (entries_.empty() ? "it has none" : "it has " + names()) + ")")};
}

std::string KernelRegistry::names() const {
  std::string names;
  for (const auto& slot : entries_)
    names += (names.empty() ? "" : "|") + std::string(slot.entry.name);
  return names;
}

std::vector<const KernelEntry*> KernelRegistry::entries() const {
  std::vector<const KernelEntry*> out;
  out.reserve(entries_.size());
  for (const auto& slot : entries_) out.push_back(&slot.entry);
  return out;
}

Status load_plugin(const std::string& path, KernelRegistry& registry) {
  const auto refuse = [&](const std::string& why) {
    return Unexpected{Error::about("plugin", Errc::invalid_argument, path + ": " + why)};
  };
  // A plugin stays loaded for the life of the process: its entries point into it.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return refuse(std::string("does not load: ") + (why ? why : "dlopen failed"));
  }
  ::dlerror();
  void* symbol = ::dlsym(handle, plugin_symbol);
  if (symbol == nullptr) {
    return refuse(std::string("is not a tilepipe plugin: it lacks the symbol ") + plugin_symbol +
                  " (built with TILEPIPE_PLUGIN_KERNEL from tilepipe/plugin.hpp?)");
  }
  using TableFn = const PluginTable* (*)();
  const PluginTable* table = reinterpret_cast<TableFn>(symbol)();
  if (table == nullptr) return refuse("its plugin table is missing");
  if (table->abi_version != plugin_abi_version) {
    return refuse("was built for plugin ABI version " + std::to_string(table->abi_version) +
                  ", this tilepipe has version " + std::to_string(plugin_abi_version) +
                  " (rebuild the plugin against this tilepipe)");
  }
  if (table->count == 0) return refuse("registers no kernel");
  // Every name first (within the library, then against the registry), so that a clash adds none
  // of the library's kernels and the registry's entries never move.
  KernelRegistry own;
  for (std::size_t i = 0; i < table->count; ++i) TP_TRY(own.add(table->kernels[i], path));
  for (std::size_t i = 0; i < table->count; ++i) {
    if (registry.find(table->kernels[i].name)) return registry.add(table->kernels[i], path);
  }
  for (std::size_t i = 0; i < table->count; ++i) TP_TRY(registry.add(table->kernels[i], path));
  return {};
}

}  // namespace tp::runtime
