// Machine files: JSON reading with one-line errors naming the field, writing, host identity.
#include <tilepipe/model/machine_file.hpp>
#include <tilepipe/support/output_file.hpp>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>

namespace tp::model {

namespace {

using Json = nlohmann::json;

// The ranges a machine file's values must lie in: wide enough for any real machine (and the
// seeds' 1999 clusters), narrow enough that every prediction stays a finite, positive time.
constexpr double min_ns_per_point = 1e-6;   ///< t_comp1: at least a femtosecond per point
constexpr double max_ns_per_point = 1e9;    ///< t_comp1: at most a second per point
constexpr double max_duration_us = 1e7;     ///< t_start, t_sync, latencies: at most 10 s
constexpr double min_bandwidth = 1;         ///< bytes per second (as --link accepts)
constexpr double max_bandwidth = 1e15;      ///< a petabyte per second
constexpr double min_compute_scale = 1e-6;  ///< a node at most a million times faster
constexpr double max_compute_scale = 1e6;   ///< or slower
constexpr std::int64_t max_element_bytes = std::int64_t{1} << 20;
constexpr std::int64_t max_tile_points = std::int64_t{1} << 53;  ///< exact as a double
constexpr std::int64_t max_torus_extent = std::int64_t{1} << 20;
constexpr std::int64_t max_host_count = std::int64_t{1} << 20;  ///< ranks or cores of a host
constexpr std::int64_t max_cores = std::int64_t{1} << 20;       ///< CPUs of one node
/// The transports a file may be for: this build's, and the seeds' reference clusters'.
constexpr std::string_view known_transports[] = {"shm", "mpi", "sci-dma"};

/// The shortest decimal form of a limit ("1e+07", "1").
std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// Reads the fields of one JSON object, reporting errors as "machine file 'F': ...".
class Reader {
 public:
  Reader(const Json& object, std::string prefix, std::string_view origin)
      : obj_(object), prefix_(std::move(prefix)), origin_(origin) {}

  [[nodiscard]] Unexpected error(const std::string& what) const {
    return fail(Errc::invalid_argument, "machine file '" + origin_ + "': " + what);
  }
  [[nodiscard]] std::string name(std::string_view key) const { return prefix_ + std::string(key); }

  /// Fails on keys outside `allowed`.
  Status only(std::initializer_list<std::string_view> allowed) const {
    for (const auto& item : obj_.items()) {
      bool ok = false;
      for (auto a : allowed) ok = ok || item.key() == a;
      if (!ok) return error("unknown field '" + name(item.key()) + "'");
    }
    return {};
  }
  [[nodiscard]] bool has(std::string_view key) const { return obj_.contains(key); }

  Expected<const Json*> field(std::string_view key) const {
    auto it = obj_.find(key);
    if (it == obj_.end()) return error("missing field '" + name(key) + "'");
    return &*it;
  }
  Expected<const Json*> object(std::string_view key) const {
    auto f = field(key);
    if (!f) return f;
    if (!(*f)->is_object()) return error("'" + name(key) + "' must be an object");
    return f;
  }
  Expected<std::string> string(std::string_view key) const {
    auto f = field(key);
    if (!f) return Unexpected{f.error()};
    if (!(*f)->is_string()) return error("'" + name(key) + "' must be a string");
    return (*f)->get<std::string>();
  }
  Expected<bool> boolean(std::string_view key) const {
    auto f = field(key);
    if (!f) return Unexpected{f.error()};
    if (!(*f)->is_boolean()) return error("'" + name(key) + "' must be true or false");
    return (*f)->get<bool>();
  }
  /// A finite number in [min, max].
  Expected<double> number(std::string_view key, double min, double max) const {
    auto f = field(key);
    if (!f) return Unexpected{f.error()};
    if (!(*f)->is_number()) return error("'" + name(key) + "' must be a number");
    const double v = (*f)->get<double>();
    if (!std::isfinite(v)) return error("'" + name(key) + "' must be finite");
    if (v < min) {
      return error("'" + name(key) + "' is " + (*f)->dump() + ": it must be >= " + shortest(min));
    }
    if (v > max) {
      return error("'" + name(key) + "' is " + (*f)->dump() + ": it must be <= " + shortest(max));
    }
    return v;
  }
  /// A whole number in [min, max].
  Expected<std::int64_t> count(std::string_view key, std::int64_t max = INT64_MAX,
                               std::int64_t min = 1) const {
    auto f = field(key);
    if (!f) return Unexpected{f.error()};
    return whole(**f, name(key), min, max);
  }
  /// A JSON value that must be a whole number in [min, max]; `what` names it.
  Expected<std::int64_t> whole(const Json& v, const std::string& what, std::int64_t min,
                               std::int64_t max) const {
    if (!v.is_number_integer()) return error("'" + what + "' must be a whole number");
    // An unsigned JSON integer above INT64_MAX is out of range, not a negative number.
    const bool huge = v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX;
    const std::int64_t x = huge ? INT64_MAX : v.get<std::int64_t>();
    if (x < min) {
      return error("'" + what + "' is " + v.dump() + ": it must be >= " + std::to_string(min));
    }
    if (huge || x > max) {
      return error("'" + what + "' is " + v.dump() + ": it must be <= " + std::to_string(max));
    }
    return x;
  }

