// The step-time formulas of the seeds applied to a plan's actual tiles, faces and step count.
#include <tilepipe/model/cost_model.hpp>
#include <tilepipe/support/assert.hpp>
#include <tilepipe/support/checked_math.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace tp::model {

Seconds vertical_beta(Seconds alpha, Seconds t_sync_in, std::int64_t n, std::int64_t depth) {
  TP_EXPECTS(n >= 1 && depth >= 0);
  const double nn = static_cast<double>(n);
  const double dd = static_cast<double>(depth);
  return alpha * ((nn + dd) / nn) + t_sync_in * (nn + dd - 1);
}

std::int64_t best_subtiles(Seconds alpha, Seconds t_sync_in, std::int64_t depth,
                           std::int64_t max_n) {
  TP_EXPECTS(depth >= 0 && max_n >= 1);
  if (depth == 0) return 1;
  if (t_sync_in.count() <= 0) return max_n;
  // Formula (7) generalized: d beta / dN = -D alpha / N^2 + t_sync_in = 0.
  const double x = std::sqrt(static_cast<double>(depth) * alpha.count() / t_sync_in.count());
  const double top = static_cast<double>(max_n);
  const auto lo = static_cast<std::int64_t>(std::clamp(std::floor(x), 1.0, top));
  const auto hi = static_cast<std::int64_t>(std::clamp(std::ceil(x), 1.0, top));
  return vertical_beta(alpha, t_sync_in, hi, depth) < vertical_beta(alpha, t_sync_in, lo, depth)
             ? hi
             : lo;
}

Expected<std::vector<std::int64_t>> face_bytes_per_neighbour(const plan::Plan& plan,
                                                             std::int64_t element_bytes,
                                                             bool face_halo) {
  TP_EXPECTS(plan.tiling().is_rectangular() && element_bytes >= 1);
  const auto& w = plan.tiling().tile_extents();
  const int n = plan.space().dims();
  std::vector<std::int64_t> out;
  std::size_t f = 0;  // index into the mesh and the CPU grid (non-mapping dimensions)
  for (int k = 0; k < n; ++k) {
    if (k == plan.map_dim()) continue;
    const std::int64_t p_k = plan.mesh()[f];
    const std::int64_t m_k = plan.cpu_grid()[f];
    ++f;
    std::int64_t depth = 0;
    for (const auto& d : plan.deps().vectors()) depth = std::max(depth, d[static_cast<size_t>(k)]);
    if (p_k == 1 || depth == 0) {
      out.push_back(0);
      continue;
    }
    std::optional<std::int64_t> bytes = plan.cpus() / m_k;
    for (int d = 0; d < n && bytes; ++d) {
      if (d != k) bytes = checked_mul(*bytes, w[static_cast<std::size_t>(d)] + (face_halo ? 1 : 0));
    }
    if (bytes) bytes = checked_mul(*bytes, depth);
    if (bytes) bytes = checked_mul(*bytes, element_bytes);
    if (!bytes) {
      return fail(Errc::out_of_range, "the face a node sends along dimension " +
                                          std::to_string(k + 1) + " exceeds 2^63 bytes");
    }
    out.push_back(*bytes);
  }
  return out;
}

double expected_max_of_normals(std::int64_t m) {
  TP_EXPECTS(m >= 1);
  if (m == 1) return 0;
  // Simpson's rule of m x phi(x) Phi(x)^(m-1) over [-10, 10] (the tails beyond weigh < 1e-20
  // for m up to millions of CPUs).
  constexpr int n = 4000;
  constexpr double a = -10;
  constexpr double h = 20.0 / n;
  const double mm = static_cast<double>(m);
  const auto f = [&](double x) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    return x * mm * phi * std::pow(cdf, mm - 1);
  };
  double sum = f(a) + f(a + n * h);
  for (int i = 1; i < n; ++i) sum += f(a + i * h) * (i % 2 != 0 ? 4 : 2);
  return sum * h / 3;
}

