#pragma once
// One include for Catch2 v3 (where installed) or the v2 single header (Debian's catch2 2.13).
#if __has_include(<catch2/catch_all.hpp>)
#  include <catch2/catch_all.hpp>
#  define RESILIN_CATCH_V3 1
#else
#  include <catch2/catch.hpp>
#  define RESILIN_CATCH_V3 0
#endif
