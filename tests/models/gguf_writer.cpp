#include "gguf_writer.hpp"

#include <fstream>
#include <stdexcept>

namespace sparkops::models::testing {

namespace {

// block size and bytes per block, written out here from ggml-common.h independently of the
// parser's table (a test must not read the value it checks from the code under test).
std::pair<std::uint64_t, std::uint64_t> block_of(std::uint32_t type) {
  switch (type) {
    case 0:
      return {1, 4};  // F32
    case 1:
      return {1, 2};  // F16
    case 2:
      return {32, 18};  // Q4_0: fp16 d + 16 nibble bytes
    case 8:
      return {32, 34};  // Q8_0: fp16 d + 32 int8
    case 12:
      return {256, 144};  // Q4_K
    case 13:
      return {256, 176};  // Q5_K
    case 14:
      return {256, 210};  // Q6_K
    case 30:
      return {1, 2};  // BF16
    case 39:
      return {32, 17};  // MXFP4
    default:
      throw std::logic_error("gguf_writer: type not in the test table");
  }
}

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_str(std::string& out, const std::string& s) {
  put(out, s.size(), 8);
  out += s;
}

}  // namespace

std::string gguf_header_bytes(const std::vector<GgufKv>& kvs,
                              const std::vector<GgufTensorSpec>& tensors, std::uint64_t* data_bytes,
                              std::uint32_t version) {
  std::string out = "GGUF";
  put(out, version, 4);
  put(out, tensors.size(), 8);
  put(out, kvs.size(), 8);
  for (const auto& kv : kvs) {
    put_str(out, kv.key);
    if (const auto* u32 = std::get_if<std::uint32_t>(&kv.value)) {
      put(out, 4, 4);
      put(out, *u32, 4);
    } else if (const auto* u64 = std::get_if<std::uint64_t>(&kv.value)) {
      put(out, 10, 4);
      put(out, *u64, 8);
    } else if (const auto* f = std::get_if<float>(&kv.value)) {
      put(out, 6, 4);
      std::uint32_t bits = 0;
      static_assert(sizeof bits == sizeof *f);
      __builtin_memcpy(&bits, f, sizeof bits);
      put(out, bits, 4);
    } else if (const auto* s = std::get_if<std::string>(&kv.value)) {
      put(out, 8, 4);
      put_str(out, *s);
    } else if (const auto* strs = std::get_if<std::vector<std::string>>(&kv.value)) {
      put(out, 9, 4);
      put(out, 8, 4);
      put(out, strs->size(), 8);
      for (const auto& e : *strs) put_str(out, e);
    } else if (const auto* ints = std::get_if<std::vector<std::uint32_t>>(&kv.value)) {
      put(out, 9, 4);
      put(out, 4, 4);
      put(out, ints->size(), 8);
      for (const auto e : *ints) put(out, e, 4);
    }
  }
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    put_str(out, t.name);
    put(out, t.ne.size(), 4);
    std::uint64_t n = 1;
    for (const auto d : t.ne) {
      put(out, d, 8);
      n *= d;
    }
    put(out, t.type, 4);
    put(out, offset, 8);
    const auto [block, bytes] = block_of(t.type);
    offset += (n / block) * bytes;
    offset = (offset + 31) / 32 * 32;  // GGUFWriter pads every tensor to the alignment
  }
  while (out.size() % 32 != 0) out += '\0';
  if (data_bytes != nullptr) *data_bytes = offset;
  return out;
}

void write_gguf(const std::filesystem::path& path, const std::vector<GgufKv>& kvs,
                const std::vector<GgufTensorSpec>& tensors) {
  std::uint64_t data = 0;
  const std::string header = gguf_header_bytes(kvs, tensors, &data);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
  }
  std::filesystem::resize_file(path, header.size() + data);
}

}  // namespace sparkops::models::testing
