// Built with -mavx2 -mfma -mno-avx512f: 32-byte packs (see run.hpp). Called only where the CPU
// has AVX2 and FMA.
#include "run.hpp"

mixed_isa::result mixed_isa::run_wide() { return run_here(); }