Seconds slowest_of_tiles(Seconds alpha, double tile_spread, std::int64_t m) {
  TP_EXPECTS(m >= 1 && tile_spread >= 0);
  if (m == 1 || tile_spread == 0) return alpha;
  return alpha * (1 + expected_max_of_normals(m) * tile_spread);
}

std::int64_t barrier_rounds(std::int64_t nodes) {
  TP_EXPECTS(nodes >= 1);
  std::int64_t rounds = 0;
  for (std::int64_t reach = 1; reach < nodes; reach *= 2) ++rounds;
  return rounds;
}

namespace {

// The step's length from its parts (t_comp, t_start, t_comm, t_sync already set).
void finish_step(StepTime& s, bool overlap, bool comm_thread, std::int64_t cpus) {
  s.compute_bound = s.t_comp >= s.t_comm;
  if (!overlap) {
    // Seed 000 (1): compute, then start, transfer and synchronize, nothing overlapped.
    s.step = s.t_comp + s.t_start + s.t_comm + s.t_sync;
  } else if (!comm_thread) {
    // Seed 000 (2), seed 002 (1): the transfer runs while the CPUs compute, except the part
    // that is a CPU's copy (shared memory), which a CPU of the step pays on top.
    const Seconds flight = std::max(Seconds{0}, s.t_comm - s.t_copy);
    s.compute_bound = s.t_comp >= flight;
    s.step = s.t_start + std::max(s.t_comp, flight) + s.t_copy + s.t_sync;
  } else {
    // Seed 002 5.4: one thread starts the sends and synchronizes (s = t_start + t_sync) and
    // computes W_c of the node's work W = m alpha; the other m - 1 threads share the rest, so
    // that s + W_c = (W - W_c)/(m - 1) when possible: step = max((W + s)/m, s + t_comm).
    const double m = static_cast<double>(cpus);
    const Seconds work = s.alpha * m;
    const Seconds fixed = s.t_start + s.t_sync;
    const Seconds balanced = (work + fixed) / m;
    s.step = std::max(balanced, fixed + s.t_comm);
    s.compute_bound = balanced >= fixed + s.t_comm;
    s.comm_thread_comp = s.compute_bound
                             ? balanced - fixed
                             : std::max(Seconds{0}, work - (fixed + s.t_comm) * (m - 1));
  }
}

// The overlap schedule's sweep in steps of `s.step`, with each hand-over between nodes charged
// as the pipeline's hop rather than the schedule's two steps (docs/model.md, "The hop"): the
// corner formula of the plan's schedule (plan::Cycles, ADR 0018) in seconds. Along a non-mapping
// dimension k, f_k(v) (the block time of row v) advances one step per row inside a node and two
// across a node boundary (floor(v / m_k) boundaries up to row v); each boundary costs hop instead
// of 2 steps when p_k > 1 (a face message), and the cycle stride is L'_k = max(f'_k(P_k), the
// inner span) in seconds as L_k is in steps. Returns the sweep's length in steps (a fraction);
// plan.steps() for a plan without hand-overs.
double hop_steps(const plan::Plan& plan, const StepTime& s) {
  const int n = plan.space().dims();
  const int i = plan.map_dim();
  const auto& counts = plan.tile_space().counts();
  const plan::Cycles& cycles = plan.schedule().cycles();
  const double step = s.step.count();
  const double saved = 2 * step - s.hop.count();  // per hand-over
  const auto unit = [&](int k, std::int64_t v) {
    plan::Index e(static_cast<std::size_t>(n), 0);
    e[static_cast<std::size_t>(k)] = v;
    return plan.time_of(e);
  };
  std::vector<std::int64_t> p(static_cast<std::size_t>(n), 1), m(p);
  std::size_t f = 0;
  for (int k = 0; k < n; ++k) {
    if (k == i) continue;
    p[static_cast<std::size_t>(k)] = plan.mesh()[f];
    m[static_cast<std::size_t>(k)] = plan.cpu_grid()[f];
    ++f;
  }
  // f'_k(v) in seconds, 0 <= v <= P_k (v = P_k: the wrap to the next cycle's first node).
  const auto block = [&](int k, std::int64_t v, std::int64_t period) {
    const auto kk = static_cast<std::size_t>(k);
    const std::int64_t t = v == period && period > 0 ? unit(k, v - 1) + 2 : unit(k, v);
    const std::int64_t crossings = p[kk] > 1 ? v / m[kk] : 0;
    return static_cast<double>(t) * step - static_cast<double>(crossings) * saved;
  };
  std::vector<double> stride(static_cast<std::size_t>(n), 0);
  double span = static_cast<double>(counts[static_cast<std::size_t>(i)]) * step;
  for (int k = n; k-- > 0;) {
    const auto kk = static_cast<std::size_t>(k);
    if (k == i || cycles.period.empty() || cycles.period[kk] == 0) continue;
    const std::int64_t period = cycles.period[kk];
    stride[kk] = std::max(block(k, period, period), span);
    const std::int64_t factor = (counts[kk] + period - 1) / period;
    span += static_cast<double>(factor - 1) * stride[kk];
  }
  double last = static_cast<double>(counts[static_cast<std::size_t>(i)] - 1) * step;
  for (int k = 0; k < n; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    if (k == i) continue;
    const std::int64_t j = counts[kk] - 1;
    const std::int64_t period = cycles.period.empty() ? 0 : cycles.period[kk];
    const std::int64_t y = period > 0 ? j / period : 0;
    last += block(k, j - y * period, period) + static_cast<double>(y) * stride[kk];
  }
  return last / step + 1;
}

// The points of the low halo layers of a node's block, one per dimension: sum_d prod_{e != d}
// of the block's extents (m_e w_e along the mesh dimensions, at most the space's extent; the
// whole extent along the mapping dimension). Every layer counted: an upper bound of a rank's
// layers outside the space.
double outer_halo_points(const plan::Plan& plan) {
  const int n = plan.space().dims();
  std::vector<double> block;
  std::size_t f = 0;
  for (int d = 0; d < n; ++d) {
    const auto extent = static_cast<double>(plan.space().extent(d));
    if (d == plan.map_dim()) {
      block.push_back(extent);
      continue;
    }
    const auto w = static_cast<double>(plan.tiling().tile_extents()[static_cast<std::size_t>(d)]);
    block.push_back(std::min(extent, static_cast<double>(plan.cpu_grid()[f]) * w));
    ++f;
  }
  double points = 0;
  for (int d = 0; d < n; ++d) {
    double layer = 1;
    for (int e = 0; e < n; ++e) layer *= e == d ? 1 : block[static_cast<std::size_t>(e)];
    points += layer;
  }
  return points;
}

}  // namespace

