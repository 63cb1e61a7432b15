// Host/CUDA byte identity and device round trips (skipped with exit code 77 without a GPU).
#include <support/catch.hpp>

#include <random>

#include <resilin/lct/lct.cuh>

#include "../test_util.hpp"

using namespace lct_test;
namespace cc = resilin::lct::cuda_codec;

namespace {
template <class T>
struct dbuf {
  T* p = nullptr;
  explicit dbuf(std::size_t n) { RESILIN_LCT_CUDA_TRY(cudaMalloc(&p, (n ? n : 1) * sizeof(T))); }
  ~dbuf() { cudaFree(p); }
  dbuf(dbuf const&) = delete;
  dbuf& operator=(dbuf const&) = delete;
};

template <class T>
std::vector<T> to_host(T const* d, std::size_t n) {
  std::vector<T> h(n);
  if (n) RESILIN_LCT_CUDA_TRY(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/// CHECK that two byte or word arrays are equal, reporting only the sizes and the first
/// difference (a failure goes on with the next field and configuration, and a whole raw plane
/// in the log would hide the rest of it).
template <class T>
void check_same(std::vector<T> const& got, std::vector<T> const& want, char const* what) {
  std::size_t first = 0;
  while (first < got.size() && first < want.size() && got[first] == want[first]) ++first;
  bool const same = got.size() == want.size() && first == got.size();
  INFO(what << ": " << got.size() << " against " << want.size() << " entries, first difference at " << first
            << (first < got.size() && first < want.size()
                    ? " (device " + std::to_string(+got[first]) + ", host " + std::to_string(+want[first]) + ")"
                    : std::string()));
  CHECK(same);
}

/// Leaves a non-sticky error pending, as a caller's own cudaMalloc that failed and was handled
/// does: the status encode and decode return next must be their own.
void leave_pending_error() {
  void* p = nullptr;
  cudaError_t const s = cudaMalloc(&p, std::size_t(1) << 62);
  if (s == cudaSuccess) (void)cudaFree(p);
  REQUIRE(s == cudaErrorMemoryAllocation);
}

/// pending_errors: an error left pending before the encode and before the decode (which must
/// not report it as theirs).
void check_identity(lct::dtype t, std::vector<std::uint8_t> const& bytes, lct::codebook const* book,
                    unsigned lg = lct::default_chunk_log2, bool pending_errors = false) {
  std::uint64_t const n = bytes.size() / lct::element_bytes(t);
  lct::encoded_tensor h;
  lct::encode_options opt;
  opt.chunk_log2 = lg;
  lct::encode(t, bytes.data(), n, book, h, opt);
  std::uint64_t const C = lct::chunk_count(n, lg);

  dbuf<std::uint8_t> in(bytes.size()), raw(h.raw.size());
  dbuf<std::uint32_t> offsets(C + 1), bits(C), stream(cc::max_stream_words(t, n, lg)), key_ref(1);
  std::size_t const wsb = cc::encode_workspace_bytes(t, n, lg);
  dbuf<std::uint8_t> ws(wsb);
  if (!bytes.empty()) RESILIN_LCT_CUDA_TRY(cudaMemcpy(in.p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  cc::device_encode_output out{raw.p, offsets.p, bits.p, stream.p, key_ref.p, nullptr};
  if (pending_errors) leave_pending_error();
  RESILIN_LCT_CUDA_TRY(cc::encode(t, in.p, n, h.book.lengths(), lg, out, ws.p, wsb));
  RESILIN_LCT_CUDA_TRY(cudaDeviceSynchronize());

  CHECK(to_host(key_ref.p, 1)[0] == h.key_ref);
  check_same(to_host(offsets.p, C + 1), h.offsets, "offsets");
  check_same(to_host(bits.p, C), h.bits, "bits");
  check_same(to_host(raw.p, h.raw.size()), h.raw, "raw planes");
  auto const words = to_host(stream.p, h.stream.size() / 4);
  std::vector<std::uint8_t> sbytes(h.stream.size());
  if (!sbytes.empty()) std::memcpy(sbytes.data(), words.data(), sbytes.size());
  check_same(sbytes, h.stream, "stream");

  // device decode of the device-encoded stream
  cc::device_stream ds;
  ds.type = t; ds.count = n; ds.chunk_log2 = lg; ds.key_ref = h.key_ref;
  ds.lengths = h.book.lengths(); ds.raw = raw.p; ds.offsets = offsets.p; ds.bits = bits.p; ds.stream = stream.p;
  ds.stream_words = h.stream.size() / 4;
  dbuf<std::uint8_t> dec(bytes.size()), dws(cc::decode_workspace_bytes());
  if (pending_errors) leave_pending_error();
  RESILIN_LCT_CUDA_TRY(cc::decode(ds, dec.p, dws.p, cc::decode_workspace_bytes()));
  std::uint32_t err = 1;
  RESILIN_LCT_CUDA_TRY(cc::read_decode_error(dws.p, &err));
  CHECK(err == 0);
  check_same(to_host(dec.p, bytes.size()), bytes, "decoded bytes");
}
}  // namespace

TEST_CASE("CUDA encoder is byte-identical to the host encoder; CUDA decoder round-trips", "[lct][cuda]") {
  for (auto t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{8191}, std::uint64_t{8192},
                            std::uint64_t{8193}, std::uint64_t{100003}}) {
      INFO(lct::name(t) << " n " << n);
      auto g = gaussian_bf16(2 * n, 0.02f, n);
      std::vector<std::uint8_t> bytes(n * lct::element_bytes(t));
      if (!bytes.empty()) std::memcpy(bytes.data(), g.data(), bytes.size());
      check_identity(t, bytes, nullptr);
      check_identity(t, random_bytes(bytes.size(), n + 1), nullptr);   // raw-fallback chunks
    }
  }
}

TEST_CASE("CUDA codec: an error an earlier call left pending is not reported as its own", "[lct][cuda]") {
  // encode and decode read their launches' status with cudaGetLastError: the caller's own
  // cudaMalloc that failed (and was handled) came back as the codec's cudaErrorMemoryAllocation
  for (auto t : {lct::dtype::bf16, lct::dtype::fp32}) {
    INFO(lct::name(t));
    auto g = gaussian_bf16(2 * 20000, 0.02f, 20000);
    std::vector<std::uint8_t> bytes(20000 * lct::element_bytes(t));
    std::memcpy(bytes.data(), g.data(), bytes.size());
    check_identity(t, bytes, nullptr, lct::default_chunk_log2, true);
  }
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("CUDA codec with a stale book (escapes) and special values", "[lct][cuda]") {
  auto narrow = gaussian_bf16(20000, 0.02f, 1);
  auto book = lct::codebook::from_sample(lct::dtype::bf16, narrow.data(), narrow.size());
  auto wide = gaussian_bf16(50000, 3.0f, 2);
  for (std::size_t i = 0; i < wide.size(); i += 31) wide[i] = static_cast<std::uint16_t>(0x7F80u | (i & 0x807Fu));
  check_identity(lct::dtype::bf16, as_bytes(wide), &book);
  std::vector<std::uint16_t> all(65536);
  for (std::uint32_t u = 0; u < 65536; ++u) all[u] = static_cast<std::uint16_t>(u);
  check_identity(lct::dtype::bf16, as_bytes(all), nullptr);
  check_identity(lct::dtype::fp16, as_bytes(all), nullptr);
}

TEST_CASE("CUDA codec: dense codes (decoder threads with two windows) at every device chunk size",
          "[lct][cuda]") {
  // exponents spread over 48 values: about 5.6 bits per code, so a coded chunk's stream has more
  // windows than the decoder has threads; with a book fitted to a small sample, escapes too
  std::mt19937_64 r(9);
  std::vector<std::uint16_t> b16(300007), h16(200003);
  std::vector<std::uint32_t> f32(200003);
  for (auto& v : b16) v = static_cast<std::uint16_t>(((100 + r() % 48) << 7) | (r() & 0x807F));
  for (auto& v : f32) v = static_cast<std::uint32_t>(((100 + r() % 48) << 23) | (r() & 0x807FFFFF));
  for (auto& v : h16) v = static_cast<std::uint16_t>(((r() % 24) << 10) | (r() & 0x83FF));
  auto const stale16 = lct::codebook::from_sample(lct::dtype::bf16, b16.data(), 300);
  auto const stale32 = lct::codebook::from_sample(lct::dtype::fp32, f32.data(), 1000);
  auto const staleh = lct::codebook::from_sample(lct::dtype::fp16, h16.data(), 500);
  for (unsigned lg = lct::min_chunk_log2; lg <= cc::max_device_chunk_log2; ++lg) {
    INFO("chunk_log2 " << lg);
    check_identity(lct::dtype::bf16, as_bytes(b16), nullptr, lg);
    check_identity(lct::dtype::bf16, as_bytes(b16), &stale16, lg);
    check_identity(lct::dtype::fp32, as_bytes(f32), nullptr, lg);
    check_identity(lct::dtype::fp32, as_bytes(f32), &stale32, lg);
    check_identity(lct::dtype::fp16, as_bytes(h16), nullptr, lg);
    check_identity(lct::dtype::fp16, as_bytes(h16), &staleh, lg);
  }
}

TEST_CASE("CUDA codec refuses bad parameters before launching anything", "[lct][cuda]") {
  auto x = gaussian_bf16(4096, 0.02f, 4);
  auto const book = lct::codebook::from_sample(lct::dtype::bf16, x.data(), x.size());
  std::uint64_t const n = x.size();
  std::uint64_t const C = lct::chunk_count(n, lct::default_chunk_log2);
  dbuf<std::uint8_t> in(n * 2), raw(n), dec(n * 2), dws(cc::decode_workspace_bytes());
  dbuf<std::uint32_t> offsets(C + 1), bits(C), stream(cc::max_stream_words(lct::dtype::bf16, n, lct::default_chunk_log2));
  std::size_t const wsb = cc::encode_workspace_bytes(lct::dtype::bf16, n);
  dbuf<std::uint8_t> ws(wsb);
  cc::device_encode_output out{raw.p, offsets.p, bits.p, nullptr, nullptr, nullptr};   // no stream
  CHECK(cc::encode(lct::dtype::bf16, in.p, n, book.lengths(), lct::default_chunk_log2, out, ws.p, wsb) ==
        cudaErrorInvalidValue);
  cc::device_stream ds;
  ds.type = lct::dtype::bf16;
  ds.count = n;
  ds.raw = raw.p;
  ds.offsets = offsets.p;
  ds.bits = bits.p;
  ds.stream = stream.p;
  // the default book has no codes: its LUT would have holes (and the decoder no way forward)
  CHECK(cc::decode(ds, dec.p, dws.p, cc::decode_workspace_bytes()) == cudaErrorInvalidValue);
  ds.lengths = book.lengths();
  ds.stream = reinterpret_cast<std::uint32_t const*>(reinterpret_cast<std::uint8_t const*>(stream.p) + 1);
  CHECK(cc::decode(ds, dec.p, dws.p, cc::decode_workspace_bytes()) == cudaErrorInvalidValue);   // misaligned
  ds.stream = stream.p;
  // misaligned output or workspace: a GPU would fault (a sticky error), so refused up front
  CHECK(cc::decode(ds, dec.p + 1, dws.p, cc::decode_workspace_bytes()) == cudaErrorInvalidValue);
  dbuf<std::uint8_t> roomy(cc::decode_workspace_bytes() + 8);   // large enough from any offset
  CHECK(cc::decode(ds, dec.p, roomy.p + 2, cc::decode_workspace_bytes()) == cudaErrorInvalidValue);
  // an output or workspace over the sections or each other: written while they are read (the
  // host decoder gave 71 % wrong bytes decoding a container in place)
  CHECK(cc::decode(ds, raw.p, dws.p, cc::decode_workspace_bytes()) == cudaErrorInvalidValue);
  CHECK(cc::decode(ds, dec.p, reinterpret_cast<std::uint8_t*>(offsets.p), cc::decode_workspace_bytes()) ==
        cudaErrorInvalidValue);
  CHECK(cc::decode(ds, dec.p, dec.p + 64, cc::decode_workspace_bytes()) == cudaErrorInvalidValue);
  dbuf<std::uint32_t> stream_ok(cc::max_stream_words(lct::dtype::bf16, n, lct::default_chunk_log2));
  out.stream = stream_ok.p;
  CHECK(cc::encode(lct::dtype::bf16, in.p + 1, n - 1, book.lengths(), lct::default_chunk_log2, out, ws.p, wsb) ==
        cudaErrorInvalidValue);   // the input, read as whole elements
  dbuf<std::uint8_t> roomy_ws(wsb + 8);
  CHECK(cc::encode(lct::dtype::bf16, in.p, n, book.lengths(), lct::default_chunk_log2, out, roomy_ws.p + 4, wsb) ==
        cudaErrorInvalidValue);   // the workspace's 64-bit histogram
  cc::device_encode_output odd = out;
  odd.offsets = reinterpret_cast<std::uint32_t*>(reinterpret_cast<std::uint8_t*>(offsets.p) + 2);
  CHECK(cc::encode(lct::dtype::bf16, in.p, n, book.lengths(), lct::default_chunk_log2, odd, ws.p, wsb) ==
        cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);   // nothing was launched
  // the same calls aligned are accepted (what was refused above was the alignment alone)
  RESILIN_LCT_CUDA_TRY(cudaMemcpy(in.p, x.data(), n * 2, cudaMemcpyHostToDevice));
  dbuf<std::uint32_t> key_ref(1);
  out.key_ref = key_ref.p;
  REQUIRE(cc::encode(lct::dtype::bf16, in.p, n, book.lengths(), lct::default_chunk_log2, out, roomy_ws.p, wsb) ==
          cudaSuccess);
  RESILIN_LCT_CUDA_TRY(cudaDeviceSynchronize());
  ds.key_ref = to_host(key_ref.p, 1)[0];
  ds.offsets = offsets.p;
  ds.bits = bits.p;
  ds.stream = stream_ok.p;
  ds.stream_words = to_host(offsets.p, C + 1)[C];
  REQUIRE(cc::decode(ds, dec.p, roomy.p, cc::decode_workspace_bytes()) == cudaSuccess);
  std::uint32_t err = 1;
  RESILIN_LCT_CUDA_TRY(cc::read_decode_error(roomy.p, &err));
  CHECK(err == 0);
  CHECK(to_host(reinterpret_cast<std::uint16_t const*>(dec.p), n) == x);
}

namespace {
/// The device decode of a parsed container: its error word and the decoded bytes.
std::pair<std::uint32_t, std::vector<std::uint8_t>> decode_on_device(lct::container const& p) {
  std::size_t const out_bytes = p.count * lct::element_bytes(p.type);
  dbuf<std::uint32_t> offsets(p.offsets.size()), bits(p.bits.size()), stream(p.stream.size() / 4);
  dbuf<std::uint8_t> raw(p.raw.size()), dec(out_bytes), ws(cc::decode_workspace_bytes());
  RESILIN_LCT_CUDA_TRY(cudaMemcpy(offsets.p, p.offsets.data(), 4 * p.offsets.size(), cudaMemcpyHostToDevice));
  RESILIN_LCT_CUDA_TRY(cudaMemcpy(bits.p, p.bits.data(), 4 * p.bits.size(), cudaMemcpyHostToDevice));
  RESILIN_LCT_CUDA_TRY(cudaMemcpy(stream.p, p.stream.data(), p.stream.size(), cudaMemcpyHostToDevice));
  RESILIN_LCT_CUDA_TRY(cudaMemcpy(raw.p, p.raw.data(), p.raw.size(), cudaMemcpyHostToDevice));
  cc::device_stream ds;
  ds.type = p.type; ds.count = p.count; ds.chunk_log2 = p.chunk_log2; ds.key_ref = p.key_ref;
  ds.lengths = p.book.lengths(); ds.raw = raw.p; ds.offsets = offsets.p; ds.bits = bits.p; ds.stream = stream.p;
  ds.stream_words = p.stream.size() / 4;
  RESILIN_LCT_CUDA_TRY(cc::decode(ds, dec.p, ws.p, cc::decode_workspace_bytes()));
  std::uint32_t err = 0;
  RESILIN_LCT_CUDA_TRY(cc::read_decode_error(ws.p, &err));
  return {err, to_host(dec.p, out_bytes)};
}
}  // namespace

TEST_CASE("CUDA decoder: a wrong gap field is reported, never decoded into wrong values", "[lct][cuda]") {
  // Gap fields in range pass the container's checks and the host decoder never reads them; a
  // device thread starting mid-code resynchronised after a few codes, so the chunk's code count
  // still added up and 2-5 elements came out wrong with no error (5 of these 57 edits).
  auto const x = gaussian_bf16(8192, 0.02f, 5);
  lct::encoded_tensor e;
  lct::encode(lct::dtype::bf16, x.data(), x.size(), nullptr, e);
  auto const good = lct::to_container(e);
  REQUIRE(decode_on_device(lct::parse_container(good)) == std::pair{0u, as_bytes(x)});
  std::uint64_t const stream_at = good.size() - 8 - e.stream.size();   // the stream, then XXH64
  std::uint64_t const gap_plane = lct::div_up(e.bits[0], 32) * 32;     // chunk 0's gaps, in bits
  int edits = 0, reported = 0;
  for (unsigned window : {5u, 40u, 100u}) {
    REQUIRE(window < lct::window_count(e.bits[0]));
    for (unsigned gap = 0; gap < 20; ++gap) {
      auto c = good;
      std::uint8_t* const s = c.data() + stream_at;
      std::uint64_t const at = gap_plane + std::uint64_t{window} * lct::gap_field_bits;
      unsigned old = 0;
      for (unsigned k = 0; k < lct::gap_field_bits; ++k) {
        std::uint64_t const bit = at + k;
        old = old << 1 | ((s[bit / 8] >> (7 - bit % 8)) & 1u);
        unsigned const v = (gap >> (lct::gap_field_bits - 1 - k)) & 1u;
        s[bit / 8] = static_cast<std::uint8_t>((s[bit / 8] & ~(0x80u >> (bit % 8))) | (v << (7 - bit % 8)));
      }
      if (gap == old) continue;
      std::uint64_t const sum = XXH64(c.data(), c.size() - 8, 0);
      for (int i = 0; i < 8; ++i) c[c.size() - 8 + i] = static_cast<std::uint8_t>(sum >> (8 * i));
      lct::container const p = lct::parse_container(c);  // in range: accepted
      auto const [err, bytes] = decode_on_device(p);
      INFO("window " << window << ": gap " << old << " -> " << gap);
      CHECK((err != 0 || bytes == as_bytes(x)));
      ++edits;
      reported += err != 0;
    }
  }
  CHECK(edits == 57);
  CHECK(reported == edits);  // every wrong gap puts a thread mid-code
}

TEST_CASE("CUDA decoder: a chunk table that disagrees with its regions is reported", "[lct][cuda]") {
  // The kernel took each chunk's raw flag, bit count and offsets as they came: a raw flag set on
  // a coded chunk, or an offset moved by a word, decoded about 1020 of 2048 elements wrongly
  // with no error, where the host decoder refuses both (a reviewer's reproducer).
  auto x = gaussian_bf16(2048, 0.02f, 6);
  std::mt19937_64 r(7);
  for (std::size_t i = 1024; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(r());   // a raw chunk
  lct::encoded_tensor e;
  lct::encode_options o;
  o.chunk_log2 = 10;
  lct::encode(lct::dtype::bf16, x.data(), x.size(), nullptr, e, o);
  auto const bytes_of_container = lct::to_container(e);   // the parsed sections view these bytes
  lct::container const good = lct::parse_container(bytes_of_container);
  REQUIRE((good.bits[0] & lct::raw_chunk_flag) == 0);
  REQUIRE((good.bits[1] & lct::raw_chunk_flag) != 0);
  REQUIRE(decode_on_device(good) == std::pair{0u, as_bytes(x)});
  auto const reported = [&](auto&& edit) {
    lct::container p = good;
    edit(p);
    auto const [err, bytes] = decode_on_device(p);
    CHECK((err != 0 || bytes == as_bytes(x)));
    return err != 0;
  };
  CHECK(reported([](lct::container& p) { p.bits[0] |= lct::raw_chunk_flag; }));
  CHECK(reported([](lct::container& p) { p.bits[1] &= ~lct::raw_chunk_flag; }));
  CHECK(reported([](lct::container& p) { p.offsets[1] -= 1; }));
  CHECK(reported([](lct::container& p) { p.offsets[1] += 1; }));
  CHECK(reported([](lct::container& p) { p.bits[0] += 64; }));
}

TEST_CASE("CUDA encoder refuses books whose streams could not be decoded", "[lct][cuda]") {
  // It checked only the key count: a book without an escape code, one that is no prefix code,
  // or one without the escape payload's width encoded with cudaSuccess into streams that the
  // decoder refused or lost every element of.
  auto const x = gaussian_bf16(4096, 0.02f, 8);
  auto const book = lct::codebook::from_sample(lct::dtype::bf16, x.data(), x.size());
  std::uint64_t const n = x.size();
  std::uint64_t const C = lct::chunk_count(n, lct::default_chunk_log2);
  dbuf<std::uint8_t> in(n * 2), raw(n);
  dbuf<std::uint32_t> offsets(C + 1), bits(C), stream(cc::max_stream_words(lct::dtype::bf16, n, lct::default_chunk_log2));
  std::size_t const wsb = cc::encode_workspace_bytes(lct::dtype::bf16, n);
  dbuf<std::uint8_t> ws(wsb);
  RESILIN_LCT_CUDA_TRY(cudaMemcpy(in.p, x.data(), n * 2, cudaMemcpyHostToDevice));
  cc::device_encode_output out{raw.p, offsets.p, bits.p, stream.p, nullptr, nullptr};
  auto const encode_with = [&](lct::code_lengths const& cl) {
    return cc::encode(lct::dtype::bf16, in.p, n, cl, lct::default_chunk_log2, out, ws.p, wsb);
  };
  REQUIRE(encode_with(book.lengths()) == cudaSuccess);
  RESILIN_LCT_CUDA_TRY(cudaDeviceSynchronize());
  lct::code_lengths no_payload = book.lengths();
  no_payload.exp_bits = 0;
  CHECK(encode_with(no_payload) == cudaErrorInvalidValue);
  lct::code_lengths not_prefix = book.lengths();
  for (auto& l : not_prefix.len) l = 2;
  CHECK(encode_with(not_prefix) == cudaErrorInvalidValue);
  lct::code_lengths no_escape = book.lengths();
  no_escape.len[no_escape.n_keys] = 0;  // the escape's slot, after the keys
  CHECK(encode_with(no_escape) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);   // nothing was launched
}
