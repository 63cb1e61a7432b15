#pragma once
// Typed host errors of the lct codec: every refusal names what was wrong.
#include <stdexcept>
#include <string>

#include <resilin/lct/config.hpp>

namespace resilin::lct {

enum class errc {
  invalid_argument,     ///< a caller-supplied value is out of range
  bad_magic,            ///< not an lct container / codebook
  unsupported_version,  ///< a newer format version
  truncated,            ///< the input ends before a field or section it declares
  corrupt,              ///< a field or offset is inconsistent
  checksum_mismatch,    ///< xxHash of the container does not match
  bad_codebook,         ///< code lengths violate the Kraft equality or the length limit
};

inline char const* to_string(errc e) noexcept {
  switch (e) {
    case errc::invalid_argument: return "invalid argument";
    case errc::bad_magic: return "bad magic";
    case errc::unsupported_version: return "unsupported version";
    case errc::truncated: return "truncated input";
    case errc::corrupt: return "corrupt input";
    case errc::checksum_mismatch: return "checksum mismatch";
    case errc::bad_codebook: return "bad codebook";
  }
  return "unknown";
}

/// Base of every lct error; `code()` tells which class of failure it is.
class error : public std::runtime_error {
 public:
  error(errc code, std::string const& what)
      : std::runtime_error(std::string("lct: ") + to_string(code) + ": " + what), code_(code) {}
  [[nodiscard]] errc code() const noexcept { return code_; }

 private:
  errc code_;
};

/// A precondition of a host API call failed.
class invalid_argument : public error {
 public:
  explicit invalid_argument(std::string const& what) : error(errc::invalid_argument, what) {}
};

/// A container, codebook or stream was refused while parsing or decoding.
class format_error : public error {
 public:
  format_error(errc code, std::string const& what) : error(code, what) {}
};

}  // namespace resilin::lct