 private:
  const Json& obj_;
  std::string prefix_;
  std::string origin_;
};

Expected<ComputeCost> read_compute(const Json& j, const std::string& prefix,
                                   std::string_view origin, bool top) {
  Reader r(j, prefix, origin);
  if (top) {
    TP_TRY(r.only({"t_comp1_ns", "element_bytes", "samples", "kernels"}));
  } else {
    TP_TRY(r.only({"t_comp1_ns", "element_bytes", "samples"}));
  }
  ComputeCost c;
  auto t1 = r.number("t_comp1_ns", min_ns_per_point, max_ns_per_point);
  if (!t1) return Unexpected{t1.error()};
  c.t_comp1 = Seconds{*t1 * 1e-9};
  auto eb = r.count("element_bytes", max_element_bytes);
  if (!eb) return Unexpected{eb.error()};
  c.element_bytes = *eb;
  if (r.has("samples")) {
    const Json& s = j.at("samples");
    if (!s.is_array()) return r.error("'" + r.name("samples") + "' must be an array");
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::string at = r.name("samples") + "[" + std::to_string(i) + "]";
      if (!s[i].is_object()) return r.error("'" + at + "' must be an object");
      Reader rs(s[i], at + ".", origin);
      TP_TRY(rs.only({"tile_points", "t_comp1_ns"}));
      auto g = rs.count("tile_points", max_tile_points);
      if (!g) return Unexpected{g.error()};
      auto ts = rs.number("t_comp1_ns", min_ns_per_point, max_ns_per_point);
      if (!ts) return Unexpected{ts.error()};
      ComputeSample sample{*g, Seconds{*ts * 1e-9}};
      if (!c.samples.empty()) {
        const auto& prev = c.samples.back();
        if (sample.tile_points <= prev.tile_points) {
          return r.error("'" + at + ".tile_points' must be larger than the previous sample's");
        }
        if (sample.t_comp1 * static_cast<double>(sample.tile_points) <
            prev.t_comp1 * static_cast<double>(prev.tile_points)) {
          return r.error("'" + at +
                         "': the tile time tile_points x t_comp1_ns is smaller than the previous "
                         "sample's; a larger tile cannot take less time");
        }
      }
      c.samples.push_back(sample);
    }
  }
  return c;
}

Json compute_json(const ComputeCost& c) {
  Json j;
  j["t_comp1_ns"] = c.t_comp1.count() * 1e9;
  j["element_bytes"] = c.element_bytes;
  if (!c.samples.empty()) {
    Json s = Json::array();
    for (const auto& x : c.samples) {
      s.push_back({{"tile_points", x.tile_points}, {"t_comp1_ns", x.t_comp1.count() * 1e9}});
    }
    j["samples"] = s;
  }
  return j;
}

Expected<Network> read_network(const Json& j, std::string_view origin) {
  Reader r(j, "network.", origin);
  TP_TRY(r.only(
      {"topology", "torus", "link_bandwidth_bytes_per_s", "hop_latency_us", "nodes", "hosts"}));
  Network n;
  if (r.has("topology")) {
    auto t = r.string("topology");
    if (!t) return Unexpected{t.error()};
    if (*t == "torus") {
      n.topology = Topology::torus;
    } else if (*t != "full-bisection") {
      return r.error("'network.topology' is '" + *t + "' (choose full-bisection|torus)");
    }
  }
  const bool torus = n.topology == Topology::torus;
  if (torus) {
    auto dims = r.field("torus");
    if (!dims) return r.error("missing field 'network.torus' (the torus extents, e.g. [8, 8, 8])");
    if (!(*dims)->is_array() || (*dims)->empty() || (*dims)->size() > 3) {
      return r.error("'network.torus' must be an array of 1 to 3 whole numbers");
    }
    for (const auto& e : **dims) {
      if (!e.is_number_integer() ||
          (e.is_number_unsigned() && e.get<std::uint64_t>() > INT64_MAX) ||
          e.get<std::int64_t>() < 1 || e.get<std::int64_t>() > max_torus_extent) {
        return r.error("'network.torus' has " + e.dump() +
                       ": every extent must be a whole number in [1, " +
                       std::to_string(max_torus_extent) + "]");
      }
      n.torus.push_back(e.get<std::int64_t>());
    }
    auto bw = r.number("link_bandwidth_bytes_per_s", min_bandwidth, max_bandwidth);
    if (!bw) return Unexpected{bw.error()};
    n.link_bandwidth_bytes_per_s = *bw;
  } else {
    for (const char* key : {"torus", "link_bandwidth_bytes_per_s"}) {
      if (r.has(key)) {
        return r.error("'network." + std::string(key) + "' needs \"topology\": \"torus\"");
      }
    }
  }
  if (r.has("hop_latency_us")) {
    auto h = r.number("hop_latency_us", 0, max_duration_us);
    if (!h) return Unexpected{h.error()};
    n.hop_latency = Seconds{*h * 1e-6};
  }
  if (r.has("nodes")) {
    const Json& a = j.at("nodes");
    if (!a.is_array()) return r.error("'network.nodes' must be an array");
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string at = "network.nodes[" + std::to_string(i) + "]";
      if (!a[i].is_object()) return r.error("'" + at + "' must be an object");
      Reader rn(a[i], at + ".", origin);
      TP_TRY(rn.only({"node", "compute_scale", "bandwidth_bytes_per_s"}));
      NodeOverride o;
      auto node = rn.field("node");
      if (!node) return Unexpected{node.error()};
      auto rank = rn.whole(**node, at + ".node", 0, max_torus_extent);
      if (!rank) return Unexpected{rank.error()};
      o.node = *rank;
      if (!seen.insert(o.node).second) {
        return r.error("'" + at + ".node' repeats node " + std::to_string(o.node));
      }
      if (rn.has("compute_scale")) {
        auto c = rn.number("compute_scale", min_compute_scale, max_compute_scale);
        if (!c) return Unexpected{c.error()};
        o.compute_scale = *c;
      }
      if (rn.has("bandwidth_bytes_per_s")) {
        auto b = rn.number("bandwidth_bytes_per_s", min_bandwidth, max_bandwidth);
        if (!b) return Unexpected{b.error()};
        o.bandwidth_bytes_per_s = *b;
      }
      n.nodes.push_back(o);
    }
  }
  if (r.has("hosts")) {
    const Json& h = j.at("hosts");
    if (!h.is_object()) return r.error("'network.hosts' must be an object");
    Reader rh(h, "network.hosts.", origin);
    TP_TRY(rh.only({"ranks_per_host", "cores", "wake_us"}));
    for (const char* key : {"ranks_per_host", "cores"}) {
      if (!rh.has(key)) {
        return r.error("missing field 'network.hosts." + std::string(key) +
                       "' (ranks sharing a host's cores need ranks_per_host and cores)");
      }
    }
    auto per_host = rh.count("ranks_per_host", max_host_count);
    if (!per_host) return Unexpected{per_host.error()};
    auto cores = rh.count("cores", max_host_count);
    if (!cores) return Unexpected{cores.error()};
    n.hosts.ranks_per_host = *per_host;
    n.hosts.cores = *cores;
    if (rh.has("wake_us")) {
      auto w = rh.number("wake_us", 0, max_duration_us);
      if (!w) return Unexpected{w.error()};
      n.hosts.wake = Seconds{*w * 1e-6};
    }
  }
  return n;
}

