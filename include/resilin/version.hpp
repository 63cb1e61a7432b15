#pragma once
#define RESILIN_VERSION_MAJOR 0
#define RESILIN_VERSION_MINOR 1
#define RESILIN_VERSION_PATCH 0
namespace resilin {
inline constexpr char const version_string[] = "0.1.0";
}
