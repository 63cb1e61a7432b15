#pragma once
// Codebooks: a length-limited canonical Huffman code over exponent keys relative to the
// tensor's modal exponent, with one escape code for out-of-book exponents (spec §3.2-3.4, §3.9),
// its serialisation, and the refresh policy driven by the histogram every encode accumulates.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <resilin/lct/bytes.hpp>
#include <resilin/lct/dtype.hpp>
#include <resilin/lct/error.hpp>
#include <resilin/lct/format.hpp>
#include <resilin/lct/histogram.hpp>
#include <resilin/lct/package_merge.hpp>
#include <resilin/lct/tables.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace resilin::lct {

/// When to rebuild a book from the statistics of the latest encodes.
struct refresh_policy {
  double max_overhead = 0.02;       ///< relative excess of the book's bits over a fresh book's
  double max_escape_rate = 1e-3;    ///< fraction of symbols that escape
};

struct book_assessment {
  double book_bits = 0;      ///< bits per symbol with the assessed book (escapes included)
  double fresh_bits = 0;     ///< bits per symbol with a fresh book built from the histogram
  double entropy = 0;        ///< Shannon entropy of the key histogram, bits per symbol
  double escape_rate = 0;    ///< fraction of symbols outside the book
  bool refresh = false;      ///< the policy asks for a rebuild
};

class codebook {
 public:
  static constexpr std::uint8_t file_version = 1;

  codebook() = default;   ///< an empty book (empty() is true); encoders then build a fresh one

  /// Builds the optimal L-limited code for the key histogram (key = exponent - key_ref mod 2^b).
  /// Keys with count 0 are left out of the book and escape; the escape symbol gets the
  /// pseudo-count max(1, total / 10000).
  static codebook build(dtype t, histogram const& key_hist, std::uint32_t id = 0,
                        unsigned max_len = max_code_length) {
    if (!is_valid(t)) RESILIN_LCT_THROW(invalid_argument(invalid_dtype_message("codebook::build", t)));
    if (max_len < 2 || max_len > max_code_length)
      RESILIN_LCT_THROW(invalid_argument("codebook::build: max_len " + std::to_string(max_len) +
                                         " outside [2, " + std::to_string(max_code_length) + "]"));
    unsigned const n_keys = alphabet_size(t);
    // package-merge adds weights over up to max_len levels: counts whose total passes 2^58
    // (accumulated statistics) are scaled down first, nonzero ones kept >= 1 (they wrapped
    // around 2^64 and gave an incomplete book)
    double total_count = 0;
    for (unsigned k = 0; k < n_keys; ++k) total_count += static_cast<double>(key_hist[k]);
    unsigned shift = 0;
    while (total_count > 0x1p58) {
      total_count /= 2;
      ++shift;
    }
    std::vector<std::uint64_t> w(n_keys + 1, 0);
    std::uint64_t sum = 0;
    bool any = false;
    for (unsigned k = 0; k < n_keys; ++k) {
      std::uint64_t const c = key_hist[k];
      w[k] = c == 0 ? 0 : std::max<std::uint64_t>(1, c >> shift);
      sum += w[k];
      any |= c != 0;
    }
    if (!any) w[0] = 1;
    w[n_keys] = std::max<std::uint64_t>(1, sum / 10000);
    std::size_t const symbols = static_cast<std::size_t>(std::count_if(w.begin(), w.end(), [](std::uint64_t c) { return c != 0; }));
    if (symbols > (std::size_t{1} << max_len))
      RESILIN_LCT_THROW(invalid_argument("codebook::build: " + std::to_string(symbols) +
                                         " symbols (the keys seen and the escape) need codes longer than max_len " +
                                         std::to_string(max_len) + " bits"));
    auto len = package_merge(w, max_len);
    codebook b;
    b.type_ = t;
    b.id_ = id;
    b.cl_.n_keys = static_cast<std::uint16_t>(n_keys);
    b.cl_.exp_bits = static_cast<std::uint8_t>(exponent_bits(t));
    for (unsigned s = 0; s <= n_keys; ++s) b.cl_.len[s] = len[s];
    return b;
  }

