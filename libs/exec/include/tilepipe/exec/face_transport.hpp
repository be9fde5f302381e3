// How faces travel: the face mode (copy or direct) and, for copied faces, a shared-memory
// transport sized so that every face is sent eagerly: written into the receiver's memory inside
// isend, with nothing left to progress while both ranks compute (docs/executor.md, "Progress").
#pragma once

#include <tilepipe/comm/config.hpp>
#include <tilepipe/plan/plan.hpp>
#include <tilepipe/support/expected.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace tp::exec {

/// How a resident kernel's faces reach a neighbour rank (docs/executor.md, "Copies").
enum class FaceMode {
  automatic,  ///< direct where it can run (every rank on shared memory, axis dependences), else
              ///< copy
  copy,       ///< packed into a buffer, sent as a message, unpacked into the halo (four copies)
  direct,     ///< packed straight into the consumer's slab halo (one copy), then a notification
};

/// "auto", "copy" or "direct".
inline std::string_view to_string(FaceMode mode) noexcept {
  return mode == FaceMode::copy ? "copy" : mode == FaceMode::direct ? "direct" : "auto";
}

/// Parses "auto|copy|direct" (an Error naming `flag` and the value otherwise).
inline Expected<FaceMode> parse_face_mode(std::string_view text, std::string_view flag) {
  if (text == "auto") return FaceMode::automatic;
  if (text == "copy") return FaceMode::copy;
  if (text == "direct") return FaceMode::direct;
  return fail(Errc::invalid_argument,
              std::string(flag) + ": '" + std::string(text) + "' is not one of auto|copy|direct");
}

/// Largest eager slot the executor asks for (bytes); larger faces stay rendezvous.
inline constexpr std::size_t max_face_slot_bytes = std::size_t{1} << 20;

/// Bytes of the largest face a tile of `plan` sends across a node boundary: halo layers of
/// `elem_bytes` elements over the tile's other extents (extended by the halo when `extended`).
inline std::size_t max_face_bytes(const plan::Plan& plan, std::size_t elem_bytes, int halo,
                                  bool extended) {
  if (!plan.tiling().is_rectangular()) return 0;
  const auto& w = plan.tiling().tile_extents();
  std::size_t most = 0;
  std::size_t f = 0;
  for (int k = 0; k < static_cast<int>(w.size()); ++k) {
    if (k == plan.map_dim()) continue;
    if (plan.mesh()[f++] == 1) continue;  // no node boundary across k
    std::size_t face = static_cast<std::size_t>(halo) * elem_bytes;
    for (int d = 0; d < static_cast<int>(w.size()); ++d) {
      if (d != k)
        face *= static_cast<std::size_t>(w[static_cast<std::size_t>(d)] + (extended ? halo : 0));
    }
    most = std::max(most, face);
  }
  return most;
}

/// `base` with eager slots large enough for the plan's faces (up to max_face_slot_bytes), so a
/// face moves inside isend like a DMA transfer. Unchanged when the faces already fit or are
/// larger than the cap. Every rank computes the same configuration from the same plan.
inline comm::Config eager_faces_config(comm::Config base, std::size_t face_bytes) {
  if (face_bytes <= base.eager_max_bytes || face_bytes > max_face_slot_bytes) return base;
  const std::size_t slot = (face_bytes + 63) / 64 * 64;
  base.slot_bytes = std::max(base.slot_bytes, slot);
  base.eager_max_bytes = base.slot_bytes;
  return base;
}

}  // namespace tp::exec
