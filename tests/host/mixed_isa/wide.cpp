// Built with -mavx2 -mfma -mno-avx512f: 32-byte packs (see workload.hpp). Called only where the CPU
// has AVX2 and FMA.
#include "workload.hpp"

mixed_isa::result mixed_isa::run_wide() { return run_here(); }
