#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "models/resolve.hpp"
#include "support/test_support.hpp"

namespace sparkops::models {
namespace {

std::filesystem::path config_fixture(std::string_view name) {
  return test::fixture(std::string("models/configs/") + std::string(name) + "/config.json");
}

TEST(Resolve, ConfigJsonPathIsAModel) {
  auto m = resolve_model_name(config_fixture("Qwen2.5-7B").string(), {});
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_EQ(m->source, ModelSource::config_file);
  EXPECT_EQ(m->shape.params.total, 7'615'616'512u);
}

TEST(Resolve, RenamedConfigFileIsReadAlone) {
  test::TempDir tmp;
  std::filesystem::copy_file(config_fixture("Llama-3.1-8B"), tmp / "llama.json");
  auto m = resolve_model_name((tmp / "llama.json").string(), {});
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_EQ(m->shape.params.total, 8'030'261'248u);
}

TEST(Resolve, MissingPathSaysNoSuchFile) {
  auto m = resolve_model_name("./no/such/config.json", {});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::not_found);
  EXPECT_NE(m.error().detail.find("no such file or directory"), std::string::npos);
}

TEST(Resolve, SymlinkLoopIsBadInputNotIoFailure) {
  test::TempDir tmp;
  std::filesystem::create_symlink(tmp / "b.json", tmp / "a.json");
  std::filesystem::create_symlink(tmp / "a.json", tmp / "b.json");
  auto m = resolve_model_name((tmp / "a.json").string(), {});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::invalid_argument);
  EXPECT_NE(m.error().detail.find("symbolic link loop"), std::string::npos);
}

TEST(Resolve, CatalogueMatchedLenientlySayingSo) {
  auto m = resolve_model_name("Qwen/Qwen2.5-7B-Instruct", {});
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_EQ(m->source, ModelSource::catalogue);
  EXPECT_EQ(m->shape.name, "Qwen2.5-7B");
  ASSERT_FALSE(m->notes.empty());
  EXPECT_NE(m->notes[0].find("Qwen2.5-7B architecture"), std::string::npos);

  auto quant = resolve_model_name("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", {});
  ASSERT_TRUE(quant) << quant.error().detail;
  EXPECT_EQ(quant->shape.name, "Llama-3.1-8B");
  EXPECT_NE(quant->notes.back().find("16-bit shape"), std::string::npos);
}

TEST(Resolve, UnknownNameListsThreeNearest) {
  auto m = resolve_model_name("Qwen2.5-8B", {});
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().detail.find("nearest: "), std::string::npos);
  EXPECT_EQ(nearest_catalogue_names("Qwen2.5-8B").size(), 3u);
  EXPECT_EQ(nearest_catalogue_names("Qwen2.5-8B").front().rfind("Qwen2.5", 0), 0u);
}

TEST(Resolve, CachedRevisionByRefAndCommitPrefix) {
  test::TempDir cache;
  const auto repo = cache / "models--org--m";
  const std::string commit = "abcdef0123456789abcdef0123456789abcdef01";
  std::filesystem::create_directories(repo / "snapshots" / commit);
  std::filesystem::create_directories(repo / "refs");
  std::filesystem::copy_file(config_fixture("Llama-3.1-8B"),
                             repo / "snapshots" / commit / "config.json");
  test::write_text(repo / "refs" / "v2", commit);
  ResolveEnv env;
  env.cache.hf_hub_cache = cache.path().string();
  for (const char* name : {"org/m", "org/m@v2", "org/m@abcdef0"}) {
    auto m = resolve_model_name(name, env);
    ASSERT_TRUE(m) << name << ": " << m.error().detail;
    EXPECT_EQ(m->source, ModelSource::hf_cache);
    EXPECT_EQ(m->revision, commit);
  }
  EXPECT_FALSE(resolve_model_name("org/m@v3", env));
}

}  // namespace
}  // namespace sparkops::models
