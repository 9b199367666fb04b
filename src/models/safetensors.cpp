#include "models/safetensors.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_io.hpp"
#include "base/text.hpp"
#include "models/quantization.hpp"

namespace sparkops::models {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::optional<std::uint64_t> dtype_bytes(std::string_view d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2" || d == "F8_E8M0") {
    return 1;
  }
  return std::nullopt;  // sub-byte or unknown: size checked only against the data bounds
}

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

// Adds v to acc; false (acc unspecified) when the sum overflows.
bool add_into(std::uint64_t& acc, std::uint64_t v) {
  return !__builtin_add_overflow(acc, v, &acc);
}

}  // namespace

std::uint64_t SafetensorsHeader::elements() const {
  std::uint64_t n = 0;
  for (const auto& t : tensors) n += t.elements;
  return n;
}

std::map<std::string, std::uint64_t> SafetensorsHeader::bytes_by_dtype() const {
  std::map<std::string, std::uint64_t> m;
  for (const auto& t : tensors) m[t.dtype] += t.data_end - t.data_begin;
  return m;
}

Result<SafetensorsHeader> parse_safetensors_header(std::string_view text, std::uint64_t data_size,
                                                   std::string_view source) {
  const json root = json::parse(text.begin(), text.end(), nullptr, false);
  if (root.is_discarded() || !root.is_object()) {
    return fail(Errc::malformed,
                fmt::format("{}: safetensors header is not a JSON object", source));
  }
  SafetensorsHeader h;
  h.header_bytes = text.size();
  std::uint64_t total_elements = 0;
  for (const auto& [name, t] : root.items()) {
    if (name == "__metadata__") continue;
    const std::string& tensor_name = name;  // clang 14 cannot capture a structured binding
    const auto bad = [&](std::string_view what) {
      return fail(Errc::malformed,
                  fmt::format("{}: tensor {}: {}", source, quote_for_message(tensor_name), what));
    };
    if (!t.is_object()) return bad("not an object");
    const auto dt = t.find("dtype");
    const auto sh = t.find("shape");
    const auto off = t.find("data_offsets");
    if (dt == t.end() || !dt->is_string()) return bad("missing dtype");
    if (sh == t.end() || !sh->is_array()) return bad("missing shape");
    if (off == t.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned()) {
      return bad("missing or invalid data_offsets");
    }
    TensorInfo info;
    info.name = name;
    info.dtype = dt->get<std::string>();
    info.elements = 1;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) return bad("shape is not a list of sizes");
      info.shape.push_back(d.get<std::uint64_t>());
      if (mul_overflows(info.elements, info.shape.back(), info.elements))
        return bad("shape overflows");
    }
    info.data_begin = (*off)[0].get<std::uint64_t>();
    info.data_end = (*off)[1].get<std::uint64_t>();
    if (info.data_begin > info.data_end || info.data_end > data_size) {
      return bad(fmt::format("data_offsets [{}, {}] outside the {} data bytes", info.data_begin,
                             info.data_end, data_size));
    }
    if (const auto size = dtype_bytes(info.dtype)) {
      std::uint64_t expected = 0;
      if (mul_overflows(info.elements, *size, expected) ||
          expected != info.data_end - info.data_begin) {
        return bad("data_offsets do not match dtype and shape");
      }
    }
    if (!add_into(total_elements, info.elements)) return bad("element count overflows");
    h.data_bytes = std::max(h.data_bytes, info.data_end);
    h.tensors.push_back(std::move(info));
  }
  std::sort(h.tensors.begin(), h.tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  return h;
}

Result<SafetensorsHeader> read_safetensors_header(const fs::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  const std::uint64_t file_size = fs::file_size(file, ec);
  if (ec) return fail(Errc::not_found, fmt::format("{}: {}", name, ec.message()));
  if (file_size < 8)
    return fail(Errc::malformed, fmt::format("{}: truncated (no header length)", name));
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(Errc::io, fmt::format("{}: cannot open", name));
  unsigned char len_bytes[8] = {};
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  if (!in) return fail(Errc::io, fmt::format("{}: cannot read the header length", name));
  std::uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | len_bytes[i];  // little-endian
  // Both bounds are checked before anything is allocated by the untrusted length.
  // The length field is the file's own bytes: it is never echoed (a path that is not a
  // safetensors file, e.g. a link to a private file, must not leak its first 8 bytes as a number).
  if (len > kMaxSafetensorsHeaderBytes) {
    return fail(Errc::malformed,
                fmt::format("{}: not a safetensors file (its header-length field is over the "
                            "100 MB bound)",
                            name));
  }
  if (len > file_size - 8) {
    return fail(Errc::malformed,
                fmt::format("{}: not a safetensors file, or truncated (its header-length field "
                            "points past the end of the file)",
                            name));
  }
  std::string text(static_cast<std::size_t>(len), '\0');
  in.read(text.data(), static_cast<std::streamsize>(len));
  if (!in) return fail(Errc::io, fmt::format("{}: header shorter than its length", name));
  return parse_safetensors_header(text, file_size - 8 - len, name);
}

