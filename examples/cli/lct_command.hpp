#pragma once
// `resilin lct ...`: codebook, encode, decode and stats on raw little-endian arrays.
//   resilin lct codebook --dtype T SAMPLE BOOK
//   resilin lct encode --dtype bf16|fp16|fp32 [--codebook BOOK] IN OUT
//   resilin lct decode [--dtype T] IN OUT     (--dtype: refuse a container of another type)
//   resilin lct stats --dtype T [--codebook BOOK] IN
// Errors are thrown as std::exception subclasses naming the argument and value.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <resilin/lct/lct.hpp>
#include "io.hpp"

namespace resilin_cli {

namespace lct_detail {

namespace lct = resilin::lct;

struct lct_args {
  std::string dtype = "bf16", book, in, out;
};

using resilin::detail::system_reason;

/// The whole file; the data readers' open_data_file says why one cannot be opened.
inline std::vector<std::uint8_t> read_file(std::string const& path, char const* what) {
  std::ifstream f = [&] {
    try {
      return resilin::detail::open_data_file(path);
    } catch (resilin::runtime_error const& e) {
      throw std::runtime_error(std::string(what) + ": " + e.what());
    }
  }();
  errno = 0;
  std::vector<std::uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw std::runtime_error(std::string(what) + ": error reading '" + path + "'" + system_reason(errno));
  return b;
}

/// Writes the whole file or throws; the data reach the file only when it is closed (a full disk
/// shows there), and a regular file left incomplete is removed, so no truncated output remains.
inline void write_file(std::string const& path, std::uint8_t const* data, std::size_t n, char const* what) {
  errno = 0;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error(std::string(what) + ": cannot open '" + path + "' for writing" + system_reason(errno));
  errno = 0;
  f.write(reinterpret_cast<char const*>(data), static_cast<std::streamsize>(n));
  f.close();
  if (!f) {
    int const e = errno;
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) std::filesystem::remove(path, ec);
    throw std::runtime_error(std::string(what) + ": error writing '" + path + "'" + system_reason(e));
  }
}

inline lct::dtype parse_type(std::string const& s) {
  lct::dtype t{};
  // a usage error (exit 2), like the other options' values
  if (!lct::parse_dtype(s, t)) throw CLI::ValidationError("--dtype", "'" + s + "' is not one of bf16, fp16, fp32");
  return t;
}

/// Reads a raw array and checks its size is a whole number of elements.
inline std::vector<std::uint8_t> read_array(std::string const& path, lct::dtype t, char const* what) {
  auto b = read_file(path, what);
  if (b.size() % lct::element_bytes(t) != 0)
    throw std::invalid_argument(std::string(what) + ": '" + path + "' has " + std::to_string(b.size()) +
                                " bytes, not a multiple of " + std::to_string(lct::element_bytes(t)) + " (" +
                                std::string(lct::name(t)) + ")");
  return b;
}

inline lct::codebook read_book(std::string const& path, lct::dtype t) {
  auto b = read_file(path, "--codebook");
  lct::codebook book;
  try {
    book = lct::codebook::deserialize(b);
  } catch (lct::error const& e) {
    throw std::runtime_error("--codebook: '" + path + "': " + e.what());
  }
  if (book.type() != t)
    throw std::invalid_argument("--codebook: '" + path + "' is a " + std::string(lct::name(book.type())) +
                                " book, --dtype is " + std::string(lct::name(t)));
  return book;
}

}  // namespace lct_detail

