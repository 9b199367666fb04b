// The plan flags' text to a PlanInput: every value it accepts, and every refusal names its flag.
#include "plan/plan_args.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace sparkops::plan {
namespace {

PlanArgs params(std::string_view p) {
  PlanArgs a;
  a.params = std::string(p);
  return a;
}

std::string error_of(const PlanArgs& a) {
  auto r = plan_input(a);
  EXPECT_FALSE(r.has_value());
  return r ? std::string() : r.error().detail;
}

TEST(PlanArgs, ParamCountsTakeTheUsualSuffixes) {
  EXPECT_EQ(parse_param_count("70B").value(), 70'000'000'000ULL);
  EXPECT_EQ(parse_param_count("7.6e9").value(), 7'600'000'000ULL);
  EXPECT_EQ(parse_param_count("8030261248").value(), 8'030'261'248ULL);
  EXPECT_EQ(parse_param_count("1.5T").value(), 1'500'000'000'000ULL);
  EXPECT_EQ(parse_param_count("350m").value(), 350'000'000ULL);
  EXPECT_EQ(parse_param_count(" 2k ").value(), 2'000ULL);
  for (const auto* bad : {"", "B", "-7B", "0", "seventy", "2e15", "nan", "inf"}) {
    auto r = parse_param_count(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().detail.find("--params"), std::string::npos) << r.error().detail;
  }
}

TEST(PlanArgs, CountListsArePositiveWholeNumbers) {
  EXPECT_EQ(parse_count_list("1024,2048,4096", "--seq").value(),
            (std::vector<std::uint64_t>{1024, 2048, 4096}));
  EXPECT_EQ(parse_count_list("4", "--batch").value(), (std::vector<std::uint64_t>{4}));
  for (const auto* bad : {"", "0", "1,,2", "1.5", "-1", "x"}) {
    auto r = parse_count_list(bad, "--batch");
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().detail.rfind("--batch: ", 0), 0U) << r.error().detail;
  }
}

TEST(PlanArgs, TheFirstValueOfAListIsThePlannedRun) {
  PlanArgs a = params("8B");
  a.batch = "2,4";
  a.seq = "4096,8192";
  a.method = "qlora";
  a.lora_rank = "64";
  a.lora_targets = "q_proj, v_proj";
  a.nodes = "2";
  a.gpus = "4";
  a.grad_accum = "8";
  auto in = plan_input(a);
  ASSERT_TRUE(in.has_value()) << in.error().detail;
  EXPECT_EQ(in->model.params, 8'000'000'000ULL);
  EXPECT_EQ(in->run.method, Method::qlora);
  EXPECT_EQ(in->run.batch, 2U);
  EXPECT_EQ(in->run.seq, 4096U);
  EXPECT_EQ(in->run.lora_rank, 64U);
  EXPECT_EQ(in->run.lora_targets, LoraTargets::list);
  EXPECT_EQ(in->run.lora_target_names, (std::vector<std::string>{"q_proj", "v_proj"}));
  EXPECT_EQ(in->run.nodes, 2U);
  EXPECT_EQ(in->run.gpus, 4U);
  EXPECT_EQ(in->run.grad_accum, 8U);
  EXPECT_FALSE(in->budget_bytes.has_value());  // auto: the live pool
}

TEST(PlanArgs, BitsandbytesBefore0432KeepsTheInput) {
  PlanArgs a = params("8B");
  a.method = "qlora";
  a.bnb_version = "0.43.1";
  EXPECT_TRUE(plan_input(a).value().run.bnb_saves_input);
  a.bnb_version = "0.43.2";
  EXPECT_FALSE(plan_input(a).value().run.bnb_saves_input);
  a.bnb_version = "0.42";
  EXPECT_TRUE(plan_input(a).value().run.bnb_saves_input);
  for (const auto* bad : {"0", "0.x", "1.2.3.4", ""}) {
    a.bnb_version = bad;
    if (std::string_view(bad).empty()) continue;  // empty: the preset's
    EXPECT_NE(error_of(a).find("--bnb-version"), std::string::npos) << bad;
  }
}

// Params4bit.cuda quantizes .half() up to 0.42.0 (bitsandbytes nn/modules.py; dcfb6f81 in 0.43.0
// quantizes in the weight's dtype): a bf16 run dequantizes to fp16, then copies to bf16.
TEST(PlanArgs, BitsandbytesBefore043QuantizesFromFp16) {
  PlanArgs a = params("8B");
  a.method = "qlora";
  a.bnb_version = "0.42.0";
  EXPECT_TRUE(plan_input(a).value().run.bnb_quant_fp16);
  a.bnb_version = "0.43.0";
  EXPECT_FALSE(plan_input(a).value().run.bnb_quant_fp16);
}

// transformers' HF loss by release (plan/transformers_version.hpp): <= 4.45 the shifted copy of
// the fp32 logits, 4.46-4.48 that copy beside the caller's model-dtype logits, >= 4.49 neither.
TEST(PlanArgs, TransformersPicksTheHfLossOfItsRelease) {
  PlanArgs a = params("8B");
  a.framework = "hf";
  EXPECT_EQ(plan_input(a).value().run.loss, LossKind::hf);  // the preset's 4.57.6
  EXPECT_TRUE(plan_input(a).value().run.transformers.empty());
  const std::pair<const char*, LossKind> cases[] = {{"4.45.2", LossKind::hf_shifted},
                                                    {"4.36", LossKind::hf_shifted},
                                                    {"4.46", LossKind::hf_shifted_kept},
                                                    {"4.46.0", LossKind::hf_shifted_kept},
                                                    {"v4.47.1", LossKind::hf_shifted_kept},
                                                    {"4.48.0.dev0", LossKind::hf_shifted_kept},
                                                    {"4.48.3rc1", LossKind::hf_shifted_kept},
                                                    {"4.49.0", LossKind::hf},
                                                    {"4.57.1", LossKind::hf},
                                                    {"4.47.1+cu121", LossKind::hf_shifted_kept},
                                                    {"5.14.1", LossKind::hf}};
  for (const auto& [version, loss] : cases) {
    a.transformers = version;
    auto in = plan_input(a);
    ASSERT_TRUE(in.has_value()) << version;
    EXPECT_EQ(in->run.loss, loss) << version;
  }
  a.transformers = "v4.46";
  EXPECT_EQ(plan_input(a).value().run.transformers, "4.46.0");
  // Presets whose loss is the HF model's own follow it; a framework's own loss does not.
  a.transformers = "4.47";
  for (const auto* fw : {"axolotl", "llamafactory"}) {
    a.framework = fw;
    EXPECT_EQ(plan_input(a).value().run.loss, LossKind::hf_shifted_kept) << fw;
  }
  a.framework = "torchtune";
  EXPECT_EQ(plan_input(a).value().run.loss, LossKind::chunked_output);
  a.framework = "trl";
  EXPECT_EQ(plan_input(a).value().run.loss, LossKind::chunked_nll);
  // An explicit --loss wins over the release.
  a.framework = "hf";
  a.loss = "hf";
  EXPECT_EQ(plan_input(a).value().run.loss, LossKind::hf);
  a.loss.clear();
  a.chunked_loss = true;
  EXPECT_EQ(plan_input(a).value().run.loss, LossKind::chunked);
  a.chunked_loss = false;
  // Untrusted text: one error naming the flag.
  for (const auto* bad :
       {"banana", "4", "4.", "4.x", ".46", "4.46.1.2", "4.46-foo", "3.5", "10.0", "4.46.0.devx",
        "44444.1", "4..46", "v", "4.46 extra", "4.46+", "4.46+a b"}) {
    a.transformers = bad;
    const auto e = error_of(a);
    EXPECT_NE(e.find("--transformers"), std::string::npos) << bad;
    EXPECT_EQ(e.find('\n'), std::string::npos) << bad;
  }
}

TEST(PlanArgs, KeptFp16IsAQloraFlag) {
  PlanArgs a = params("8B");
  a.method = "qlora";
  a.kept_fp16 = true;
  EXPECT_TRUE(plan_input(a).value().run.qlora_kept_fp16);
  a.method = "lora";
  EXPECT_NE(error_of(a).find("--kept-fp16"), std::string::npos);
}

TEST(PlanArgs, AnUnnamedFrameworkCarriesEveryOtherPreset) {
  PlanArgs a = params("8B");
  auto in = plan_input(a);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->run.framework, Framework::hf);
  ASSERT_EQ(in->framework_alternatives.size(), 8u);
  EXPECT_EQ(in->framework_alternatives.front().framework, Framework::trl);
  // The user's flags win in every alternative too.
  a.seq = "4096";
  const auto longer = plan_input(a).value();
  for (const auto& r : longer.framework_alternatives) EXPECT_EQ(r.seq, 4096u);
  a.framework = "hf";
  EXPECT_TRUE(plan_input(a).value().framework_alternatives.empty());
}

// ms-swift decides the rank and the accumulation when the flags do not: TunerArguments.lora_rank
// 8; TrainArgumentsMixin.__post_init__ gradient_accumulation_steps = ceil(16 / batch / world).
TEST(PlanArgs, SwiftSetsRankAndAccumulationUnlessTheFlagsDo) {
  PlanArgs a = params("8B");
  auto hf = plan_input(a).value();
  EXPECT_EQ(hf.run.lora_rank, 16U);  // the project's default without a preset value
  EXPECT_EQ(hf.run.grad_accum, 1U);
  a.framework = "swift";
  auto swift = plan_input(a).value();
  EXPECT_EQ(swift.run.framework, Framework::swift);
  EXPECT_EQ(swift.run.lora_rank, 8U);
  EXPECT_EQ(swift.run.grad_accum, 16U);  // batch 1 on one GPU
  a.batch = "3";
  EXPECT_EQ(plan_input(a).value().run.grad_accum, 6U);  // ceil(16 / 3)
  a.gpus = "2";
  a.nodes = "2";
  EXPECT_EQ(plan_input(a).value().run.grad_accum, 2U);  // ceil(16 / 3 / 4)
  a.batch = "16";
  EXPECT_EQ(plan_input(a).value().run.grad_accum, 1U);
  a.batch = "9223372036854775807";
  EXPECT_EQ(plan_input(a).value().run.grad_accum, 1U);
  // The user's flags win.
  a.batch = "1";
  a.lora_rank = "32";
  a.grad_accum = "1";
  auto given = plan_input(a).value();
  EXPECT_EQ(given.run.lora_rank, 32U);
  EXPECT_EQ(given.run.grad_accum, 1U);
  // Unnamed, the swift alternative of the range takes its own defaults.
  PlanArgs unnamed = params("8B");
  const auto alts = plan_input(unnamed).value().framework_alternatives;
  const auto it = std::find_if(alts.begin(), alts.end(),
                               [](const RunConfig& r) { return r.framework == Framework::swift; });
  ASSERT_NE(it, alts.end());
  EXPECT_EQ(it->lora_rank, 8U);
  EXPECT_EQ(it->grad_accum, 16U);
}

TEST(PlanArgs, BudgetAndOverhead) {
  PlanArgs a = params("8B");
  a.budget = "60";
  EXPECT_EQ(plan_input(a).value().budget_bytes, 60ULL << 30);  // a bare number is GiB
  a.overhead = "4";
  EXPECT_NE(error_of(a).find("--overhead: applies only with --budget auto"), std::string::npos);
  a.budget = "auto";
  EXPECT_EQ(plan_input(a).value().overhead_bytes, 4ULL << 30);
  a.budget = "0";
  a.overhead.clear();
  EXPECT_NE(error_of(a).find("--budget"), std::string::npos);
}

TEST(PlanArgs, EveryRefusalNamesItsFlag) {
  const auto with = [](auto set) {
    PlanArgs a;
    a.params = "8B";
    set(a);
    return a;
  };
  EXPECT_NE(error_of(PlanArgs{}).find("give a MODEL, --params or --list"), std::string::npos);
  PlanArgs both = params("8B");
  both.model = "Qwen3-8B";
  EXPECT_NE(error_of(both).find("--params: contradicts MODEL"), std::string::npos);
  PlanArgs arch;
  arch.model = "Qwen3-8B";
  arch.hidden = "4096";
  EXPECT_NE(error_of(arch).find("need --params"), std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.mlp = "wide"; })).find("--mlp"), std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.norm = "batch"; })).find("--norm"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.hidden = "1,2"; })).find("--hidden: one value"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.lora_targets = "q,,v"; })).find("--lora-targets"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.lora_dropout = "1"; })).find("--lora-dropout"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.adapter_dtype = "int8"; })).find("--adapter-dtype"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.no_double_quant = true; })).find("--no-double-quant"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) { a.lengths = "random"; })).find("--lengths"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) {
              a.chunked_loss = true;
              a.loss = "hf";
            })).find("--chunked-loss"),
            std::string::npos);
  EXPECT_NE(error_of(with([](PlanArgs& a) {
              a.nodes = "300";
              a.gpus = "300";
            })).find("--nodes/--gpus"),
            std::string::npos);
}

