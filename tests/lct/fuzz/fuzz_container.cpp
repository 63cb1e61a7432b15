// libFuzzer target for the container parser and decoder. The first byte selects whether the
// checksum is verified (so the structural checks behind it are exercised too). Any input must
// either decode or be refused with resilin::lct::error; never crash or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <resilin/lct/lct.hpp>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  if (size < 1) return 0;
  namespace lct = resilin::lct;
  lct::parse_options p;
  p.verify_checksum = (data[0] & 1) != 0;
  std::span<std::uint8_t const> in(data + 1, size - 1);
  try {
    lct::container const c = lct::parse_container(in, p);
    std::vector<std::uint8_t> out(c.count * lct::element_bytes(c.type));
    lct::decode_options d;
    d.max_threads = 1;
    lct::decode(c.view(), out.data(), out.size(), d);
  } catch (lct::error const&) {
  }
  try {
    (void)lct::codebook::deserialize(in);
  } catch (lct::error const&) {
  }
  return 0;
}
