#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "models/hf_cache.hpp"
#include "models/safetensors.hpp"
#include "safetensors_writer.hpp"
#include "support/test_support.hpp"

namespace sparkops::models {
namespace {

Architecture config(std::string_view name) {
  const auto path =
      test::fixture(std::string("models/configs/") + std::string(name) + "/config.json");
  auto a = parse_config_json(test::slurp(path), path.string());
  EXPECT_TRUE(a) << (a ? "" : a.error().detail);
  return a ? *a : Architecture{};
}

// Real upstream config.json files reproduce the catalogue's exact totals.
TEST(ConfigJson, RealConfigsReproduceCatalogueCounts) {
  const std::pair<std::string_view, std::string_view> pairs[] = {{"Llama-3.1-8B", "Llama-3.1-8B"},
                                                                 {"Qwen2.5-7B", "Qwen2.5-7B"},
                                                                 {"gemma-2-9b", "Gemma-2-9B"},
                                                                 {"Mixtral-8x7B", "Mixtral-8x7B"},
                                                                 {"gpt-oss-20b", "gpt-oss-20b"}};
  for (const auto& [dir, name] : pairs) {
    const auto* e = find_in_catalogue(name);
    ASSERT_NE(e, nullptr) << name;
    const auto from_config = count_params(config(dir));
    const auto from_catalogue = count_params(e->arch);
    EXPECT_EQ(from_config.total, from_catalogue.total) << dir;
    EXPECT_EQ(from_config.active, from_catalogue.active) << dir;
  }
  EXPECT_EQ(count_params(config("Llama-3.1-8B")).total, 8'030'261'248u);
  EXPECT_EQ(count_params(config("Qwen2.5-7B")).total, 7'615'616'512u);
  EXPECT_EQ(count_params(config("Mixtral-8x7B")).total, 46'702'792'704u);
  EXPECT_EQ(count_params(config("gpt-oss-20b")).total, 20'914'757'184u);
}

TEST(ConfigJson, Gemma2DefaultsToTiedAndEagerAttention) {
  const auto a = config("gemma-2-9b");
  EXPECT_TRUE(a.tied_embeddings);
  EXPECT_TRUE(a.needs_eager_attention);
  EXPECT_EQ(a.head_dim, 256u);
}

TEST(ConfigJson, TruncatedIsErrorNamingTheFile) {
  const auto r = parse_config_json(R"({"hidden_size": 4096, "num_hidden)", "x/config.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("x/config.json"), std::string::npos);
}

TEST(ConfigJson, MissingFieldIsErrorNamingTheKey) {
  const auto r =
      parse_config_json(R"({"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10})", "c");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("num_attention_heads"), std::string::npos);
}

TEST(ConfigJson, NegativeValueIsError) {
  EXPECT_FALSE(parse_config_json(
      R"({"hidden_size": -64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 8})",
      "c"));
}

Architecture tiny() {
  auto a = parse_config_json(
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,
          "num_key_value_heads":2,"intermediate_size":96,"vocab_size":500,"tie_word_embeddings":false})",
      "tiny");
  return *a;
}

TEST(ModelDir, SafetensorsHeadersAgreeWithConfig) {
  test::TempDir tmp;
  const auto a = tiny();
  testing::write_sharded_model(tmp.path(), testing::llama_tensors(a), 2);
  test::write_text(
      tmp / "config.json",
      R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,
                       "num_key_value_heads":2,"intermediate_size":96,"vocab_size":500,"tie_word_embeddings":false})");
  auto m = read_model_dir(tmp.path());
  ASSERT_TRUE(m) << m.error().detail;
  ASSERT_TRUE(m->safetensors_params);
  EXPECT_EQ(*m->safetensors_params, m->shape.params.total);
  EXPECT_EQ(m->shards.size(), 2u);
  EXPECT_TRUE(m->notes.empty());
}

TEST(ModelDir, RealLlama8BConfigAgreesWithFullSizeShardHeaders) {
  // Four shards with the real tensor names and shapes; the data is a sparse hole.
  test::TempDir tmp;
  const auto a = config("Llama-3.1-8B");
  testing::write_sharded_model(tmp.path(), testing::llama_tensors(a), 4);
  std::filesystem::copy_file(test::fixture("models/configs/Llama-3.1-8B/config.json"),
                             tmp / "config.json");
  auto m = read_model_dir(tmp.path());
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_EQ(*m->safetensors_params, 8'030'261'248u);
  EXPECT_EQ(*m->checkpoint_bytes, 2u * 8'030'261'248u);
}

TEST(ModelDir, MissingShardIsError) {
  test::TempDir tmp;
  testing::write_sharded_model(tmp.path(), testing::llama_tensors(tiny()), 3);
  test::write_text(
      tmp / "config.json",
      R"({"hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,"intermediate_size":96,"vocab_size":500})");
  std::filesystem::remove(tmp / "model-00002-of-00003.safetensors");
  const auto m = read_model_dir(tmp.path());
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().detail.find("missing shard model-00002-of-00003.safetensors"),
            std::string::npos);
}

TEST(SafetensorsHeader, LengthBeyondFileSizeIsErrorWithoutAllocating) {
  test::TempDir tmp;
  testing::write_raw_safetensors(tmp / "a.safetensors", 50'000'000, "{}", 0);
  const auto r = read_safetensors_header(tmp / "a.safetensors");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("points past the end of the file"), std::string::npos);
  EXPECT_EQ(r.error().detail.find("50000000"), std::string::npos);  // the raw field is not echoed
}