std::string first_line(std::string s) {
  if (auto p = s.find('\n'); p != std::string::npos) s.resize(p);
  // nlohmann prefixes "[json.exception.parse_error.101] "; the rest names line and column.
  if (s.rfind("[json.exception.", 0) == 0) {
    if (auto p = s.find("] "); p != std::string::npos) s.erase(0, p + 2);
  }
  return s;
}

}  // namespace

HostIdentity this_host() {
  HostIdentity id;
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) == 0) id.hostname = buf;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    if (auto p = line.find(':'); p != std::string::npos) {
      auto v = line.substr(p + 1);
      const auto b = v.find_first_not_of(" \t");
      id.cpu_model = b == std::string::npos ? "" : v.substr(b);
    }
    break;
  }
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  id.cores = online > 0 && online <= max_cores ? static_cast<int>(online) : 0;
  return id;
}

Expected<Machine> parse_machine(std::string_view text, std::string_view origin) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return fail(Errc::invalid_argument, "machine file '" + std::string(origin) +
                                            "' is not valid JSON: " + first_line(e.what()));
  } catch (const Json::out_of_range&) {
    // nlohmann's message would repeat the whole number (hundreds of digits).
    return fail(Errc::invalid_argument,
                "machine file '" + std::string(origin) +
                    "' has a number beyond the range of a double (about 1.8e308)");
  } catch (const Json::exception& e) {
    return fail(Errc::invalid_argument, "machine file '" + std::string(origin) +
                                            "' is not valid JSON: " + first_line(e.what()));
  }
  Reader r(j, "", origin);
  if (!j.is_object()) return r.error("the top level must be a JSON object");
  TP_TRY(r.only({"format", "version", "machine", "host_bound", "hostname", "cpu_model", "cores",
                 "transport", "emulated_link", "source", "notes", "compute", "comm", "node",
                 "network"}));
  auto format = r.string("format");
  if (!format) return Unexpected{format.error()};
  if (*format != machine_file_format) {
    return r.error("'format' is '" + *format + "', not '" + std::string(machine_file_format) + "'");
  }
  auto version = r.count("version");
  if (!version) return Unexpected{version.error()};
  if (*version != machine_file_version) {
    return r.error("version " + std::to_string(*version) + " is not supported (this tilepipe " +
                   "reads version " + std::to_string(machine_file_version) + ")");
  }
  Machine m;
  auto name = r.string("machine");
  if (!name) return Unexpected{name.error()};
  if (name->empty()) return r.error("'machine' must not be empty");
  m.name = *name;
  auto bound = r.boolean("host_bound");
  if (!bound) return Unexpected{bound.error()};
  m.host_bound = *bound;
  auto host = r.string("hostname");
  if (!host) return Unexpected{host.error()};
  m.hostname = *host;
  if (m.host_bound && m.hostname.empty()) {
    return r.error("'hostname' is empty but 'host_bound' is true");
  }
  auto cpu = r.string("cpu_model");
  if (!cpu) return Unexpected{cpu.error()};
  m.cpu_model = *cpu;
  if (r.has("cores")) {
    auto cores = r.count("cores", max_cores);
    if (!cores) return Unexpected{cores.error()};
    m.cores = static_cast<int>(*cores);
  }
  auto transport = r.string("transport");
  if (!transport) return Unexpected{transport.error()};
  if (transport->empty()) return r.error("'transport' must not be empty");
  if (std::find(std::begin(known_transports), std::end(known_transports), *transport) ==
      std::end(known_transports)) {
    return r.error("'transport' is '" + *transport +
                   "': not a transport (shm, mpi, or sci-dma for the seeds' reference files)");
  }
  m.transport = *transport;
  if (r.has("emulated_link")) {
    auto link = r.string("emulated_link");
    if (!link) return Unexpected{link.error()};
    if (link->empty()) return r.error("'emulated_link' must not be empty (\"none\" for no link)");
    m.emulated_link = *link;
  }
  if (r.has("source")) {
    auto source = r.string("source");
    if (!source) return Unexpected{source.error()};
    m.source = *source;
  }
  if (r.has("notes")) m.notes = j.at("notes").dump();

  auto compute = r.object("compute");
  if (!compute) return Unexpected{compute.error()};
  auto cc = read_compute(**compute, "compute.", origin, true);
  if (!cc) return Unexpected{cc.error()};
  m.compute = *cc;
  if ((*compute)->contains("kernels")) {
    const Json& ks = (*compute)->at("kernels");
    if (!ks.is_object()) return r.error("'compute.kernels' must be an object");
    for (const auto& item : ks.items()) {
      const std::string at = "compute.kernels." + item.key();
      if (!item.value().is_object()) return r.error("'" + at + "' must be an object");
      auto k = read_compute(item.value(), at + ".", origin, false);
      if (!k) return Unexpected{k.error()};
      m.kernels.emplace(item.key(), *k);
    }
  }

  auto comm = r.object("comm");
  if (!comm) return Unexpected{comm.error()};
  Reader rc(**comm, "comm.", origin);
  TP_TRY(rc.only({"t_start_us", "t_sync_us", "latency_us", "bandwidth_bytes_per_s", "send_mode",
                  "cpu_copy_bytes_per_s"}));
  auto t_start = rc.number("t_start_us", 0, max_duration_us);
  if (!t_start) return Unexpected{t_start.error()};
  m.t_start = Seconds{*t_start * 1e-6};
  auto t_sync = rc.number("t_sync_us", 0, max_duration_us);
  if (!t_sync) return Unexpected{t_sync.error()};
  m.t_sync = Seconds{*t_sync * 1e-6};
  auto latency = rc.number("latency_us", 0, max_duration_us);
  if (!latency) return Unexpected{latency.error()};
  m.link.latency = Seconds{*latency * 1e-6};
  auto bw = rc.number("bandwidth_bytes_per_s", min_bandwidth, max_bandwidth);
  if (!bw) return Unexpected{bw.error()};
  m.link.bandwidth_bytes_per_s = *bw;
  if (rc.has("cpu_copy_bytes_per_s")) {
    auto copy = rc.number("cpu_copy_bytes_per_s", min_bandwidth, max_bandwidth);
    if (!copy) return Unexpected{copy.error()};
    m.cpu_copy_bytes_per_s = *copy;
  }
  auto mode = rc.string("send_mode");
  if (!mode) return Unexpected{mode.error()};
  if (*mode == "queued") {
    m.send_mode = SendMode::queued;
  } else if (*mode == "serial") {
    m.send_mode = SendMode::serial;
  } else if (*mode == "parallel") {
    m.send_mode = SendMode::parallel;
  } else {
    return r.error("'comm.send_mode' is '" + *mode + "' (choose queued|serial|parallel)");
  }

  auto node = r.object("node");
  if (!node) return Unexpected{node.error()};
  Reader rn(**node, "node.", origin);
  TP_TRY(rn.only({"t_sync_in_us", "tile_spread"}));
  auto t_sync_in = rn.number("t_sync_in_us", 0, max_duration_us);
  if (!t_sync_in) return Unexpected{t_sync_in.error()};
  m.t_sync_in = Seconds{*t_sync_in * 1e-6};
  if (rn.has("tile_spread")) {
    auto spread = rn.number("tile_spread", 0, 1);
    if (!spread) return Unexpected{spread.error()};
    m.tile_spread = *spread;
  }

  if (r.has("network")) {
    auto net = r.object("network");
    if (!net) return Unexpected{net.error()};
    auto n = read_network(**net, origin);
    if (!n) return Unexpected{n.error()};
    m.network = std::move(*n);
  }
  return m;
}