std::string scheme_name(plan::ScheduleKind schedule, plan::GroupingKind grouping,
                        bool comm_thread) {
  return std::string(plan::to_string(schedule)) + " + " + std::string(plan::to_string(grouping)) +
         (comm_thread ? " + comm thread" : "");
}

std::string_view to_string(Formula formula) {
  return formula == Formula::executed ? "executed" : "seeds";
}

bool counts_edge_steps(const ModelOptions& options) {
  return options.edge_steps || options.formula == Formula::executed;
}

bool counts_hops(const ModelOptions& options) {
  // Kernels of several sweeps too: each of sweep3d's sweeps is a pipeline with its own
  // hand-overs (ADR 0034; the costs the schedule's extra step used to hide are modelled).
  return options.pipeline_hops || options.formula == Formula::executed;
}

Expected<Prediction> predict(const plan::Plan& plan, const Machine& machine,
                             const ModelOptions& options) {
  if (!plan.tiling().is_rectangular()) {
    return fail(Errc::invalid_argument,
                "the cost model needs rectangular tiles (--tile); a general tiling matrix is not "
                "modelled");
  }
  Prediction p;
  p.schedule = plan.schedule().kind();
  p.grouping = plan.schedule().grouping().kind();
  p.comm_thread = options.comm_thread;
  p.formula = options.formula;
  p.steps = plan.steps();
  const bool vertical = p.grouping == plan::GroupingKind::vertical;
  const bool overlap = p.schedule == plan::ScheduleKind::overlap;
  if (options.comm_thread && (vertical || !overlap)) {
    return fail(Errc::invalid_argument,
                "the communication thread (seed 002 5.4) is modelled for the overlap schedule with "
                "hyperplane grouping only, not " +
                    scheme_name(p.schedule, p.grouping, false));
  }
  const std::int64_t height =
      plan.tiling().tile_extents()[static_cast<std::size_t>(plan.map_dim())];
  if (options.subtiles != 0 && (!vertical || options.subtiles < 1 || options.subtiles > height)) {
    return fail(Errc::invalid_argument,
                vertical ? "subtiles " + std::to_string(options.subtiles) +
                               " must be between 1 and the tile height " + std::to_string(height)
                         : std::string("subtiles apply to vertical grouping only"));
  }

  const Workload& wl = options.workload;
  if (wl.sweeps < 1 || wl.copy_sweeps < 0 || wl.copy_sweeps > wl.sweeps ||
      wl.between_sweep_bytes < 0 || wl.element_bytes < 0 || wl.copy_bytes_per_point < 0) {
    return fail(Errc::invalid_argument,
                "workload of " + std::to_string(wl.sweeps) + " sweeps (" +
                    std::to_string(wl.copy_sweeps) + " copying), " +
                    std::to_string(wl.between_sweep_bytes) + " bytes between sweeps, " +
                    std::to_string(wl.element_bytes) +
                    "-byte elements: needs sweeps >= 1, 0 <= copy sweeps <= sweeps, bytes >= 0");
  }

  StepTime& s = p.step;
  const ComputeCost& cc = machine.compute_for(options.kernel);
  std::optional<std::int64_t> g = 1;
  for (auto w : plan.tiling().tile_extents()) g = g ? checked_mul(*g, w) : g;
  TP_ASSERT(g.has_value());  // a tile never has more points than the space (< 2^63)
  s.tile_points = *g;
  s.alpha = cc.tile_time(s.tile_points);
  s.t_comp = s.alpha;
  if (!vertical && !options.comm_thread) {
    // Hyperplane grouping: the node's CPUs compute their tiles at once and meet at the step
    // barrier, so a step lasts as long as the slowest of them (docs/model.md, "The step
    // barrier").
    s.t_comp = slowest_of_tiles(s.alpha, machine.tile_spread, plan.cpus());
  }
  if (vertical) {
    std::int64_t depth = 0;
    for (auto m_k : plan.cpu_grid()) depth += m_k - 1;
    s.subtiles = options.subtiles != 0 ? options.subtiles
                                       : best_subtiles(s.alpha, machine.t_sync_in, depth, height);
    s.t_comp = vertical_beta(s.alpha, machine.t_sync_in, s.subtiles, depth);
  }

  auto faces = face_bytes_per_neighbour(
      plan, wl.element_bytes > 0 ? wl.element_bytes : cc.element_bytes, wl.face_halo);
  if (!faces) return Unexpected{faces.error()};
  std::int64_t largest = 0;
  for (auto b : *faces) {
    if (b == 0) continue;
    ++s.messages;
    largest = std::max(largest, b);
    auto sum = checked_add(s.face_bytes, b);
    if (!sum) return fail(Errc::out_of_range, "the faces a node sends exceed 2^63 bytes");
    s.face_bytes = *sum;
  }
  if (s.messages > 0) {
    const double msgs = static_cast<double>(s.messages);
    switch (machine.send_mode) {
      case SendMode::queued:
        s.t_start = machine.t_start;
        s.t_comm = machine.link.time_for(s.face_bytes);
        break;
      case SendMode::serial:
        s.t_start = machine.t_start * msgs;
        for (auto b : *faces) s.t_comm += machine.link.time_for(b);
        break;
      case SendMode::parallel:
        s.t_start = machine.t_start * msgs;
        s.t_comm = machine.link.time_for(largest);
        break;
    }
    s.t_sync = machine.t_sync;
    if (machine.cpu_copy_bytes_per_s > 0) {
      s.t_copy = std::min(
          s.t_comm, Seconds{static_cast<double>(
                                machine.send_mode == SendMode::parallel ? largest : s.face_bytes) /
                            machine.cpu_copy_bytes_per_s});
    }
  }

  // The overlap pipeline hands a face from node to node in one hop: the sender starts it, it
  // flies, the receiver computes its tile (docs/model.md, "The hop"). Along the pipeline only the
  // link's occupancy repeats every step: the latency is paid once per hop, not every step.
  const bool hops = overlap && !options.comm_thread && (counts_hops(options) || plan.is_cyclic()) &&
                    s.messages > 0 && plan.tile_space().is_box();
  Seconds hop_latency{0};
  if (hops) {
    hop_latency = machine.link.latency *
                  (machine.send_mode == SendMode::serial ? static_cast<double>(s.messages) : 1.0);
    hop_latency = std::min(hop_latency, s.t_comm);
    s.t_comm -= hop_latency;
  }
  finish_step(s, overlap, options.comm_thread, plan.cpus());
  // One sweep: every step at full length, or (edge_steps) fill and drain at t_comp alone:
  // overlap sends in step s the faces computed in step s - 1, so step 0 sends nothing; in both
  // schedules the last step's tile has no consumer. Those steps compute only.
  // With hops the fill and drain are the pipeline's ends as the executor runs them: a node sends
  // the face of the tile it has just computed within the same step, so its first step is a full
  // one, and the run ends when the corner tile is computed or when the node that handed it over
  // has sent and synchronized, whichever is later: the corner tile's start + max(t_comp,
  // step - hop) (docs/model.md, "Two formulas"; the simulator runs exactly this).
  const bool hop_ends = hops && counts_edge_steps(options);  // hops: messages > 0
  if (counts_edge_steps(options) && s.messages > 0 && !hops) {
    p.edge_steps = std::min<std::int64_t>(p.steps, overlap ? 2 : 1);
  }
  // The executed formula's last step computes the last tile of a row, which the space's extent
  // along the mapping dimension may cut short: its computation is that tile's share of a full
  // one's (by the tile times, so samples apply), the rest of the step as a full step's.
  double last_share = 1.0;
  if (counts_edge_steps(options)) {
    const auto i = static_cast<std::size_t>(plan.map_dim());
    const std::int64_t extent = plan.space().extents()[i];
    const std::int64_t last = extent - (extent - 1) / height * height;
    if (last < height && s.alpha.count() > 0) {
      last_share = cc.tile_time(s.tile_points / height * last) / s.alpha;
    }
  }
  const auto sweep_time = [&](StepTime& st, Seconds compute_only) {
    double steps = static_cast<double>(p.steps);
    const Seconds last_cut = compute_only * (1.0 - last_share);
    if (hops) {
      st.hop = st.t_start + st.t_comm + hop_latency + st.t_comp;
      if (st.step.count() > 0) {
        steps = hop_steps(plan, st);
        if (hop_ends) {
          return st.step * (steps - 1) + std::max(compute_only - last_cut, st.step - st.hop);
        }
      }
    }
    return st.step * (steps - static_cast<double>(p.edge_steps)) +
           compute_only * static_cast<double>(p.edge_steps) - last_cut;
  };
  p.sweep = sweep_time(s, options.comm_thread ? s.alpha : s.t_comp);
  p.sweeps = wl.sweeps;
  p.copy_sweeps = wl.copy_sweeps;
  if (wl.copy_sweeps > 0) {
    // A copying tile streams its points' bytes through memory, as a shared-memory face copy
    // does (docs/model.md, "Repeated sweeps and kernels' faces").
    StepTime c = s;
    c.alpha =
        wl.copy_bytes_per_point > 0 && machine.cpu_copy_bytes_per_s > 0
            ? Seconds{static_cast<double>(s.tile_points) *
                      static_cast<double>(wl.copy_bytes_per_point) / machine.cpu_copy_bytes_per_s}
            : Seconds{0};
    c.t_comp = c.alpha;
    finish_step(c, overlap, options.comm_thread, plan.cpus());
    p.copy_sweep = sweep_time(c, c.t_comp);
  }
  if (wl.sweeps > 1 && plan.nodes() > 1) {
    // next_sweep (libs/exec pipeline.hpp): a barrier, the kernel's exchange, a barrier.
    p.between = machine.t_sync * static_cast<double>(2 * barrier_rounds(plan.nodes()));
    // Mirrored (ADR 0024): only the points the mirrored rows miss move.
    const std::int64_t bytes =
        wl.mirrored ? static_cast<std::int64_t>(std::ceil(
                          static_cast<double>(wl.between_sweep_bytes) * mirror_miss(plan)))
                    : wl.between_sweep_bytes;
    if (bytes > 0) {
      const std::int64_t share = bytes / plan.nodes() + (bytes % plan.nodes() != 0 ? 1 : 0);
      p.between += machine.t_start + machine.link.time_for(share);
    }
    // Mirrored roles share the rank's slab (ADR 0026): a sweep that plays another role first
    // writes the boundary values into the slab's halo below the space (exec's fill_outer_halo),
    // a layer per dimension of the node's block, at the CPU's copy bandwidth (ADR 0034).
    if (wl.mirrored && machine.cpu_copy_bytes_per_s > 0) {
      const double element =
          static_cast<double>(wl.element_bytes > 0 ? wl.element_bytes : cc.element_bytes);
      p.between += Seconds{outer_halo_points(plan) * element / machine.cpu_copy_bytes_per_s};
    }
  }
  p.total = p.sweep * static_cast<double>(wl.sweeps - wl.copy_sweeps) +
            p.copy_sweep * static_cast<double>(wl.copy_sweeps) +
            p.between * static_cast<double>(wl.sweeps - 1);
  return p;
}

