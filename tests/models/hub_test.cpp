#include <algorithm>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_hub.hpp"
#include "models/hub.hpp"
#include "models/resolve.hpp"
#include "support/test_support.hpp"

namespace sparkops::models {
namespace {

using testing::FakeHub;
using testing::FakeRepo;

// A tiny Llama: 2 layers of hidden 64, so every shard is a few hundred KB.
constexpr std::string_view kTinyConfig =
    R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,)"
    R"("num_key_value_heads":2,"intermediate_size":128,"vocab_size":256,"tie_word_embeddings":false})";

using Tensors = std::vector<std::pair<std::string, std::vector<std::uint64_t>>>;

Tensors layer(int l) {
  const std::string p = "model.layers." + std::to_string(l) + ".";
  return {{p + "input_layernorm.weight", {64}},      {p + "post_attention_layernorm.weight", {64}},
          {p + "self_attn.q_proj.weight", {64, 64}}, {p + "self_attn.k_proj.weight", {32, 64}},
          {p + "self_attn.v_proj.weight", {32, 64}}, {p + "self_attn.o_proj.weight", {64, 64}},
          {p + "mlp.gate_proj.weight", {128, 64}},   {p + "mlp.up_proj.weight", {128, 64}},
          {p + "mlp.down_proj.weight", {64, 128}}};
}

FakeRepo tiny_repo() {
  FakeRepo r;
  Tensors s1 = {{"model.embed_tokens.weight", {256, 64}}};
  for (auto& t : layer(0)) s1.push_back(t);
  Tensors s2 = layer(1);
  s2.push_back({"model.norm.weight", {64}});
  s2.push_back({"lm_head.weight", {256, 64}});
  nlohmann::json index = {{"metadata", {{"total_size", 0}}},
                          {"weight_map", nlohmann::json::object()}};
  for (const auto& [n, s] : s1) index["weight_map"][n] = "model-00001-of-00002.safetensors";
  for (const auto& [n, s] : s2) index["weight_map"][n] = "model-00002-of-00002.safetensors";
  r.files["config.json"] = std::string(kTinyConfig);
  r.files["model.safetensors.index.json"] = index.dump();
  r.files["model-00001-of-00002.safetensors"] = testing::safetensors_bytes(s1);
  r.files["model-00002-of-00002.safetensors"] = testing::safetensors_bytes(s2);
  r.revisions = {"main", "v1"};
  return r;
}

std::map<std::string, FakeRepo> repos() {
  std::map<std::string, FakeRepo> m;
  m["org/tiny"] = tiny_repo();
  FakeRepo gated = tiny_repo();
  gated.gated = true;
  m["org/gated"] = gated;
  FakeRepo slow = tiny_repo();
  slow.slow_ms = 1500;
  m["org/slow"] = slow;
  FakeRepo bad = tiny_repo();
  bad.files["model-00001-of-00002.safetensors"] =
      std::string("\x12\0\0\0\0\0\0\0", 8) + "{\"a\":{\"dtype\":7}}" + std::string(64, '\0');
  m["org/malformed"] = bad;
  FakeRepo single;
  single.files["config.json"] = std::string(kTinyConfig);
  single.files["model.safetensors"] = tiny_repo().files["model-00001-of-00002.safetensors"];
  m["org/single"] = single;
  return m;
}

struct Online {
  FakeHub hub{repos()};
  test::TempDir cache;
  std::unique_ptr<HttpClient> client = make_curl_client();
  ResolveEnv env() const {
    ResolveEnv e;
    e.cache.hf_hub_cache = cache.path().string();
    e.hub.offline = false;
    e.hub.endpoint = hub.endpoint();
    e.hub.client = client.get();
    e.hub.timeout = std::chrono::milliseconds(500);
    return e;
  }
};

TEST(Hub, FetchesHeadersOnlyAndTheNextRunIsOffline) {
  Online o;
  auto m = resolve_model_name("org/tiny", o.env());
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_EQ(m->source, ModelSource::hub);
  EXPECT_EQ(m->shards.size(), 2u);
  ASSERT_TRUE(m->safetensors_params);
  EXPECT_EQ(*m->safetensors_params, m->shape.params.total);
  EXPECT_EQ(m->revision, "0123456789abcdef0123456789abcdef01234567");
  // Never a weight: every answer is a config, an index, 8 bytes or a header.
  EXPECT_LT(o.hub.largest_body_served(), 4096u);
  // The standard layout: refs/main -> commit, snapshots/<commit>/config.json -> ../../blobs/<etag>.
  const auto repo = o.cache.path() / "models--org--tiny";
  EXPECT_EQ(test::slurp(repo / "refs" / "main"), m->revision);
  EXPECT_TRUE(std::filesystem::is_symlink(repo / "snapshots" / m->revision / "config.json"));
  EXPECT_EQ(test::slurp(repo / "snapshots" / m->revision / "config.json"), kTinyConfig);

  ResolveEnv offline = o.env();
  offline.hub.offline = true;
  const auto before = o.hub.requests();
  auto again = resolve_model_name("org/tiny", offline);
  ASSERT_TRUE(again) << again.error().detail;
  EXPECT_EQ(again->source, ModelSource::hf_cache);
  EXPECT_EQ(again->safetensors_params, m->safetensors_params);
  EXPECT_EQ(again->checkpoint_bytes, m->checkpoint_bytes);
  EXPECT_EQ(o.hub.requests(), before);
}

TEST(Hub, RevisionIsFetchedAndRecordedAsARef) {
  Online o;
  auto m = resolve_model_name("org/tiny@v1", o.env());
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_TRUE(std::filesystem::exists(o.cache.path() / "models--org--tiny" / "refs" / "v1"));
  auto missing = resolve_model_name("org/tiny@nope", o.env());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().detail.find("no revision"), std::string::npos)
      << missing.error().detail;
}