Status check_machine(const Machine& m, std::string_view origin, const MachineCheck& check) {
  const std::string file = "machine file '" + std::string(origin) + "'";
  // The node type, not the host: a file calibrated on one node serves every node with the same
  // CPU model and core count (the core count is matched when the file records it).
  if (m.host_bound && check.host &&
      (m.cpu_model != check.host->cpu_model || (m.cores > 0 && m.cores != check.host->cores))) {
    const auto type = [](const std::string& cpu, int cores) {
      return "CPU '" + cpu + "'" + (cores > 0 ? ", " + std::to_string(cores) + " cores" : "");
    };
    return fail(Errc::invalid_argument,
                file + " was measured on a node of another type (" + type(m.cpu_model, m.cores) +
                    ", host '" + m.hostname + "') than this one (" +
                    type(check.host->cpu_model, check.host->cores) + ", host '" +
                    check.host->hostname + "'): run `tilepipe calibrate` on a node of this type");
  }
  if (!check.transport.empty() && m.transport != check.transport) {
    return fail(Errc::invalid_argument, file + " is for transport '" + m.transport + "', not '" +
                                            check.transport + "': run `tilepipe calibrate " +
                                            "--transport " + check.transport + "`");
  }
  if (m.host_bound && check.emulated_link && m.emulated_link != *check.emulated_link) {
    const std::string& want = *check.emulated_link;
    const std::string measured = m.emulated_link == "none"
                                     ? " was measured without an emulated link"
                                     : " was measured with --link " + m.emulated_link;
    const std::string asked =
        want == "none" ? "no --link is given" : "this run asks for --link " + want;
    const std::string fix = want == "none"
                                ? "pass --link " + m.emulated_link + " or run `tilepipe calibrate`"
                                : "run `tilepipe calibrate --link " + want + "`";
    return fail(Errc::invalid_argument, file + measured + " but " + asked + ": " + fix);
  }
  return {};
}

