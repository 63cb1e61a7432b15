// Built with -mno-avx: 16-byte packs (see workload.hpp).
#include "workload.hpp"

mixed_isa::result mixed_isa::run_narrow() { return run_here(); }
