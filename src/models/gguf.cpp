#include "models/gguf.hpp"

#include <algorithm>
#include <bit>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "base/text.hpp"
#include "models/checked.hpp"

namespace sparkops::models {

namespace fs = std::filesystem;

std::optional<GgmlType> ggml_type(std::uint32_t id) {
  // ggml/include/ggml.h enum ggml_type; block structs and sizes from ggml/src/ggml-common.h
  // (e.g. block_q4_K: d, dmin (2 x fp16) + scales[12] + qs[128] = 144 bytes per 256 values).
  static constexpr GgmlType kTypes[] = {
      {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
      {3, "Q4_1", 32, 20},      {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
      {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},      {10, "Q2_K", 256, 84},
      {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
      {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
      {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
      {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
      {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
      {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},
      {29, "IQ1_M", 256, 56},   {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
      {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},    {40, "NVFP4", 64, 36},
  };
  for (const auto& t : kTypes) {
    if (t.id == id) return t;
  }
  return std::nullopt;
}

std::optional<std::string_view> gguf_file_type_name(std::uint64_t file_type) {
  // llama.cpp include/llama.h enum llama_ftype (LLAMA_FTYPE_MOSTLY_*).
  static constexpr std::pair<std::uint64_t, std::string_view> kNames[] = {
      {0, "F32"},      {1, "F16"},      {2, "Q4_0"},       {3, "Q4_1"},    {7, "Q8_0"},
      {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},      {11, "Q3_K_S"}, {12, "Q3_K_M"},
      {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"},    {16, "Q5_K_S"}, {17, "Q5_K_M"},
      {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"},    {21, "Q2_K_S"}, {22, "IQ3_XS"},
      {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"},    {26, "IQ3_S"},  {27, "IQ3_M"},
      {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"},    {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"},
  };
  for (const auto& [id, name] : kNames) {
    if (id == file_type) return name;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> GgufFile::uint_value(const std::string& key) const {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return std::nullopt;
  if (const auto* u = std::get_if<std::uint64_t>(&it->second)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&it->second); i && *i >= 0) {
    return static_cast<std::uint64_t>(*i);
  }
  if (const auto* a = std::get_if<GgufArrayInfo>(&it->second)) return a->max_uint;
  return std::nullopt;
}

std::optional<std::string> GgufFile::string_value(const std::string& key) const {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  return std::nullopt;
}

namespace {

// GGUF value types (gguf.h enum gguf_type).
enum : std::uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

std::uint64_t scalar_size(std::uint32_t t) {
  switch (t) {
    case kU8:
    case kI8:
    case kBool:
      return 1;
    case kU16:
    case kI16:
      return 2;
    case kU32:
    case kI32:
    case kF32:
      return 4;
    case kU64:
    case kI64:
    case kF64:
      return 8;
    default:
      return 0;
  }
}

class Cursor {
 public:
  Cursor(std::string_view bytes, std::uint64_t file_size, std::string_view source)
      : b_(bytes), file_size_(file_size), source_(source) {}

  std::uint64_t pos() const { return pos_; }

  Error short_read() const {
    if (b_.size() < file_size_) {
      return {Errc::too_large,
              fmt::format("{}: GGUF header continues past the {} bytes read", source_, b_.size())};
    }
    return {Errc::malformed, fmt::format("{}: truncated GGUF header at byte {}", source_, pos_)};
  }
  Error bad(std::string_view what) const {
    return {Errc::malformed, fmt::format("{}: GGUF header at byte {}: {}", source_, pos_, what)};
  }

  Result<std::uint64_t> uint(std::uint64_t size) {
    if (b_.size() - pos_ < size) return tl::unexpected(short_read());
    std::uint64_t v = 0;
    for (std::uint64_t i = size; i-- > 0;) {
      v = (v << 8) | static_cast<unsigned char>(b_[static_cast<std::size_t>(pos_ + i)]);
    }
    pos_ += size;
    return v;
  }
  Result<std::string> string() {
    auto len = uint(8);
    if (!len) return tl::unexpected(len.error());
    if (*len > b_.size() - pos_) {
      // A length beyond the whole file is malformed, whatever was read.
      if (*len > file_size_ - std::min(file_size_, pos_)) {
        return tl::unexpected(bad("string length past the end of the file"));
      }
      return tl::unexpected(short_read());
    }
    std::string s(b_.substr(static_cast<std::size_t>(pos_), static_cast<std::size_t>(*len)));
    pos_ += *len;
    return s;
  }
  Status skip(std::uint64_t n) {
    if (n > b_.size() - pos_) return tl::unexpected(short_read());
    pos_ += n;
    return {};
  }

 private:
  std::string_view b_;
  std::uint64_t file_size_;
  std::string_view source_;
  std::uint64_t pos_ = 0;
};

Result<GgufValue> read_value(Cursor& c, std::uint32_t type, int depth) {
  switch (type) {
    case kU8:
    case kU16:
    case kU32:
    case kU64: {
      auto v = c.uint(scalar_size(type));
      if (!v) return tl::unexpected(v.error());
      return GgufValue{*v};
    }
    case kI8:
    case kI16:
    case kI32:
    case kI64: {
      const std::uint64_t size = scalar_size(type);
      auto v = c.uint(size);
      if (!v) return tl::unexpected(v.error());
      std::uint64_t bits = *v;
      if (size < 8 && ((bits >> (8 * size - 1)) & 1) != 0) bits |= ~0ULL << (8 * size);
      const auto value = std::bit_cast<std::int64_t>(bits);
      return GgufValue{value};
    }
    case kF32:
    case kF64: {
      auto v = c.uint(scalar_size(type));
      if (!v) return tl::unexpected(v.error());
      if (type == kF32) {
        const auto bits = static_cast<std::uint32_t>(*v);
        return GgufValue{static_cast<double>(std::bit_cast<float>(bits))};
      }
      return GgufValue{std::bit_cast<double>(*v)};
    }
    case kBool: {
      auto v = c.uint(1);
      if (!v) return tl::unexpected(v.error());
      if (*v > 1) return tl::unexpected(c.bad("bool value is neither 0 nor 1"));
      return GgufValue{*v == 1};
    }
    case kString: {
      auto s = c.string();
      if (!s) return tl::unexpected(s.error());
      return GgufValue{std::move(*s)};
    }
    case kArray: {
      if (depth > 1) return tl::unexpected(c.bad("arrays nested deeper than two levels"));
      auto et = c.uint(4);
      if (!et) return tl::unexpected(et.error());
      auto count = c.uint(8);
      if (!count) return tl::unexpected(count.error());
      GgufArrayInfo info{static_cast<std::uint32_t>(*et), *count, std::nullopt};
      const std::uint64_t size = scalar_size(info.element_type);
      if (size > 0) {
        const auto total = checked_mul(size, *count);
        if (!total) return tl::unexpected(c.bad("array size overflows"));
        const bool unsigned_ints = info.element_type == kU8 || info.element_type == kU16 ||
                                   info.element_type == kU32 || info.element_type == kU64;
        if (unsigned_ints && *count <= (1U << 16)) {
          // Small integer arrays are per-layer values (head_count_kv of hybrid models): keep the
          // max.
          std::uint64_t max = 0;
          for (std::uint64_t i = 0; i < *count; ++i) {
            auto v = c.uint(size);
            if (!v) return tl::unexpected(v.error());
            max = std::max(max, *v);
          }
          info.max_uint = max;
        } else if (auto s = c.skip(*total); !s) {
          return tl::unexpected(s.error());
        }
      } else if (info.element_type == kString || info.element_type == kArray) {
        for (std::uint64_t i = 0; i < *count; ++i) {
          auto v = read_value(c, info.element_type, depth + 1);
          if (!v) return tl::unexpected(v.error());
        }
      } else {
        return tl::unexpected(c.bad(fmt::format("unknown array element type {}", *et)));
      }
      return GgufValue{info};
    }
    default:
      return tl::unexpected(c.bad(fmt::format("unknown value type {}", type)));
  }
}

}  // namespace

Result<GgufFile> parse_gguf(std::string_view bytes, std::uint64_t file_size,
                            std::string_view source) {
  if (file_size < bytes.size()) file_size = bytes.size();
  Cursor c(bytes, file_size, source);
  if (bytes.substr(0, 4) != "GGUF") {
    if (bytes.size() < 4 && file_size > bytes.size()) return tl::unexpected(c.short_read());
    return fail(Errc::malformed, fmt::format("{}: not a GGUF file (no GGUF magic)", source));
  }
  (void)c.skip(4);
  GgufFile f;
  auto version = c.uint(4);
  if (!version) return tl::unexpected(version.error());
  if (*version < 2 || *version > 3) {
    return fail(
        Errc::unsupported,
        fmt::format("{}: GGUF version {} (sparkops reads versions 2 and 3)", source, *version));
  }
  f.version = static_cast<std::uint32_t>(*version);
  auto n_tensors = c.uint(8);
  if (!n_tensors) return tl::unexpected(n_tensors.error());
  auto n_kv = c.uint(8);
  if (!n_kv) return tl::unexpected(n_kv.error());
  if (*n_tensors > kMaxGgufTensors) return tl::unexpected(c.bad("tensor count over 2^20"));
  if (*n_kv > kMaxGgufKeyValues) return tl::unexpected(c.bad("key/value count over 2^20"));

  for (std::uint64_t i = 0; i < *n_kv; ++i) {
    auto key = c.string();
    if (!key) return tl::unexpected(key.error());
    auto type = c.uint(4);
    if (!type) return tl::unexpected(type.error());
    auto value = read_value(c, static_cast<std::uint32_t>(*type), 0);
    if (!value) return tl::unexpected(value.error());
    if (!f.metadata.emplace(*key, std::move(*value)).second) {
      return tl::unexpected(c.bad(fmt::format("duplicate key {}", quote_for_message(*key))));
    }
  }
  if (const auto a = f.uint_value("general.alignment")) {
    // gguf.cpp: the alignment must be a non-zero power of two.
    if (*a == 0 || (*a & (*a - 1)) != 0 || *a > (1U << 20)) {
      return tl::unexpected(c.bad("general.alignment is not a power of two"));
    }
    f.alignment = *a;
  }

  f.tensors.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*n_tensors, 4096)));
  for (std::uint64_t i = 0; i < *n_tensors; ++i) {
    GgufTensor t;
    auto name = c.string();
    if (!name) return tl::unexpected(name.error());
    t.name = std::move(*name);
    auto n_dims = c.uint(4);
    if (!n_dims) return tl::unexpected(n_dims.error());
    if (*n_dims == 0 || *n_dims > 4) {  // GGML_MAX_DIMS
      return tl::unexpected(c.bad(fmt::format("tensor {}: {} dimensions (1 to 4 allowed)",
                                              quote_for_message(t.name), *n_dims)));
    }
    t.elements = 1;
    for (std::uint64_t d = 0; d < *n_dims; ++d) {
      auto ne = c.uint(8);
      if (!ne) return tl::unexpected(ne.error());
      t.shape.push_back(*ne);
      const auto e = checked_mul(t.elements, *ne);
      if (!e || static_cast<std::int64_t>(*e) < 0) {  // ggml keeps ne as int64
        return tl::unexpected(
            c.bad(fmt::format("tensor {}: element count overflows", quote_for_message(t.name))));
      }
      t.elements = *e;
    }
    auto type = c.uint(4);
    if (!type) return tl::unexpected(type.error());
    t.type = static_cast<std::uint32_t>(*type);
    const auto info = ggml_type(t.type);
    if (!info) {
      return tl::unexpected(
          c.bad(fmt::format("tensor {}: unknown ggml type {}", quote_for_message(t.name), t.type)));
    }
    if (t.shape[0] % info->block != 0) {
      return tl::unexpected(
          c.bad(fmt::format("tensor {}: first dimension {} is not a multiple of the {} block {}",
                            quote_for_message(t.name), t.shape[0], info->name, info->block)));
    }
    auto offset = c.uint(8);
    if (!offset) return tl::unexpected(offset.error());
    t.offset = *offset;
    if (t.offset % f.alignment != 0) {
      return tl::unexpected(c.bad(fmt::format("tensor {}: offset not aligned to {}",
                                              quote_for_message(t.name), f.alignment)));
    }
    const auto bytes_t = checked_mul(t.elements / info->block, info->bytes);
    if (!bytes_t) {
      return tl::unexpected(
          c.bad(fmt::format("tensor {}: byte size overflows", quote_for_message(t.name))));
    }
    t.bytes = *bytes_t;
    const auto sum = checked_add(f.weight_bytes, t.bytes);
    const auto elems = checked_add(f.weight_elements, t.elements);
    if (!sum || !elems) return tl::unexpected(c.bad("tensor sizes overflow"));
    f.weight_bytes = *sum;
    f.weight_elements = *elems;
    f.bytes_by_type[std::string(info->name)] += t.bytes;
    f.tensors.push_back(std::move(t));
  }
  f.data_offset = ceil_div(c.pos(), f.alignment) * f.alignment;
  const std::uint64_t data_size = file_size > f.data_offset ? file_size - f.data_offset : 0;
  for (const auto& t : f.tensors) {
    const auto end = checked_add(t.offset, t.bytes);
    if (!end || *end > data_size) {
      return fail(Errc::malformed,
                  fmt::format("{}: tensor {} lies past the end of the file (truncated download?)",
                              source, quote_for_message(t.name)));
    }
  }
  return f;
}

Result<GgufFile> read_gguf(const fs::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    return fail(ec ? Errc::not_found : Errc::invalid_argument,
                fmt::format("{}: not a regular file", name));
  }
  const std::uint64_t size = fs::file_size(file, ec);
  if (ec) return fail(Errc::io, fmt::format("{}: {}", name, ec.message()));
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(Errc::permission_denied, fmt::format("{}: cannot open", name));
  std::string buf;
  // Headers are mostly the tokenizer (a few MB); read more only when the header says so.
  for (std::uint64_t want = 16ULL << 20;; want *= 4) {
    const std::uint64_t n = std::min({want, size, kMaxGgufHeaderBytes});
    const std::size_t have = buf.size();
    buf.resize(static_cast<std::size_t>(n));
    in.read(buf.data() + have, static_cast<std::streamsize>(n - have));
    if (static_cast<std::uint64_t>(in.gcount()) != n - have) {
      return fail(Errc::io, fmt::format("{}: short read", name));
    }
    auto parsed = parse_gguf(buf, size, name);
    if (parsed || parsed.error().code != Errc::too_large) return parsed;
    if (n == size || n == kMaxGgufHeaderBytes) {
      return fail(Errc::too_large, fmt::format("{}: GGUF header larger than the {} MB bound", name,
                                               kMaxGgufHeaderBytes >> 20));
    }
  }
}

}  // namespace sparkops::models