Expected<Machine> load_machine(const std::string& path, const MachineCheck& check) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    return fail(Errc::invalid_argument,
                "cannot open machine file '" + path + "': " + std::strerror(errno));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const std::size_t got = std::fread(buf, 1, sizeof buf, f.get());
    text.append(buf, got);
    if (got < sizeof buf) break;
    if (text.size() > (std::size_t{1} << 24)) {
      return fail(Errc::invalid_argument,
                  "machine file '" + path + "' is larger than 16 MiB: not a machine file");
    }
  }
  if (std::ferror(f.get())) {
    return fail(Errc::invalid_argument,
                "cannot read machine file '" + path + "': " + std::strerror(errno));
  }
  auto m = parse_machine(text, path);
  if (!m) return m;
  TP_TRY(check_machine(*m, path, check));
  return m;
}

std::string machine_to_json(const Machine& m) {
  nlohmann::ordered_json j;
  j["format"] = machine_file_format;
  j["version"] = machine_file_version;
  j["machine"] = m.name;
  j["host_bound"] = m.host_bound;
  j["hostname"] = m.hostname;
  j["cpu_model"] = m.cpu_model;
  if (m.cores > 0) j["cores"] = m.cores;
  j["transport"] = m.transport;
  if (m.emulated_link != "none") j["emulated_link"] = m.emulated_link;
  j["source"] = m.source;
  if (!m.notes.empty()) j["notes"] = nlohmann::ordered_json::parse(m.notes);
  Json compute = compute_json(m.compute);
  if (!m.kernels.empty()) {
    Json ks = Json::object();
    for (const auto& [name, c] : m.kernels) ks[name] = compute_json(c);
    compute["kernels"] = ks;
  }
  j["compute"] = compute;
  nlohmann::ordered_json comm;
  comm["t_start_us"] = m.t_start.count() * 1e6;
  comm["t_sync_us"] = m.t_sync.count() * 1e6;
  comm["latency_us"] = m.link.latency.count() * 1e6;
  comm["bandwidth_bytes_per_s"] = m.link.bandwidth_bytes_per_s;
  comm["send_mode"] = std::string(to_string(m.send_mode));
  if (m.cpu_copy_bytes_per_s > 0) comm["cpu_copy_bytes_per_s"] = m.cpu_copy_bytes_per_s;
  j["comm"] = comm;
  j["node"] = {{"t_sync_in_us", m.t_sync_in.count() * 1e6}};
  if (m.tile_spread > 0) j["node"]["tile_spread"] = m.tile_spread;
  const Network& n = m.network;
  if (!n.is_default() || n.topology == Topology::torus) {
    nlohmann::ordered_json net;
    net["topology"] = std::string(to_string(n.topology));
    if (n.topology == Topology::torus) {
      net["torus"] = n.torus;
      net["link_bandwidth_bytes_per_s"] = n.link_bandwidth_bytes_per_s;
    }
    net["hop_latency_us"] = n.hop_latency.count() * 1e6;
    if (!n.nodes.empty()) {
      Json a = Json::array();
      for (const auto& o : n.nodes) {
        Json x{{"node", o.node}, {"compute_scale", o.compute_scale}};
        if (o.bandwidth_bytes_per_s > 0) x["bandwidth_bytes_per_s"] = o.bandwidth_bytes_per_s;
        a.push_back(x);
      }
      net["nodes"] = a;
    }
    if (n.hosts.shared()) {
      net["hosts"] = {{"ranks_per_host", n.hosts.ranks_per_host},
                      {"cores", n.hosts.cores},
                      {"wake_us", n.hosts.wake.count() * 1e6}};
    }
    j["network"] = net;
  }
  return j.dump(2) + "\n";
}

Status save_machine(const Machine& m, const std::string& path) {
  auto out = OutputFile::make(path);
  if (!out) return Unexpected{out.error()};
  return out->write(machine_to_json(m));
}

}  // namespace tp::model
