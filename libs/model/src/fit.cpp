// Least-squares link cost and monotone compute samples from calibration measurements.
#include <tilepipe/model/fit.hpp>
#include <tilepipe/support/assert.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace tp::model {

double median(std::vector<double> values) {
  TP_EXPECTS(!values.empty());
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

Expected<LinkCost> fit_link_cost(const std::vector<TransferSample>& samples) {
  std::set<std::int64_t> sizes;
  for (const auto& s : samples) {
    if (s.bytes < 0) {
      return fail(Errc::invalid_argument,
                  "transfer sample of " + std::to_string(s.bytes) + " bytes: must be >= 0");
    }
    if (!(s.time.count() > 0) || !std::isfinite(s.time.count())) {
      return fail(Errc::invalid_argument, "transfer sample of " + std::to_string(s.bytes) +
                                              " bytes: the time must be > 0 and finite");
    }
    sizes.insert(s.bytes);
  }
  if (sizes.size() < 2) {
    return fail(Errc::invalid_argument, "fitting a link cost needs at least 2 distinct sizes");
  }
  // Weighted least squares of t = c + m x with weights w = 1 / t^2.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    const double x = static_cast<double>(s.bytes);
    const double y = s.time.count();
    const double w = 1.0 / (y * y);
    sw += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  const double det = sw * sxx - sx * sx;
  double slope = det > 0 ? (sw * sxy - sx * sy) / det : 0;
  double intercept = det > 0 ? (sy - slope * sx) / sw : 0;
  if (intercept < 0) {
    intercept = 0;
    slope = sxy / sxx;  // through the origin
  }
  if (!(slope > 0) || !std::isfinite(slope)) {
    return fail(Errc::invalid_argument,
                "the transfer times do not grow with the message size: no bandwidth to fit");
  }
  LinkCost link;
  link.latency = Seconds{intercept};
  link.bandwidth_bytes_per_s = 1.0 / slope;
  return link;
}

Expected<std::vector<ComputeSample>> compute_samples_from(std::vector<ComputeSample> raw) {
  if (raw.empty()) return fail(Errc::invalid_argument, "no compute sample to fit");
  for (const auto& s : raw) {
    if (s.tile_points < 1) {
      return fail(Errc::invalid_argument, "compute sample with " + std::to_string(s.tile_points) +
                                              " tile points: must be >= 1");
    }
    if (!(s.t_comp1.count() > 0) || !std::isfinite(s.t_comp1.count())) {
      return fail(Errc::invalid_argument, "compute sample at " + std::to_string(s.tile_points) +
                                              " tile points: t_comp1 must be > 0 and finite");
    }
  }
  std::sort(raw.begin(), raw.end(), [](const ComputeSample& a, const ComputeSample& b) {
    return a.tile_points < b.tile_points;
  });
  std::vector<ComputeSample> out;
  for (std::size_t i = 0; i < raw.size();) {
    std::size_t j = i;
    std::vector<double> group;
    while (j < raw.size() && raw[j].tile_points == raw[i].tile_points) {
      group.push_back(raw[j].t_comp1.count());
      ++j;
    }
    ComputeSample s{raw[i].tile_points, Seconds{median(group)}};
    if (!out.empty()) {
      const double prev = out.back().t_comp1.count() * static_cast<double>(out.back().tile_points);
      const double g = static_cast<double>(s.tile_points);
      // Running maximum of the tile time, with a relative margin of 1e-9 so that the order
      // survives the decimal round trip through a machine file.
      const double floor_time = prev * (1 + 1e-9);
      if (s.t_comp1.count() * g < floor_time) s.t_comp1 = Seconds{floor_time / g};
    }
    out.push_back(s);
    i = j;
  }
  return out;
}

Expected<ComputeCost> compute_cost_from(std::vector<ComputeSample> raw,
                                        std::int64_t element_bytes) {
  TP_EXPECTS(element_bytes >= 1);
  auto samples = compute_samples_from(std::move(raw));
  if (!samples) return Unexpected{samples.error()};
  std::vector<double> per_point;
  for (const auto& s : *samples) per_point.push_back(s.t_comp1.count());
  ComputeCost c;
  c.t_comp1 = Seconds{median(per_point)};
  c.element_bytes = element_bytes;
  c.samples = std::move(*samples);
  return c;
}

}  // namespace tp::model
