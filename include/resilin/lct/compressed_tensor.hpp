#pragma once
// A compressed tensor for the repeated encode/decode regime (training steps): it owns its
// compressed storage and scratch, reuses both between steps, keeps its codebook across
// encodes (encode = table lookups, no tree build) and refreshes it when the statistics that
// every encode accumulates say the book has gone stale for the recent encodes.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <resilin/lct/codebook.hpp>
#include <resilin/lct/container.hpp>
#include <resilin/lct/decode.hpp>
#include <resilin/lct/encode.hpp>
#include <resilin/lct/encoded.hpp>
#include <resilin/lct/histogram.hpp>

namespace resilin::lct {

class compressed_tensor {
 public:
  struct options {
    encode_options encode{};
    decode_options decode{};
    refresh_policy policy{};
    bool auto_refresh = true;   ///< rebuild the book after an encode when the policy says so
  };

  explicit compressed_tensor(dtype t) : compressed_tensor(t, options{}) {}
  compressed_tensor(dtype t, options const& opt) : type_(t), opt_(opt) {
    if (!is_valid(t)) RESILIN_LCT_THROW(invalid_argument(invalid_dtype_message("compressed_tensor", t)));
    enc_.type = t;
  }

  /// Uses a precomputed book from now on (it must be for this dtype).
  void set_codebook(codebook const& b) {
    if (!b.empty() && b.type() != type_) RESILIN_LCT_THROW(invalid_argument("compressed_tensor: codebook is for " + std::string(name(b.type())) +
                                         ", the tensor is " + std::string(name(type_))));
    book_ = b;
    stats_ = {};
  }
  [[nodiscard]] codebook const& current_codebook() const noexcept { return book_; }

  /// Encodes n elements (bit patterns), replacing the previous contents; buffers are reused.
  /// Where it throws, the object holds no contents (as before its first encode) and keeps its
  /// book and statistics.
  void encode(void const* data, std::uint64_t n) {
    contents_ = false;  // a failed encode leaves no contents (lct::encode empties enc_)
    lct::encode(type_, data, n, book_.empty() ? nullptr : &book_, enc_, opt_.encode, &scratch_);
    contents_ = true;
    // the first encode with data: keep its fresh book (an empty tensor's book holds only the
    // escape and would make the next encode escape nearly everything)
    if (book_.empty() && n > 0) book_ = enc_.book;
    // the statistics decay by half at every encode, so that they describe the last few encodes
    // (summed since the last refresh, a book used for 10000 steps took 204 steps to notice
    // data with 5 % escapes, and its replacement was fitted mostly to the old data)
    histogram const keys = key_histogram(enc_.exponents, enc_.key_ref, alphabet_size(type_));
    for (unsigned k = 0; k < 256; ++k) stats_[k] = stats_[k] / 2 + keys[k];
    ++encodes_;
    // the policy's decision alone: without a tree build unless the entropy leaves it open
    if (opt_.auto_refresh && book_.needs_refresh(stats_, opt_.policy)) refresh();
  }
  void encode(std::span<std::uint16_t const> bits) {
    if (type_ == dtype::fp32) RESILIN_LCT_THROW(invalid_argument("compressed_tensor: fp32 tensor given 16-bit words"));
    encode(bits.data(), bits.size());
  }
  void encode(std::span<float const> values) {
    if (type_ != dtype::fp32) RESILIN_LCT_THROW(invalid_argument("compressed_tensor: 16-bit tensor given floats"));
    encode(values.data(), values.size());
  }

  /// Assesses the current book against the recent statistics (accumulated_key_histogram());
  /// rebuilds it from them (new id) when the policy asks. Returns the assessment. The current contents stay decodable: they carry
  /// the book they were encoded with.
  book_assessment refresh_if_needed() {
    if (book_.empty()) return {};
    book_assessment const a = book_.assess(stats_, opt_.policy);
    if (a.refresh) refresh();
    return a;
  }

  /// Decodes into a caller buffer of at least size() * element_bytes bytes. Without contents
  /// (before the first encode, after a failed one) it throws invalid_argument, as to_container()
  /// does.
  void decode_into(void* out, std::uint64_t out_bytes) const {
    require_contents("decode");
    lct::decode(enc_.view(), out, out_bytes, opt_.decode);
  }
  template <class T>
  void decode_into(std::span<T> out) const { decode_into(out.data(), out.size_bytes()); }
  /// Decodes into the object's reusable scratch buffer; the span is valid until the next call.
  std::span<std::uint8_t const> decode_to_scratch() {
    decoded_.resize(enc_.original_bytes());
    decode_into(decoded_.data(), decoded_.size());
    return decoded_;
  }

  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] std::uint64_t size() const noexcept { return enc_.count; }
  [[nodiscard]] std::uint64_t original_bytes() const noexcept { return enc_.original_bytes(); }
  /// Bytes the contents take as a container (header, book, chunk table, planes, stream,
  /// checksum); 0 without contents (before the first encode, after a failed one).
  [[nodiscard]] std::uint64_t compressed_bytes() const noexcept { return contents_ ? container_size(enc_) : 0; }
  [[nodiscard]] double ratio() const noexcept {
    return enc_.count ? static_cast<double>(original_bytes()) / static_cast<double>(compressed_bytes()) : 0.0;
  }
  [[nodiscard]] double escape_rate() const noexcept {
    return enc_.count ? static_cast<double>(enc_.escapes()) / static_cast<double>(enc_.count) : 0.0;
  }
  [[nodiscard]] std::uint64_t refreshes() const noexcept { return refreshes_; }
  [[nodiscard]] std::uint64_t encodes() const noexcept { return encodes_; }
  /// The key statistics the refresh policy assesses: each encode's key histogram plus half of
  /// the statistics before it (reset by a refresh or set_codebook()).
  [[nodiscard]] histogram const& accumulated_key_histogram() const noexcept { return stats_; }
  [[nodiscard]] encoded_tensor const& encoded() const noexcept { return enc_; }
  [[nodiscard]] std::vector<std::uint8_t> to_container() const {
    require_contents("to_container");
    return lct::to_container(enc_);
  }

 private:
  /// A new book (new id) from the recent statistics, which then start again.
  void refresh() {
    book_ = codebook::build(type_, stats_, book_.id() + 1);
    stats_ = {};
    ++refreshes_;
  }
  void require_contents(char const* what) const {
    if (!contents_)
      RESILIN_LCT_THROW(invalid_argument(std::string("compressed_tensor::") + what + ": nothing encoded yet"));
  }

  dtype type_;
  options opt_;
  codebook book_;
  encoded_tensor enc_;
  encode_scratch scratch_;
  histogram stats_{};
  std::vector<std::uint8_t> decoded_;
  std::uint64_t encodes_ = 0, refreshes_ = 0;
  bool contents_ = false;  // an encode succeeded, and none failed after it
};

}  // namespace resilin::lct
