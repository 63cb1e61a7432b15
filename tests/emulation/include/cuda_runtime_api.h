#pragma once
// The emulated device's runtime (tests only): see resilin_emulation/emulator.hpp.
#include <resilin_emulation/emulator.hpp>