TEST(Hub, SingleFileCheckpointReadsModelSafetensors) {
  Online o;
  auto m = resolve_model_name("org/single", o.env());
  ASSERT_TRUE(m) << m.error().detail;
  ASSERT_EQ(m->shards.size(), 1u);
  EXPECT_EQ(m->shards[0].file, "model.safetensors");
}

TEST(Hub, GatedWithoutTokenIsOneLineNamingTheRepo) {
  Online o;
  auto m = resolve_model_name("org/gated", o.env());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::permission_denied);
  EXPECT_NE(m.error().detail.find("org/gated: gated"), std::string::npos) << m.error().detail;
  EXPECT_NE(m.error().detail.find("HF_TOKEN"), std::string::npos);
  EXPECT_EQ(m.error().detail.find('\n'), std::string::npos);

  ResolveEnv with_token = o.env();
  with_token.hub.token = "hf_good";
  auto ok = resolve_model_name("org/gated", with_token);
  ASSERT_TRUE(ok) << ok.error().detail;
  with_token.hub.token = "hf_wrong";
  test::TempDir other;
  with_token.cache.hf_hub_cache = other.path().string();
  auto denied = resolve_model_name("org/gated", with_token);
  ASSERT_FALSE(denied);
  EXPECT_NE(denied.error().detail.find("has no access"), std::string::npos);
}

TEST(Hub, MissingRepoSaysSoAndListsNearestCatalogueNames) {
  Online o;
  auto m = resolve_model_name("org/does-not-exist", o.env());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::not_found);
  EXPECT_NE(m.error().detail.find("no such model repo"), std::string::npos) << m.error().detail;
  EXPECT_NE(m.error().detail.find("nearest: "), std::string::npos);
}

TEST(Hub, SlowHubIsATimeoutLine) {
  Online o;
  auto m = resolve_model_name("org/slow", o.env());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::io);
  EXPECT_NE(m.error().detail.find("org/slow: "), std::string::npos);
  EXPECT_NE(m.error().detail.find("did not answer within 500 ms"), std::string::npos)
      << m.error().detail;
}