TEST(SafetensorsHeader, LengthBeyond100MBIsError) {
  test::TempDir tmp;
  testing::write_raw_safetensors(tmp / "a.safetensors", 0xFFFF'FFFF'FFFF'0000ULL, "{}", 0);
  const auto r = read_safetensors_header(tmp / "a.safetensors");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::malformed);
  EXPECT_NE(r.error().detail.find("not a safetensors file"), std::string::npos);
}

// The first 8 bytes of a file that is not a safetensors file (a link to a private text file, as
// root) are never printed as an integer.
TEST(SafetensorsHeader, ForeignFileBytesAreNotEchoedAsANumber) {
  test::TempDir tmp;
  test::write_text(tmp / "secret", "root:$6$saltsalt$hashhashhash:19000:0:99999:7:::\n");
  std::filesystem::create_symlink(tmp / "secret", tmp / "model.safetensors");
  const auto r = read_safetensors_header(tmp / "model.safetensors");
  ASSERT_FALSE(r);
  std::uint64_t raw = 0;
  const std::string head = "root:$6$";
  for (int i = 7; i >= 0; --i)
    raw = (raw << 8) | static_cast<unsigned char>(head[static_cast<std::size_t>(i)]);
  EXPECT_EQ(r.error().detail.find(std::to_string(raw)), std::string::npos) << r.error().detail;
  EXPECT_NE(r.error().detail.find("not a safetensors file"), std::string::npos);
}

TEST(SafetensorsHeader, NonJsonHeaderIsError) {
  test::TempDir tmp;
  testing::write_raw_safetensors(tmp / "a.safetensors", 8, "not json", 0);
  const auto r = read_safetensors_header(tmp / "a.safetensors");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("not a JSON object"), std::string::npos);
}

TEST(SafetensorsHeader, TruncatedFileIsError) {
  test::TempDir tmp;
  test::write_text(tmp / "a.safetensors", "abc");
  EXPECT_FALSE(read_safetensors_header(tmp / "a.safetensors"));
}

TEST(SafetensorsHeader, OffsetsOutsideDataAreError) {
  const auto r = parse_safetensors_header(
      R"({"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}})", 16, "f");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("outside"), std::string::npos);
}

TEST(SafetensorsHeader, ShapeMustMatchOffsets) {
  EXPECT_FALSE(parse_safetensors_header(
      R"({"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,30]}})", 64, "f"));
  const auto ok = parse_safetensors_header(
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}})",
      32, "f");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->elements(), 16u);
  EXPECT_EQ(ok->bytes_by_dtype().at("BF16"), 32u);
}

