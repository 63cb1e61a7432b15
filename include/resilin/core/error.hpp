#pragma once
// Typed host errors. Messages name the argument and the value: "gamma must be > 0, got -1".
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <resilin/core/config.hpp>

namespace resilin {

/// Bad input to a host entry point (a precondition the caller can fix).
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A failure that is not the caller's input (allocation limits, I/O, device errors).
class runtime_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
/// Concatenates its arguments with operator<< (doubles with 17 significant digits).
template <class... Parts>
std::string message(Parts const&... parts) {
  std::ostringstream os;
  os.precision(17);
  (os << ... << parts);
  return os.str();
}

/// Throws resilin::invalid_argument built from the parts unless `ok`.
template <class... Parts>
inline void require(bool ok, Parts const&... parts) {
  if (!ok) RESILIN_THROW(::resilin::invalid_argument(message(parts...)));
}
}  // namespace detail
}  // namespace resilin
