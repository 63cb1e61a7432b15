#pragma once
// The rows between the strips of a training forward that keeps checkpoints, and which entries of
// each one a strip's cells read. (The exponential domain's exp_rows and the log domain's
// strip_table keep those alone.)
#include <algorithm>
#include <cstddef>
#include <vector>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// A slot of one of those rows: the entry at row index r (column r - 1) is data[r - first], for r
/// in [first, first + width); elsewhere `fill` (for the lanes out of the band, whose results the
/// strips discard).
template <class T>
struct row_slot {
  T const* data = nullptr;
  index_t first = 0, width = 0;

  RESILIN_INLINE T at(index_t r, T fill) const noexcept {
    index_t const k = r - first;
    return k >= 0 && k < width ? data[k] : fill;
  }
};

/// Which entries of the rolling row each strip's cells read, and which the strip above wrote.
/// The forward runs on a rolling row of m + H + 1 entries (column j at row index j + 1); the
/// cells of strip s (rows i0 = sH ...) read the row above only through its first row i0, whose
/// in-band cells read the row indices [lo, hi + 1] of that row's span [lo, hi]. Slot s keeps
/// those: the row's span and one, where whole rows of m + H + 1 outweighed the band's cells
/// (radius 64, n = m = 200,000 in the exponential domain: 20 GB of rows, two levels holding
/// 0.5 GB and copying a row per strip, half of the time). The other lanes read anything (a
/// restored row's older entries): they are out of the band, and the strips discard them.
template <class T>
struct strip_row_slices {
  std::vector<index_t> first;  // per slot: its first row index
  std::vector<index_t> start;  // per slot: its place in the slots' storage; start[strips]: the total
  // per slot: the row indices strip s - 1 wrote (its last row at steps t0..t1: t - H + 2 from
  // 0); a slot's other entries are out of the band above, +inf (unreachable) where it is kept
  std::vector<index_t> written_lo, written_hi;
  // the slots a forward keeps, those of strips 0, every, 2 every, ...: kept slot g begins at
  // kept_start[g] of their storage (kept_start.back(): its size)
  index_t every = 1;
  std::vector<index_t> kept_start;

  /// The slots of an n-row problem, and every `keep_every`-th of them kept (1: all).
  void plan(band_geometry const& band, index_t n, index_t keep_every = 1) {
    constexpr int H = strip_vectors<T> * simd::pack<T>::width;
    index_t const strips = (n + H - 1) / H;
    auto const su = static_cast<std::size_t>(strips);
    first.assign(su, 0);
    start.assign(su + 1, 0);
    written_lo.assign(su, 0);
    written_hi.assign(su, 0);  // strip 0: the virtual origin R(-1, -1) alone, at index 0
    index_t wlo = 0, whi = 0;
    for (index_t s = 0; s < strips; ++s) {
      auto const k = static_cast<std::size_t>(s);
      index_range const span = band.row(s * H);
      first[k] = span.lo;
      start[k + 1] = start[k] + (span.hi - span.lo + 2);
      written_lo[k] = wlo;
      written_hi[k] = whi;
      strip_geometry<T> const geo(band, n, s * H);
      wlo = std::max(geo.t0 - H + 2, index_t(0));
      whi = geo.t1 - H + 2;
    }
    every = keep_every;
    index_t const kept = (strips + every - 1) / every;
    kept_start.assign(static_cast<std::size_t>(kept + 1), 0);
    for (index_t g = 0; g < kept; ++g)
      kept_start[static_cast<std::size_t>(g + 1)] = kept_start[static_cast<std::size_t>(g)] + width(g * every);
  }
  index_t slots() const noexcept { return static_cast<index_t>(first.size()); }
  index_t width(index_t s) const noexcept {
    return start[static_cast<std::size_t>(s + 1)] - start[static_cast<std::size_t>(s)];
  }
  index_t total() const noexcept { return start.back(); }
  /// The entries of slots [s0, s1).
  index_t span(index_t s0, index_t s1) const noexcept {
    return start[static_cast<std::size_t>(s1)] - start[static_cast<std::size_t>(s0)];
  }
  /// The entries of the kept slots, and where kept slot s (a multiple of every) begins among them.
  index_t kept_total() const noexcept { return kept_start.back(); }
  index_t kept_offset(index_t s) const noexcept { return kept_start[static_cast<std::size_t>(s / every)]; }
  /// Where the backward finds slot s: among the kept slots (every = 1), or in the slots of the
  /// segment from strip segment_first that two levels recompute (span(segment_first, s)).
  index_t offset_of(index_t s, index_t segment_first) const noexcept {
    return every == 1 ? kept_offset(s) : span(segment_first, s);
  }
  /// Slot s from the rolling row `row` (row index r at row[r]) as strip s - 1 left it, to out:
  /// what that strip wrote, `unreachable` elsewhere (the rolling row may hold older rows there).
  template <class U>
  void keep(index_t s, U const* row, U* out, U unreachable) const noexcept {
    auto const k = static_cast<std::size_t>(s);
    index_t const f = first[k], w = width(s);
    for (index_t r = f; r < f + w; ++r) out[r - f] = r >= written_lo[k] && r <= written_hi[k] ? row[r] : unreachable;
  }
  /// Slot s (at `slot`) into the rolling row `row`, at its place.
  template <class U>
  void restore(index_t s, U const* slot, U* row) const noexcept {
    std::copy(slot, slot + width(s), row + first[static_cast<std::size_t>(s)]);
  }
};

}  // namespace resilin::host_detail
