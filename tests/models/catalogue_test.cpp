#include <gtest/gtest.h>

#include "models/catalogue.hpp"
#include "models/model_shape.hpp"

namespace sparkops::models {
namespace {

ParamCounts counts(std::string_view name) {
  const auto* e = find_in_catalogue(name);
  EXPECT_NE(e, nullptr) << name;
  return e == nullptr ? ParamCounts{} : count_params(e->arch);
}

// Every catalogue model's total, derived from its architecture. Where an exact published figure
// exists (model card, safetensors metadata or the paper) it is the same number; docs/estimator.md
// says which ones are verified against a published exact count.
TEST(Catalogue, ParameterTotalsReproduceOfficialCounts) {
  const std::pair<std::string_view, std::uint64_t> expected[] = {
      {"Llama-3.2-1B", 1'235'814'400},     {"Llama-3.2-3B", 3'212'749'824},
      {"Llama-3.1-8B", 8'030'261'248},     {"Llama-3.1-70B", 70'553'706'496},
      {"Llama-3.1-405B", 405'853'388'800}, {"Llama-3.3-70B", 70'553'706'496},
      {"Llama-2-7B", 6'738'415'616},       {"Llama-2-13B", 13'015'864'320},
      {"Mistral-7B", 7'241'732'096},       {"Ministral-8B", 8'019'808'256},
      {"Mixtral-8x7B", 46'702'792'704},    {"Qwen2.5-0.5B", 494'032'768},
      {"Qwen2.5-1.5B", 1'543'714'304},     {"Qwen2.5-3B", 3'085'938'688},
      {"Qwen2.5-7B", 7'615'616'512},       {"Qwen2.5-14B", 14'770'033'664},
      {"Qwen2.5-32B", 32'763'876'352},     {"Qwen2.5-72B", 72'706'203'648},
      {"Qwen3-0.6B", 596'049'920},         {"Qwen3-4B", 4'022'468'096},
      {"Qwen3-8B", 8'190'735'360},         {"Qwen3-14B", 14'768'307'200},
      {"Qwen3-32B", 32'762'123'264},       {"Qwen3-30B-A3B", 30'532'122'624},
      {"Gemma-2-2B", 2'614'341'888},       {"Gemma-2-9B", 9'241'705'984},
      {"Gemma-2-27B", 27'227'128'320},     {"Gemma-3-27B", 27'432'406'640},
      {"Phi-3-mini", 3'821'079'552},       {"Phi-4", 14'659'507'200},
      {"TinyLlama-1.1B", 1'100'048'384},   {"gpt-oss-20b", 20'914'757'184},
      {"gpt-oss-120b", 116'829'156'672},
  };
  EXPECT_EQ(std::size(expected), catalogue().size());
  for (const auto& [name, total] : expected) EXPECT_EQ(counts(name).total, total) << name;
}

TEST(Catalogue, MoeActiveParameters) {
  // Mistral's "12.9B active" counts both embedding matrices.
  EXPECT_EQ(counts("Mixtral-8x7B").active, 12'879'925'248u);
  // Qwen's "3.3B activated".
  EXPECT_EQ(counts("Qwen3-30B-A3B").active, 3'353'032'704u);
  // OpenAI's card (3.61B / 5.13B active) leaves out the embedding lookup.
  EXPECT_EQ(active_params_excluding_embedding(counts("gpt-oss-20b")), 3'608'307'264u);
  EXPECT_EQ(active_params_excluding_embedding(counts("gpt-oss-120b")), 5'132'849'472u);
  // Dense models: active == total.
  EXPECT_EQ(counts("Llama-3.1-8B").active, counts("Llama-3.1-8B").total);
}

TEST(Catalogue, FindsByRepoIdAliasAndCase) {
  ASSERT_NE(find_in_catalogue("meta-llama/Llama-3.1-8B"), nullptr);
  EXPECT_EQ(find_in_catalogue("meta-llama/Llama-3.1-8B")->name, "Llama-3.1-8B");
  EXPECT_EQ(find_in_catalogue("llama-3.1-8b")->name, "Llama-3.1-8B");
  EXPECT_EQ(find_in_catalogue("Meta-Llama-3-8B")->name, "Llama-3.1-8B");
  EXPECT_EQ(find_in_catalogue("openai/gpt-oss-20b")->name, "gpt-oss-20b");
  EXPECT_EQ(find_in_catalogue("Llama-9.9-1T"), nullptr);
}

TEST(Catalogue, NamesAreUnique) {
  const auto& cat = catalogue();
  for (std::size_t i = 0; i < cat.size(); ++i) {
    for (std::size_t j = i + 1; j < cat.size(); ++j) EXPECT_NE(cat[i].name, cat[j].name);
  }
}

TEST(CatalogueParse, MissingFieldIsError) {
  const auto r = parse_catalogue(R"({"models":[{"name":"x","hidden":4}]})");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("layers"), std::string::npos);
}

TEST(LayerLinears, LlamaLoraAllLinearRank16Matches) {
  // docs/domain.md: Llama-3-8B, r=16, all linear layers: 41,943,040 LoRA parameters.
  const auto* e = find_in_catalogue("Llama-3.1-8B");
  ASSERT_NE(e, nullptr);
  std::uint64_t per_layer = 0;
  for (const auto& m : layer_linears(e->arch)) per_layer += 16 * (m.d_in + m.d_out) * m.copies;
  EXPECT_EQ(per_layer * e->arch.layers, 41'943'040u);
}

}  // namespace
}  // namespace sparkops::models