double mirror_miss(const plan::Plan& plan) {
  if (plan.is_cyclic()) return 1.0;
  double home = 1.0;
  std::size_t f = 0;
  for (int d = 0; d < static_cast<int>(plan.space().dims()); ++d) {
    if (d == plan.map_dim()) continue;
    const std::int64_t p = plan.mesh()[f];
    const std::int64_t m = plan.cpu_grid()[f];
    ++f;
    if (p <= 1) continue;
    const std::int64_t n = plan.space().extent(d);
    const std::int64_t w = plan.tiling().tile_extents()[static_cast<std::size_t>(d)];
    // Node c's points (0-based): tiles c m .. c m + m - 1 (the block mapping).
    const auto lo = [&](std::int64_t c) { return std::min(n, c * m * w); };
    const auto hi = [&](std::int64_t c) { return std::min(n, (c + 1) * m * w); };
    std::int64_t kept = 0;
    for (std::int64_t c = 0; c < p; ++c) {
      const std::int64_t a = std::max(lo(c), n - hi(p - 1 - c));
      const std::int64_t b = std::min(hi(c), n - lo(p - 1 - c));
      kept += std::max<std::int64_t>(0, b - a);
    }
    home *= static_cast<double>(kept) / static_cast<double>(n);
  }
  return 1.0 - home;
}

}  // namespace tp::model