TEST(Hub, MalformedShardHeaderIsReportedAndNothingIsCached) {
  Online o;
  auto m = resolve_model_name("org/malformed", o.env());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, Errc::malformed);
  EXPECT_NE(m.error().detail.find("org/malformed"), std::string::npos) << m.error().detail;
  EXPECT_FALSE(std::filesystem::exists(o.cache.path() / "models--org--malformed"));
}

TEST(Hub, KnownArchitectureFallsBackToTheCatalogueWhenTheHubCannotAnswer) {
  Online o;
  auto m = resolve_model_name("Qwen/Qwen2.5-7B-Instruct", o.env());  // not on the stand-in hub
  ASSERT_TRUE(m) << m.error().detail;
  EXPECT_EQ(m->source, ModelSource::catalogue);
  EXPECT_EQ(m->shape.name, "Qwen2.5-7B");
  ASSERT_FALSE(m->notes.empty());
  EXPECT_NE(m->notes[0].find("Instruct ignored"), std::string::npos) << m->notes[0];
}

TEST(HubEnvironment, OfflineEndpointAndTokenFile) {
  test::TempDir home;
  test::write_text(home / "token", "hf_from_file\n");
  const auto h =
      hub_access_from_env({"https://mirror.example/", "", "", home.path().string(), "", "1"});
  EXPECT_TRUE(h.offline);
  EXPECT_EQ(h.endpoint, "https://mirror.example");
  EXPECT_EQ(h.token, "hf_from_file");
  const auto env_token = hub_access_from_env({"", " hf_env ", "", home.path().string(), "", ""});
  EXPECT_FALSE(env_token.offline);
  EXPECT_EQ(env_token.token, "hf_env");
  EXPECT_EQ(env_token.endpoint, "https://huggingface.co");
}

TEST(HubCli, PlanOrgNameOnlineThenOffline) {
  FakeHub hub(repos());
  test::TempDir cache;
  const std::string root = test::fixture("plan/root-spark").string();
  const std::map<std::string, std::string> env = {{"HF_ENDPOINT", hub.endpoint()},
                                                  {"HF_HUB_CACHE", cache.path().string()}};
  const auto r = test::run_sparkops({"--root", root, "plan", "org/tiny", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["model"]["source"], "hub");
  auto offline = env;
  offline["HF_HUB_OFFLINE"] = "1";
  offline["HF_ENDPOINT"] = "http://127.0.0.1:9";  // nothing listens: proves no request is made
  const auto again = test::run_sparkops({"--root", root, "plan", "org/tiny", "--json"}, offline);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["model"]["source"], "hf_cache");
  const auto gated = test::run_sparkops({"--root", root, "plan", "org/gated"}, env);
  EXPECT_EQ(gated.exit_code, 2);
  EXPECT_NE(gated.err.find("org/gated: gated"), std::string::npos) << gated.err;
}

// The transport reports an answer's bytes as they arrive (libcurl's write callback), not only when
// it is complete: a 1 MiB file comes in many calls, growing, ending at its size.
TEST(Hub, CurlReportsBodyBytesAsTheyArrive) {
  FakeRepo repo;
  repo.files["big.bin"] = std::string(1 << 20, 'x');
  FakeHub hub({{"org/big", repo}});
  const auto client = make_curl_client();
  std::vector<std::uint64_t> seen;
  HttpRequest req;
  req.url = hub.endpoint() + "/org/big/resolve/main/big.bin";
  req.on_body_bytes = [&](std::uint64_t n) { seen.push_back(n); };
  const auto r = client->get(req);
  ASSERT_TRUE(r) << r.error().detail;
  ASSERT_EQ(r->status, 200);
  ASSERT_EQ(r->body.size(), 1u << 20);
  ASSERT_GT(seen.size(), 1u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_LT(seen.front(), 1u << 20);
  EXPECT_EQ(seen.back(), 1u << 20);
}

}  // namespace
}  // namespace sparkops::models
