#pragma once
// How the CUDA kernels map alignment problems (jobs) onto the GPU; chosen per call from the
// shape (automatic) or forced with resilin::device.with_schedule(...). The block programs are
// the same in every case: only the executor differs (a CTA with __syncthreads per anti-diagonal,
// or one warp with __syncwarp), so every schedule gives the same bits.
namespace resilin {

enum class device_schedule : unsigned char {
  automatic,       ///< warp_per_pair where a job's CTA would be a single warp, else block_per_pair
  block_per_pair,  ///< one CTA per job, up to 256 threads striding each anti-diagonal
  warp_per_pair,   ///< one warp per job, 8 jobs per CTA: short series in large batches, where
                   ///< one-warp CTAs would cap the resident warps per SM at the CTA limit
};

}  // namespace resilin