  /// Builds a book from raw sample data (keyed by the sample's own modal exponent).
  static codebook from_sample(dtype t, void const* data, std::uint64_t n, std::uint32_t id = 0) {
    histogram h{};
    accumulate_histogram(t, data, n, h);
    return build(t, key_histogram(h, modal_exponent(h, alphabet_size(t)), alphabet_size(t)), id);
  }

  [[nodiscard]] bool empty() const noexcept { return cl_.n_keys == 0; }
  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }
  [[nodiscard]] code_lengths const& lengths() const noexcept { return cl_; }
  [[nodiscard]] unsigned length(unsigned key) const noexcept { return cl_.len[key]; }
  [[nodiscard]] unsigned escape_length() const noexcept { return cl_.len[cl_.n_keys]; }

  /// Expected total bits for a key histogram, and how many symbols would escape (saturating at
  /// 2^64 - 1, as total() does).
  [[nodiscard]] double expected_bits(histogram const& key_hist, std::uint64_t* escapes = nullptr) const noexcept {
    double bits = 0;
    for (unsigned k = 0; k < cl_.n_keys; ++k)
      bits += static_cast<double>(key_hist[k]) * (cl_.len[k] ? cl_.len[k] : escape_length() + cl_.exp_bits);
    if (escapes) *escapes = total(escaped(key_hist));
    return bits;
  }

  /// The counts of the keys this book escapes (no code of their own), the others 0.
  [[nodiscard]] histogram escaped(histogram const& key_hist) const noexcept {
    histogram e{};
    for (unsigned k = 0; k < cl_.n_keys; ++k)
      if (!cl_.len[k]) e[k] = key_hist[k];
    return e;
  }

  /// Compares this book with a fresh one on `key_hist` and applies the policy.
  /// An empty book (no codes: everything would escape) always asks for a refresh when there is
  /// data.
  [[nodiscard]] book_assessment assess(histogram const& key_hist, refresh_policy const& p = {}) const {
    return assessed(key_hist, p, true);
  }

  /// assess(key_hist, p).refresh without building the fresh book where the entropy settles it:
  /// no prefix code spends fewer bits per symbol than the entropy, the fresh book included, so a
  /// book within (1 + max_overhead) of the entropy is within it of the fresh book too. The
  /// steady state of repeated encodes (compressed_tensor) then costs no tree build.
  [[nodiscard]] bool needs_refresh(histogram const& key_hist, refresh_policy const& p = {}) const {
    return assessed(key_hist, p, false).refresh;
  }

 private:
  /// assess(); with always_fresh false, fresh_bits stays 0 where the decision needs no fresh book.
  [[nodiscard]] book_assessment assessed(histogram const& key_hist, refresh_policy const& p, bool always_fresh) const {
    book_assessment a;
    // only the dtype's alphabet counts (an fp16 book has 32 keys: counts beyond them were in n
    // but not in the bits, which understated book_bits)
    histogram keys{};
    std::copy_n(key_hist.begin(), alphabet_size(type_), keys.begin());
    double const n = total_count(keys);  // a double: accumulated counts may pass 2^64
    a.entropy = entropy_bits(keys);
    if (n == 0) return a;
    if (empty()) {
      a.escape_rate = 1;
      a.refresh = true;
      return a;
    }
    a.book_bits = expected_bits(keys) / n;
    a.escape_rate = total_count(escaped(keys)) / n;
    bool const escapes = a.escape_rate > p.max_escape_rate;
    // (1 - 1e-12): the computed entropy may round above the fresh book's computed bits where
    // that book is optimal (dyadic frequencies)
    if (!always_fresh && (escapes || a.book_bits <= a.entropy * (1.0 + p.max_overhead) * (1.0 - 1e-12))) {
      a.refresh = escapes;
      return a;
    }
    a.fresh_bits = build(type_, keys).expected_bits(keys) / n;
    a.refresh = a.book_bits > a.fresh_bits * (1.0 + p.max_overhead) || escapes;
    return a;
  }

 public:

  /// Body shared by the book file and the container: u32 id, u8 escape length, then the key
  /// lengths as 4-bit fields (two per byte, low nibble first).
  void write_body(std::vector<std::uint8_t>& out) const {
    detail::put_le<std::uint32_t>(out, id_);
    out.push_back(static_cast<std::uint8_t>(escape_length()));
    for (unsigned k = 0; k < cl_.n_keys; k += 2)
      out.push_back(static_cast<std::uint8_t>(cl_.len[k] | (cl_.len[k + 1] << 4)));
  }
  static codebook read_body(dtype t, detail::reader& r) {
    codebook b;
    b.type_ = t;
    b.cl_.n_keys = static_cast<std::uint16_t>(alphabet_size(t));
    b.cl_.exp_bits = static_cast<std::uint8_t>(exponent_bits(t));
    b.id_ = r.get<std::uint32_t>("codebook id");
    b.cl_.len[b.cl_.n_keys] = r.get<std::uint8_t>("codebook escape length");
    auto nib = r.bytes(b.cl_.n_keys / 2, "codebook lengths");
    for (unsigned k = 0; k < b.cl_.n_keys; k += 2) {
      b.cl_.len[k] = nib[k / 2] & 0xF;
      b.cl_.len[k + 1] = nib[k / 2] >> 4;
    }
    b.validate();
    return b;
  }

  /// Book file: "RLCB", u8 version, u8 dtype, body, u32 XXH32 of everything before it.
  [[nodiscard]] std::vector<std::uint8_t> serialize() const {
    if (empty()) RESILIN_LCT_THROW(invalid_argument("codebook::serialize: empty book"));
    std::vector<std::uint8_t> out{'R', 'L', 'C', 'B', file_version, static_cast<std::uint8_t>(type_)};
    write_body(out);
    detail::put_le<std::uint32_t>(out, XXH32(out.data(), out.size(), 0));
    return out;
  }
  static codebook deserialize(std::span<std::uint8_t const> in) {
    detail::reader r(in);
    auto magic = r.bytes(4, "codebook magic");
    if (magic[0] != 'R' || magic[1] != 'L' || magic[2] != 'C' || magic[3] != 'B')
      RESILIN_LCT_THROW(format_error(errc::bad_magic, "codebook: magic is not RLCB"));
    auto const version = r.get<std::uint8_t>("codebook version");
    if (version != file_version)
      RESILIN_LCT_THROW(format_error(errc::unsupported_version, "codebook: version " + std::to_string(version)));
    auto const t = static_cast<dtype>(r.get<std::uint8_t>("codebook dtype"));
    if (!is_valid(t))
      RESILIN_LCT_THROW(format_error(errc::corrupt, "codebook: dtype " + std::to_string(static_cast<int>(t))));
    codebook b = read_body(t, r);
    std::size_t const body_end = r.position();
    auto const sum = r.get<std::uint32_t>("codebook checksum");
    if (r.remaining() != 0)
      RESILIN_LCT_THROW(format_error(errc::corrupt, "codebook: " + std::to_string(r.remaining()) + " trailing bytes"));
    if (sum != XXH32(in.data(), body_end, 0))
      RESILIN_LCT_THROW(format_error(errc::checksum_mismatch, "codebook: XXH32 does not match"));
    return b;
  }

 private:
  /// A book must be a complete prefix code (Kraft sum exactly 1) of lengths <= L with an escape.
  void validate() const {
    for (unsigned s = 0; s <= cl_.n_keys; ++s)
      if (cl_.len[s] > max_code_length)
        RESILIN_LCT_THROW(format_error(errc::bad_codebook, "length " + std::to_string(cl_.len[s]) + " of symbol " +
                                                               std::to_string(s) + " exceeds " +
                                                               std::to_string(max_code_length)));
    if (escape_length() == 0) RESILIN_LCT_THROW(format_error(errc::bad_codebook, "no escape code"));
    if (kraft_sum(cl_) != (std::uint64_t{1} << max_code_length))
      RESILIN_LCT_THROW(format_error(errc::bad_codebook, "code lengths do not form a complete prefix code"));
  }

  dtype type_ = dtype::bf16;
  std::uint32_t id_ = 0;
  code_lengths cl_{};
};

}  // namespace resilin::lct
