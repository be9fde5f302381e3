// The machine file: the documented JSON form of a Machine, its validation and the host check.
#pragma once

#include <tilepipe/model/machine.hpp>
#include <tilepipe/support/expected.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace tp::model {

/// The "format" value every machine file carries.
inline constexpr std::string_view machine_file_format = "tilepipe-machine";
/// The file version this build reads and writes.
inline constexpr int machine_file_version = 1;

/// What identifies a host in a machine file. A file is valid on every node of the same type (CPU
/// model and core count): one calibration serves a cluster's nodes of that type.
struct HostIdentity {
  std::string hostname;   ///< gethostname(): where a file was measured (not matched)
  std::string cpu_model;  ///< first "model name" of /proc/cpuinfo, empty when unavailable
  int cores = 0;          ///< online CPUs (hardware threads) of the node; 0: not known
};

/// This host's identity (reads /proc/cpuinfo and the online CPU count; not for hot paths).
HostIdentity this_host();

/// The checks load_machine applies after the file is valid.
struct MachineCheck {
  /// When set, a host-bound file must have been measured on a node of this type: the same CPU
  /// model, and the same core count where the file records one.
  std::optional<HostIdentity> host;
  std::string transport;  ///< when non-empty, the file's transport must be this one
  /// When set, a host-bound file must have been measured through this emulated link ("none":
  /// without one); the text is comm::to_string of the link.
  std::optional<std::string> emulated_link;
};

/// Parses and validates a machine file's text; `origin` names the file in errors.
Expected<Machine> parse_machine(std::string_view text, std::string_view origin);

/// Node-type and transport checks; errors name both sides and suggest `tilepipe calibrate`.
Status check_machine(const Machine& machine, std::string_view origin, const MachineCheck& check);

/// Reads, parses, validates and checks a machine file.
Expected<Machine> load_machine(const std::string& path, const MachineCheck& check);

/// The machine as machine-file JSON text (parse_machine gives back an equal machine).
std::string machine_to_json(const Machine& machine);

/// Writes machine_to_json to a file: checked first, written to a temporary in its directory and
/// renamed onto it (tp::OutputFile), so the file is either the old one or the whole new one.
Status save_machine(const Machine& machine, const std::string& path);

}  // namespace tp::model
