#pragma once
// cub::BlockScan on the emulated device (tests only): each thread posts its value, waits at a
// barrier, and sums the posts before its own, so the result is CUB's exclusive prefix sum and
// the block's total. As with CUB, TempStorage may be reused only after a __syncthreads.
#include <resilin_emulation/emulator.hpp>

namespace cub {

template <class T, int BlockThreads>
class BlockScan {
 public:
  struct TempStorage {
    T posted[BlockThreads];
  };
  explicit BlockScan(TempStorage& storage) : storage_(storage) {
    if (blockDim.x * blockDim.y * blockDim.z != static_cast<unsigned>(BlockThreads))
      resilin_emulation::fail("cub::BlockScan<T, " + std::to_string(BlockThreads) + "> in a block of " +
                              std::to_string(blockDim.x * blockDim.y * blockDim.z) + " threads");
  }

  void ExclusiveSum(T input, T& output, T& aggregate) {
    int const me = static_cast<int>(threadIdx.x);
    storage_.posted[me] = input;
    __syncthreads();
    T before{}, total{};
    for (int t = 0; t < BlockThreads; ++t) {
      if (t < me) before = before + storage_.posted[t];
      total = total + storage_.posted[t];
    }
    output = before;
    aggregate = total;
  }

 private:
  TempStorage& storage_;
};

}  // namespace cub