// TrainingArguments' default optimizer follows the release (transformers PR #37358): foreach
// AdamW up to 4.53, fused from 4.54, for a framework on the HF Trainer; --optim and frameworks
// with their own loop keep theirs.
TEST(PlanArgs, TheTransformersReleaseDecidesTheTrainersDefaultAdamW) {
  auto fused = [](const char* framework, const char* release, const char* optim = "") {
    PlanArgs a;
    a.model = "Llama-3.1-8B";
    a.method = "full";
    a.framework = framework;
    a.transformers = release;
    a.optim = optim;
    auto in = plan_input(a);
    EXPECT_TRUE(in.has_value()) << framework << " " << release;
    return in && in->run.fused_adamw;
  };
  EXPECT_FALSE(fused("hf", "4.53.3"));
  EXPECT_TRUE(fused("hf", "4.54.0"));
  EXPECT_TRUE(fused("hf", "5.2"));
  EXPECT_TRUE(fused("llamafactory", "4.57.1"));
  EXPECT_FALSE(fused("llamafactory", "4.51.3"));
  // LitGPT's and torchtune's loops build their own optimizer: the release says nothing of it.
  EXPECT_EQ(fused("litgpt", "4.53.3"), fused("litgpt", "4.57.1"));
  EXPECT_EQ(fused("torchtune", "4.53.3"), fused("torchtune", "4.57.1"));
}

}  // namespace
}  // namespace sparkops::plan
