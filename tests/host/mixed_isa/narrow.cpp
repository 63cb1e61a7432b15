// Built with -mno-avx: 16-byte packs (see run.hpp).
#include "run.hpp"

mixed_isa::result mixed_isa::run_narrow() { return run_here(); }