TEST(HfCache, ResolvesRefsMainUnderHfHubCache) {
  test::TempDir tmp;
  const auto repo = tmp / "hub" / "models--meta-llama--Llama-3.1-8B";
  std::filesystem::create_directories(repo / "snapshots" / "aaa");
  std::filesystem::create_directories(repo / "snapshots" / "zzz");
  std::filesystem::create_directories(repo / "refs");
  test::write_text(repo / "refs" / "main", "aaa\n");
  HfCacheEnv env{(tmp / "hub").string(), "", ""};
  auto snap = resolve_hf_snapshot("meta-llama/Llama-3.1-8B", env);
  ASSERT_TRUE(snap) << snap.error().detail;
  EXPECT_EQ(snap->filename(), "aaa");
}

TEST(HfCache, FallsBackToHomeCacheAndLastSnapshot) {
  test::TempDir tmp;
  const auto repo = tmp / ".cache" / "huggingface" / "hub" / "models--Qwen--Qwen2.5-7B";
  std::filesystem::create_directories(repo / "snapshots" / "111");
  std::filesystem::create_directories(repo / "snapshots" / "222");
  HfCacheEnv env{"", (tmp / "nohome").string(), tmp.path().string()};
  auto snap = resolve_hf_snapshot("Qwen/Qwen2.5-7B", env);
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->filename(), "222");
  EXPECT_EQ(hf_cache_dirs(env).size(), 2u);
}

TEST(HfCache, UncachedRepoIsNotFoundAndBadIdIsInvalid) {
  HfCacheEnv env{"/nonexistent", "", ""};
  EXPECT_EQ(resolve_hf_snapshot("a/b", env).error().code, Errc::not_found);
  EXPECT_EQ(resolve_hf_snapshot("a/../b", env).error().code, Errc::invalid_argument);
  EXPECT_EQ(resolve_hf_snapshot("noslash", env).error().code, Errc::invalid_argument);
}

}  // namespace
}  // namespace sparkops::models

namespace sparkops::models {
namespace {

std::string llama_config_with(std::string_view key, std::string_view value) {
  std::string base =
      R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,)"
      R"("num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256})";
  const std::string needle = "\"" + std::string(key) + "\":";
  const auto at = base.find(needle);
  const auto end = base.find_first_of(",}", at);
  return base.substr(0, at + needle.size()) + std::string(value) + base.substr(end);
}

// The issue's inputs: a 2^52 intermediate size used to give 2.39 B parameters and "fits".
TEST(ConfigPlausibility, HugeIntermediateSizeIsRejectedNotWrapped) {
  const auto r =
      parse_config_json(llama_config_with("intermediate_size", "4503599627370496"), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::malformed);
  EXPECT_NE(r.error().detail.find("intermediate_size"), std::string::npos);
}

TEST(ConfigPlausibility, VocabTwoToThe62IsRejected) {
  const auto r = parse_config_json(llama_config_with("vocab_size", "4611686018427387904"), "c");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("vocab_size"), std::string::npos);
}

TEST(ConfigPlausibility, FieldsWithinBoundsButProductOverBoundIsRejected) {
  // Each field under its bound, the product (65536 experts of 2^24-wide MLPs) over 100 T.
  std::string text = llama_config_with("intermediate_size", "16777216");
  text.insert(text.size() - 1, R"(,"num_local_experts":65536,"num_experts_per_tok":2)");
  const auto r = parse_config_json(text, "c");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("plausibility"), std::string::npos);
}

TEST(ConfigPlausibility, RealShapesPass) {
  EXPECT_TRUE(parse_config_json(llama_config_with("hidden_size", "4096"), "c"));
}

TEST(SafetensorsHeader, ElementCountOverflowAcrossTensorsIsError) {
  // Sub-byte dtypes are not checked against data_offsets: their shapes alone must not wrap.
  const auto r = parse_safetensors_header(
      R"({"a":{"dtype":"F4","shape":[4294967296,4294967295],"data_offsets":[0,0]},)"
      R"("b":{"dtype":"F4","shape":[4294967296,4294967295],"data_offsets":[0,0]}})",
      0, "x.safetensors");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("overflows"), std::string::npos);
}

}  // namespace
}  // namespace sparkops::models