Result<ResolvedModel> read_model_dir(const fs::path& dir, const ModelDirOptions& options) {
  ResolvedModel m;
  m.source = ModelSource::directory;
  m.location = dir.string();
  const fs::path config_path =
      options.config_path.empty() ? dir / "config.json" : options.config_path;
  auto config_text = read_file(config_path, 4 * 1024 * 1024);
  if (!config_text) return tl::unexpected(config_text.error());
  auto arch = parse_config_json(*config_text, config_path.string());
  if (!arch) return tl::unexpected(arch.error());
  m.shape.arch = *arch;
  m.shape.params = count_params(*arch);
  auto quant = parse_quantization_config(*config_text, config_path.string());
  if (!quant) return tl::unexpected(quant.error());
  m.shape.quant = *quant;
  m.shape.name = dir.filename().string();
  if (m.shape.name.empty()) m.shape.name = dir.parent_path().filename().string();

  std::vector<std::string> shard_names;
  const fs::path index_path = dir / "model.safetensors.index.json";
  std::error_code ec;
  if (options.config_only) {
    // shard_names stays empty: counts come from the config alone.
  } else if (fs::exists(index_path, ec)) {
    auto index_text = read_file(index_path, 64 * 1024 * 1024);
    if (!index_text) return tl::unexpected(index_text.error());
    const json index = json::parse(index_text->begin(), index_text->end(), nullptr, false);
    if (index.is_discarded() || !index.is_object() || !index.contains("weight_map") ||
        !index["weight_map"].is_object()) {
      return fail(Errc::malformed,
                  fmt::format("{}: no \"weight_map\" object", index_path.string()));
    }
    std::set<std::string> files;
    for (const auto& [tensor, file] : index["weight_map"].items()) {
      if (!file.is_string()) {
        return fail(Errc::malformed, fmt::format("{}: {}: shard name is not a string",
                                                 index_path.string(), quote_for_message(tensor)));
      }
      const std::string f = file.get<std::string>();
      if (f.find('/') != std::string::npos || f == "..") {
        return fail(Errc::malformed, fmt::format("{}: shard {} is not a plain file name",
                                                 index_path.string(), quote_for_message(f)));
      }
      files.insert(f);
    }
    shard_names.assign(files.begin(), files.end());
  } else {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".safetensors")
        shard_names.push_back(entry.path().filename().string());
    }
    for (const auto& [shard, header] : options.remote_headers) {
      if (std::find(shard_names.begin(), shard_names.end(), shard) == shard_names.end()) {
        shard_names.push_back(shard);
      }
    }
    std::sort(shard_names.begin(), shard_names.end());
  }
  if (shard_names.empty()) {
    m.notes.push_back("no safetensors files: counts from config.json only");
    if (m.shape.quant) {
      if (auto ok = derive_quantized_bytes(m.shape.arch, *m.shape.quant); !ok) {
        return fail(Errc::malformed,
                    fmt::format("{}: {}", config_path.string(), ok.error().detail));
      }
    }
    return m;
  }
  std::uint64_t elements = 0;
  std::uint64_t data = 0;
  std::vector<std::string> absent;
  for (const auto& shard : shard_names) {
    const fs::path p = dir / shard;
    Result<SafetensorsHeader> header = fail(Errc::not_found, "");
    std::uint64_t file_size = 0;
    if (fs::exists(p, ec)) {
      header = read_safetensors_header(p);
      file_size = fs::file_size(p, ec);
    } else if (const auto it = options.remote_headers.find(shard);
               it != options.remote_headers.end()) {
      // Fetched with range requests; data_size checked against the remote file size.
      const std::uint64_t overhead = 8 + it->second.header_json.size();
      if (it->second.file_size < overhead) {
        return fail(Errc::malformed, fmt::format("{}: {}: remote size smaller than its header",
                                                 dir.string(), shard));
      }
      header =
          parse_safetensors_header(it->second.header_json, it->second.file_size - overhead, shard);
      file_size = it->second.file_size;
    } else if (options.missing_shards == MissingShards::note) {
      absent.push_back(shard);
      continue;
    } else {
      return fail(Errc::not_found, fmt::format("{}: missing shard {}", dir.string(), shard));
    }
    if (!header) return tl::unexpected(header.error());
    if (__builtin_add_overflow(elements, header->elements(), &elements) ||
        __builtin_add_overflow(data, header->data_bytes, &data)) {
      return fail(Errc::malformed, fmt::format("{}: tensor sizes overflow", dir.string()));
    }
    m.shards.push_back({shard, file_size});
  }
  if (!absent.empty()) {
    m.notes.push_back(fmt::format(
        "{} of {} shards not downloaded: {}", absent.size(), shard_names.size(),
        m.shards.empty() ? "counts from config.json only" : "sizes from the shards present"));
    if (m.shards.empty()) {
      if (m.shape.quant) {
        if (auto ok = derive_quantized_bytes(m.shape.arch, *m.shape.quant); !ok) {
          return fail(Errc::malformed,
                      fmt::format("{}: {}", config_path.string(), ok.error().detail));
        }
      }
      return m;
    }
  }
  m.safetensors_params = elements;
  m.checkpoint_bytes = data;
  if (m.shape.quant) {
    // The headers give every stored tensor's exact byte range: the quantized weights as loaded.
    m.shape.quant->weight_bytes = data;
    m.shape.quant->exact = true;
  } else if (elements != m.shape.params.total) {
    m.notes.push_back(fmt::format(
        "safetensors headers hold {} elements, config.json gives {} parameters (quantized or "
        "packed tensors, or extra modules); training terms use config.json, the load transient "
        "uses the shard sizes",
        elements, m.shape.params.total));
  }
  return m;
}

}  // namespace sparkops::models