inline void add_lct_commands(CLI::App& app) {
  namespace d = lct_detail;
  namespace lct = resilin::lct;
  auto* cmd = app.add_subcommand("lct", "losslessly compressed tensors (Huffman-coded exponents)");
  cmd->require_subcommand(1);
  auto args = std::make_shared<d::lct_args>();

  auto* cb = cmd->add_subcommand("codebook", "build a codebook from a sample array");
  cb->add_option("--dtype", args->dtype, "element type: bf16, fp16, fp32")->required();
  cb->add_option("SAMPLE", args->in, "raw little-endian sample array")->required();
  cb->add_option("BOOK", args->out, "codebook file to write")->required();
  cb->callback([args] {
    auto const t = d::parse_type(args->dtype);
    auto const x = d::read_array(args->in, t, "SAMPLE");
    // an empty sample gave a book of one key and the escape, which escapes nearly everything
    if (x.empty()) throw std::invalid_argument("SAMPLE: '" + args->in + "' is empty: a codebook needs sample values");
    auto const book = lct::codebook::from_sample(t, x.data(), x.size() / lct::element_bytes(t));
    auto const bytes = book.serialize();
    d::write_file(args->out, bytes.data(), bytes.size(), "BOOK");
  });

  auto* enc = cmd->add_subcommand("encode", "compress a raw array into an lct container");
  enc->add_option("--dtype", args->dtype, "element type: bf16, fp16, fp32")->required();
  enc->add_option("--codebook", args->book, "precomputed codebook (default: a fresh one)");
  enc->add_option("IN", args->in, "raw little-endian array")->required();
  enc->add_option("OUT", args->out, "container file to write")->required();
  enc->callback([args] {
    auto const t = d::parse_type(args->dtype);
    auto const x = d::read_array(args->in, t, "IN");
    lct::codebook book;
    if (!args->book.empty()) book = d::read_book(args->book, t);
    lct::encoded_tensor e;
    lct::encode(t, x.data(), x.size() / lct::element_bytes(t), book.empty() ? nullptr : &book, e);
    auto const c = lct::to_container(e);
    d::write_file(args->out, c.data(), c.size(), "OUT");
    std::printf("%s: %llu elements, %llu -> %zu bytes, ratio %.4f\n", args->in.c_str(),
                static_cast<unsigned long long>(e.count), static_cast<unsigned long long>(x.size()), c.size(),
                c.empty() ? 0.0 : static_cast<double>(x.size()) / static_cast<double>(c.size()));
    table_writer::finish();
  });

  auto* dec = cmd->add_subcommand("decode", "decompress an lct container into a raw array");
  auto* dec_type = dec->add_option("--dtype", args->dtype,
                                   "expected element type (bf16, fp16, fp32); the container's own "
                                   "type is used, and a different one is refused");
  dec->add_option("IN", args->in, "container file")->required();
  dec->add_option("OUT", args->out, "raw little-endian array to write")->required();
  dec->callback([args, dec_type] {
    auto const expected = dec_type->count() > 0 ? d::parse_type(args->dtype) : lct::dtype{};
    auto const c = d::read_file(args->in, "IN");
    lct::container parsed;
    std::vector<std::uint8_t> out;
    try {  // a stream can parse and still fail to decode (a code bit flipped, checksum redone)
      parsed = lct::parse_container(c);
      if (dec_type->count() > 0 && parsed.type != expected)
        throw std::invalid_argument("IN: '" + args->in + "' holds " + std::string(lct::name(parsed.type)) +
                                    " values, --dtype is " + std::string(lct::name(expected)));
      out.resize(parsed.count * lct::element_bytes(parsed.type));
      lct::decode(parsed.view(), out.data(), out.size());
    } catch (lct::error const& e) {
      throw std::runtime_error("IN: '" + args->in + "': " + e.what());
    }
    d::write_file(args->out, out.data(), out.size(), "OUT");
  });

  auto* st = cmd->add_subcommand("stats", "exponent entropy, ratio bound, achieved ratio, escape rate");
  st->add_option("--dtype", args->dtype, "element type: bf16, fp16, fp32")->required();
  st->add_option("--codebook", args->book, "measure with this codebook (default: a fresh one)");
  st->add_option("IN", args->in, "raw little-endian array")->required();
  st->callback([args] {
    auto const t = d::parse_type(args->dtype);
    auto const x = d::read_array(args->in, t, "IN");
    lct::codebook book;
    if (!args->book.empty()) book = d::read_book(args->book, t);
    lct::encoded_tensor e;
    lct::encode(t, x.data(), x.size() / lct::element_bytes(t), book.empty() ? nullptr : &book, e);
    double const H = lct::entropy_bits(e.exponents);
    double const n = static_cast<double>(e.count);
    std::printf("elements      %llu (%s)\n", static_cast<unsigned long long>(e.count), std::string(lct::name(t)).c_str());
    std::printf("entropy       %.4f bits/exponent\n", H);
    if (e.count) std::printf("bound         %.4fx (exponent-only coding)\n", lct::ratio_bound(t, H));
    else std::printf("bound         - (no elements)\n");
    std::printf("ratio         %.4fx (%llu -> %llu bytes)\n",
                e.count ? static_cast<double>(e.original_bytes()) / static_cast<double>(lct::container_size(e)) : 0.0,
                static_cast<unsigned long long>(e.original_bytes()), static_cast<unsigned long long>(lct::container_size(e)));
    std::printf("escape rate   %.6f\n", e.count ? static_cast<double>(e.escapes()) / n : 0.0);
    table_writer::finish();
  });
}

}  // namespace resilin_cli
