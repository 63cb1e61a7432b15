#pragma once
// How the CUDA kernels map alignment problems (jobs) onto the GPU and where training keeps R;
// chosen per call from the shape (automatic) or forced with resilin::device.with_schedule(...)
// and .with_training_store(...). The block programs are the same in every case and recompute
// exactly what they would have stored, so every choice gives the same bits, with one exception:
// tiled training of the costs that also read the previous sample (soft-MSM, grid CDTW) sums
// some gradient terms at tile borders in another order (equal within rounding: measured 1e-16
// relative in double, 2.4e-7 in float; deterministic run to run; wavefront.hpp).
namespace resilin {

enum class device_schedule : unsigned char {
  automatic,       ///< tiled (below), else warp_per_pair where a job's CTA would be a single
                   ///< warp or a value job's strip of rows fits, else block_per_pair
  block_per_pair,  ///< one CTA per job, up to 256 threads striding each anti-diagonal
  warp_per_pair,   ///< one warp per job, 8 jobs per CTA: short series in large batches, where
                   ///< one-warp CTAs would cap the resident warps per SM at the CTA limit;
                   ///< jobs of at most 32 rows keep one row per lane in registers and pass
                   ///< cells (training: R forward, G backward) by warp shuffles; values of
                   ///< jobs of at most 992 rows give each lane a strip of about rows / 32
                   ///< rows in registers, 4 jobs per CTA (automatic with at least 4 jobs per
                   ///< SM); else the lanes stride a ring in shared memory
  tiled,           ///< tiles of 128 x 128 cells, one CTA each, one launch per tile
                   ///< anti-diagonal; training runs the tiles backwards too, passing R and G
                   ///< across tile borders. Automatic for a few very long pairs (at most a
                   ///< quarter as many problems as SMs, the shorter series >= 512) and for DTW
                   ///< costs of >= 16 channels (each tile's distances in shared memory; the
                   ///< shorter series >= 64, at most 65535 problems)
};

/// Where the training path (values_and_grads, alignment matrices) keeps R for the backward.
enum class training_store : unsigned char {
  automatic,     ///< checkpointed when the whole grids of a call would exceed 4 GiB and the
                 ///< checkpoints take less
  whole_grid,    ///< R of every cell, one value each (the fastest backward)
  checkpointed,  ///< two anti-diagonals every k (k ~ sqrt(2 (n + m))) and one segment of k: the
                 ///< backward recomputes each segment's forward once (about 2x the forward work).
                 ///< A diagonal is kept at X's length, so where X is much the longer series
                 ///< (20000 against 200) this takes more than the whole grid: pass the shorter
                 ///< series as X (and swap the gradients), or leave the choice to automatic
};

}  // namespace resilin
