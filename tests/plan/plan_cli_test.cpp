#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "safetensors_writer.hpp"
#include "support/test_support.hpp"

namespace sparkops::plan {
namespace {

using test::run_sparkops;

std::string root() {
  return test::fixture("plan/root-spark").string();
}

TEST(PlanCli, JsonCarriesEveryRequiredKey) {
  const auto r = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"params", "trainable_params", "terms", "train_peak_allocated_bytes",
                          "train_peak_pool_bytes", "load_peak_pool_bytes", "budget_bytes",
                          "train_peak_reserved_bytes", "train_peak_reserved_range_bytes", "verdict",
                          "anchor", "advice"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["params"], 8'030'261'248u);
  EXPECT_EQ(j["verdict"], "fits");
  // Budget: MemAvailable 110 GiB - 4 GiB default overhead.
  EXPECT_EQ(j["budget_bytes"], 106ull << 30);
  for (const char* term : {"weights", "adapter", "gradients", "optimizer", "master", "activations",
                           "logits", "cuda_context", "allocator_reserve"}) {
    EXPECT_TRUE(j["terms"].contains(term)) << term;
  }
}

TEST(PlanCli, TableIsPinned) {
  const auto r = run_sparkops(
      {"--root", root(), "plan", "Llama-3.1-70B", "--method", "qlora", "--seq", "512"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::expect_golden("golden/plan/llama70b-qlora.txt", r.out);
}

TEST(PlanCli, WontFitExitsOneWithTheLadder) {
  const auto r =
      run_sparkops({"plan", "Llama-3.1-70B", "--method", "full", "--budget", "100", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "wont_fit");
  ASSERT_EQ(j["advice"].size(), 2u);
  EXPECT_EQ(j["advice"][0]["kind"], "method_down");
  EXPECT_EQ(j["advice"][1]["run"]["method"], "qlora");
  EXPECT_EQ(j["advice"][1]["fits"], true);
  test::expect_golden("golden/plan/llama70b-full-100.json", r.out);
}

TEST(PlanCli, TightExitsThree) {
  const auto fits =
      nlohmann::json::parse(run_sparkops({"plan", "Qwen2.5-7B", "--budget", "1000", "--json"}).out);
  const double peak = std::max(fits["train_peak_pool_bytes"].get<double>(),
                               fits["load_peak_pool_bytes"].get<double>());
  const auto budget = std::to_string(static_cast<long long>(peak / 0.95 / 1e9 * 1e9));
  const auto r = run_sparkops({"plan", "Qwen2.5-7B", "--budget", budget + "B"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
}

// `--batch 9223372036854775807` used to count the advice down one batch at a time and
// never finish. The search bisects and the byte sums saturate, so the answer comes at once: the
// run does not fit, and the first rung is a smaller batch that does (ctest's timeout catches a
// hang).
TEST(PlanCli, HugeBatchIsAnsweredByBisectionNotCountdown) {
  const auto r = run_sparkops(
      {"plan", "Llama-3.1-8B", "--batch", "9223372036854775807", "--budget", "40", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "wont_fit");
  ASSERT_FALSE(j["advice"].empty()) << r.out;
  EXPECT_EQ(j["advice"][0]["kind"], "smaller_batch");
  const auto batch = j["advice"][0]["run"]["batch"].get<std::uint64_t>();
  EXPECT_GE(batch, 1u);
  EXPECT_LT(batch, 64u);
  EXPECT_EQ(j["advice"][0]["fits"], true);
}

TEST(PlanCli, FitMatrix) {
  const auto r = run_sparkops(
      {"plan", "Llama-3.1-8B", "--seq", "1024,2048,4096", "--batch", "1,2,4", "--budget", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::expect_golden("golden/plan/matrix.txt", r.out);
}

TEST(PlanCli, ListPrintsTheCatalogue) {
  const auto r = run_sparkops({"plan", "--list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["models"].size(), 33u);
  const auto t = run_sparkops({"plan", "--list"});
  EXPECT_NE(t.out.find("gpt-oss-120b"), std::string::npos);
}

TEST(PlanCli, BadInputIsOneLineAndExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"plan", "NoSuchModel-9B"},
      {"plan", "Llama-3.1-8B", "--batch", "0"},
      {"plan", "Llama-3.1-8B", "--seq", "-5"},
      {"plan", "Llama-3.1-8B", "--method", "dpo"},
      {"plan", "Llama-3.1-8B", "--kbit-prep"},
      {"plan", "Llama-3.1-8B", "--params", "8B"},
      {"plan", "Llama-3.1-8B", "--budget", "lots"},
      {"plan", "--hidden", "4096"},
      {"plan", "./no/such/dir"},
      {"plan", "Llama-3.1-8B", "--framework", "megatron"},
      {"plan", "--params", "7B", "--mlp", "plain", "--norm", "rms"},
      {"plan", "--params", "7B", "--mlp", "swish"},
      {"plan", "Llama-3.1-8B", "--parallel-block"},
      {"plan", "Llama-3.1-8B", "--loss", "focal"},
      {"plan", "Llama-3.1-8B", "--loss", "hf", "--chunked-loss"},
      {"plan", "Llama-3.1-8B", "--lora-dropout", "1.5"},
      {"plan", "Llama-3.1-8B", "--adapter-dtype", "fp8"},
      {"plan", "Llama-3.1-8B", "--method", "qlora", "--bnb-version", "zero.43"},
      {"plan", "Llama-3.1-8B", "--transformers", "latest"},
  };
  for (const auto& args : cases) {
    const auto r = run_sparkops(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << " " << r.out;
    EXPECT_EQ(r.err.rfind("sparkops: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PlanCli, ModelDirectoryAndBadSafetensors) {
  test::TempDir tmp;
  const auto cfg = test::fixture("models/configs/Qwen2.5-7B/config.json");
  std::filesystem::copy_file(cfg, tmp / "config.json");
  models::testing::write_raw_safetensors(tmp / "model.safetensors", 1ull << 40, "{}", 0);
  const auto r = run_sparkops({"plan", tmp.path().string(), "--budget", "100"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("100 MB"), std::string::npos) << r.err;
  std::filesystem::remove(tmp / "model.safetensors");
  const auto ok = run_sparkops({"plan", tmp.path().string(), "--budget", "100", "--json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["params"], 7'615'616'512u);
}

TEST(PlanCli, HfCacheRepoIdAndUserAnchors) {
  test::TempDir tmp;
  const auto snap = tmp / "hub" / "models--Qwen--Qwen2.5-7B" / "snapshots" / "abc";
  std::filesystem::create_directories(snap);
  std::filesystem::copy_file(test::fixture("models/configs/Qwen2.5-7B/config.json"),
                             snap / "config.json");
  std::filesystem::create_directories(tmp / "data" / "sparkops");
  test::write_text(
      tmp / "data" / "sparkops" / "anchors.jsonl",
      R"({"id":"mine","model":"Qwen2.5-7B","method":"lora","peak_pool_bytes":26000000000,"seq":2048})"
      "\n");
  const auto r = run_sparkops(
      {"plan", "Qwen/Qwen2.5-7B", "--budget", "100", "--json"},
      {{"HF_HUB_CACHE", (tmp / "hub").string()}, {"XDG_DATA_HOME", (tmp / "data").string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["source"], "hf_cache");
  EXPECT_EQ(j["anchor"]["id"], "mine");
}

}  // namespace
}  // namespace sparkops::plan

namespace sparkops::plan {
namespace {

// The issue's case: an unsloth *-bnb-4bit Llama-70B config.json was planned as 131 GiB of bf16.
TEST(PlanCli, PreQuantizedBnb4bitBaseIsPlannedAsQlora) {
  test::TempDir tmp;
  std::filesystem::copy_file(
      test::fixture("models/configs/Llama-3.3-70B-Instruct-bnb-4bit/config.json"),
      tmp / "config.json");
  const auto r = test::run_sparkops(
      {"--root", test::fixture("plan/root-spark").string(), "plan", tmp.path().string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"]["method"], "qlora");
  EXPECT_EQ(j["model"]["quantization"]["method"], "bitsandbytes-4bit");
  EXPECT_EQ(j["model"]["quantization"]["weight_bytes"], 39'517'721'792u);
  EXPECT_EQ(j["terms"]["weights"], 39'517'721'792u);
  EXPECT_NE(j["verdict"], "wont_fit");
}

TEST(PlanCli, FullFineTuneOfAQuantizedBaseIsBadInput) {
  test::TempDir tmp;
  std::filesystem::copy_file(test::fixture("models/configs/Llama-2-7B-GPTQ/config.json"),
                             tmp / "config.json");
  const auto r = test::run_sparkops({"--root", test::fixture("plan/root-spark").string(), "plan",
                                     tmp.path().string(), "--method", "full"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot be fully fine-tuned"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sparkops::plan

namespace sparkops::plan {
namespace {

TEST(PlanCli, FrameworkPresetIsPrintedAndUserFlagsWin) {
  const auto hf = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--json"});
  ASSERT_EQ(hf.exit_code, 0) << hf.err;
  const auto h = nlohmann::json::parse(hf.out);
  EXPECT_EQ(h["run"]["framework"], "hf");
  EXPECT_EQ(h["run"]["loss"], "hf");
  EXPECT_EQ(h["run"]["adapter_dtype"], "fp32");

  const auto lit = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--method", "qlora",
                                 "--framework", "litgpt", "--json"});
  ASSERT_EQ(lit.exit_code, 0) << lit.err;
  const auto l = nlohmann::json::parse(lit.out);
  EXPECT_EQ(l["run"]["framework"], "litgpt");
  EXPECT_EQ(l["run"]["loss"], "chunked");
  EXPECT_EQ(l["run"]["optim"], "paged_adamw");
  EXPECT_EQ(l["run"]["adapter_dtype"], "model");
  EXPECT_EQ(l["run"]["lora_dropout"], 0.05);
  EXPECT_EQ(l["run"]["bnb_saves_input"], true);
  EXPECT_EQ(l["run"]["double_quant"], false);

  // Flags given by the user override the preset's fields.
  const auto over = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--method", "qlora",
                                  "--framework", "litgpt", "--loss", "fused", "--lora-dropout", "0",
                                  "--bnb-version", "0.43.2", "--optim", "adamw", "--json"});
  ASSERT_EQ(over.exit_code, 0) << over.err;
  const auto o = nlohmann::json::parse(over.out);
  EXPECT_EQ(o["run"]["loss"], "fused");
  EXPECT_EQ(o["run"]["lora_dropout"], 0.0);
  EXPECT_EQ(o["run"]["bnb_saves_input"], false);
  EXPECT_EQ(o["run"]["optim"], "adamw");

  const auto text = run_sparkops(
      {"--root", root(), "plan", "Llama-3.1-8B", "--framework", "litgpt", "--method", "qlora"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Preset   litgpt [litgpt 0.4"), std::string::npos) << text.out;
}

// The transformers release picks the HF loss, and the plan says which (Preset line, --json);
// config plan.transformers stands in for the flag, and a bad one is named as the key.
TEST(PlanCli, TransformersReleaseIsPrintedWithItsHfLoss) {
  const auto preset = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "hf"});
  ASSERT_EQ(preset.exit_code, 0) << preset.err;
  EXPECT_NE(preset.out.find("; HF loss hf (transformers 4.57.6, the preset's)"), std::string::npos)
      << preset.out;
  const auto given = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework",
                                   "axolotl", "--transformers", "4.47"});
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_NE(given.out.find("; HF loss hf_shifted_kept (transformers 4.47.0)"), std::string::npos)
      << given.out;
  const auto over = run_sparkops(
      {"--root", root(), "plan", "Llama-3.1-8B", "--transformers", "4.47", "--loss", "hf"});
  ASSERT_EQ(over.exit_code, 0) << over.err;
  EXPECT_NE(over.out.find("; HF loss hf (transformers 4.47.0, --loss wins)"), std::string::npos)
      << over.out;
  const auto json = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework",
                                  "llamafactory", "--transformers", "v4.45.2", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["run"]["loss"], "hf_shifted");
  EXPECT_EQ(j["run"]["transformers"], "4.45.2");
  // A framework with its own loss names no transformers release.
  const auto trl = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "trl",
                                 "--transformers", "4.47", "--json"});
  ASSERT_EQ(trl.exit_code, 0) << trl.err;
  EXPECT_FALSE(nlohmann::json::parse(trl.out)["run"].contains("transformers"));

  const test::TempDir tmp;
  test::write_text(tmp / "good.toml", "[plan]\ntransformers = \"4.46.1\"\n");
  test::write_text(tmp / "bad.toml", "[plan]\ntransformers = \"four\"\n");
  const auto cfg =
      test::run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "hf", "--json"},
                         {{"SPARKOPS_CONFIG", (tmp / "good.toml").string()}});
  ASSERT_EQ(cfg.exit_code, 0) << cfg.err;
  EXPECT_EQ(nlohmann::json::parse(cfg.out)["run"]["loss"], "hf_shifted_kept");
  const auto flag_wins =
      test::run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "hf",
                          "--transformers", "4.49", "--json"},
                         {{"SPARKOPS_CONFIG", (tmp / "good.toml").string()}});
  ASSERT_EQ(flag_wins.exit_code, 0) << flag_wins.err;
  EXPECT_EQ(nlohmann::json::parse(flag_wins.out)["run"]["loss"], "hf");
  const auto bad = test::run_sparkops({"--root", root(), "plan", "Llama-3.1-8B"},
                                      {{"SPARKOPS_CONFIG", (tmp / "bad.toml").string()}});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("config plan.transformers"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

TEST(PlanCli, BnbVersionDecidesWhetherInputsAreKept) {
  auto saves = [](const char* version) {
    const auto r = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--method", "qlora",
                                 "--bnb-version", version, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["run"]["bnb_saves_input"].get<bool>();
  };
  EXPECT_TRUE(saves("0.42.0"));
  EXPECT_TRUE(saves("0.43.1"));
  EXPECT_FALSE(saves("0.43.2"));
  EXPECT_FALSE(saves("0.45"));
}

}  // namespace
}  // namespace sparkops::plan

namespace sparkops::plan {
namespace {

// --params takes the block layout the activation mechanism needs; a layout without a layer
// program is refused (BadInputIsOneLineAndExitTwo), and without the flags the assumed layout
// is named in a note.
TEST(PlanCli, ParamsTakeTheBlockLayout) {
  const auto neox = run_sparkops(
      {"--root", root(), "plan", "--params", "7B", "--mlp", "plain", "--parallel-block", "--json"});
  ASSERT_EQ(neox.exit_code, 0) << neox.err;
  const auto llama = run_sparkops({"--root", root(), "plan", "--params", "7B", "--json"});
  ASSERT_EQ(llama.exit_code, 0) << llama.err;
  const auto n = nlohmann::json::parse(neox.out);
  const auto l = nlohmann::json::parse(llama.out);
  EXPECT_EQ(n["params"], l["params"]);
  EXPECT_NE(n["terms"]["activations"], l["terms"]["activations"]);
  bool noted = false;
  for (const auto& note : l["notes"])
    noted = noted || note.get<std::string>().find("block layout assumed") != std::string::npos;
  EXPECT_TRUE(noted) << l["notes"];

  // A plain MLP under LayerNorm without --parallel-block is GPT-2's sequential block (a second
  // norm's input and output kept, dropout masks), not GPT-NeoX's.
  const auto gpt2 = run_sparkops(
      {"--root", root(), "plan", "--params", "7B", "--mlp", "plain", "--norm", "layer", "--json"});
  ASSERT_EQ(gpt2.exit_code, 0) << gpt2.err;
  const auto g = nlohmann::json::parse(gpt2.out);
  EXPECT_EQ(g["params"], n["params"]);
  EXPECT_NE(g["terms"]["activations"], n["terms"]["activations"]);
  bool named = false;
  for (const auto& note : g["notes"])
    named = named || note.get<std::string>().find("GPT-2's") != std::string::npos;
  EXPECT_TRUE(named) << g["notes"];
}

}  // namespace
}  // namespace sparkops::plan

namespace sparkops::plan {
namespace {

// Each preset reaches the plan: its name in --json, its version on the Preset line, and the
// fields its docs/estimator.md rows set.
TEST(PlanCli, EveryFrameworkPresetIsAssumedAndPrinted) {
  struct Case {
    const char* name;
    const char* version_prefix;
    const char* loss;
    const char* grad_ckpt;
  };
  const Case cases[] = {{"hf", "transformers 4.57.6", "hf", "full"},
                        {"trl", "trl 1.9.0", "chunked_nll", "full"},
                        {"unsloth", "unsloth 2026.8.19", "fused_unsloth", "offload"},
                        {"axolotl", "axolotl 0.18.0", "hf", "full"},
                        {"llamafactory", "LLaMA-Factory 0.9.4", "hf", "full"},
                        {"torchtune", "torchtune 0.6.1", "chunked_output", "full"},
                        {"litgpt", "litgpt 0.4", "chunked", "full"},
                        {"nemo", "NeMo 2.x", "megatron", "none"},
                        {"swift", "ms-swift 4.5.2", "hf", "full"}};
  for (const auto& c : cases) {
    const auto j =
        run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", c.name, "--json"});
    ASSERT_EQ(j.exit_code, 0) << c.name << ": " << j.err;
    const auto run = nlohmann::json::parse(j.out)["run"];
    EXPECT_EQ(run["framework"], c.name);
    EXPECT_EQ(run["loss"], c.loss) << c.name;
    EXPECT_EQ(run["grad_ckpt"], c.grad_ckpt) << c.name;
    const auto text =
        run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", c.name});
    ASSERT_EQ(text.exit_code, 0) << c.name << ": " << text.err;
    EXPECT_NE(text.out.find(std::string("Preset   ") + c.name + " [" + c.version_prefix),
              std::string::npos)
        << text.out;
  }
  // The user's flags still win over a preset's checkpointing and attention.
  const auto over = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework",
                                  "unsloth", "--grad-ckpt", "full", "--attn", "eager", "--json"});
  ASSERT_EQ(over.exit_code, 0) << over.err;
  const auto o = nlohmann::json::parse(over.out)["run"];
  EXPECT_EQ(o["grad_ckpt"], "full");
  EXPECT_EQ(o["attn"], "eager");
}

// Under --framework unsloth the plan says which decoder layer its activations came from and which
// projection groups Unsloth fuses (Qwen2's biased q/k/v are not), and --attn xformers names
// Unsloth's third backend.
TEST(PlanCli, UnslothSaysWhichGroupsItsOwnLayerFuses) {
  const auto llama = run_sparkops(
      {"--root", root(), "plan", "Llama-3.1-8B", "--framework", "unsloth", "--method", "lora"});
  ASSERT_EQ(llama.exit_code, 0) << llama.err;
  EXPECT_NE(llama.out.find("Unsloth's own decoder layer"), std::string::npos) << llama.out;
  EXPECT_NE(llama.out.find("fused LoRA Functions for QKV, O, MLP"), std::string::npos) << llama.out;
  const auto qwen2 = run_sparkops({"--root", root(), "plan", "Qwen2.5-7B", "--framework", "unsloth",
                                   "--method", "lora", "--attn", "xformers", "--json"});
  ASSERT_EQ(qwen2.exit_code, 0) << qwen2.err;
  const auto j = nlohmann::json::parse(qwen2.out);
  EXPECT_EQ(j["run"]["attn"], "xformers");
  EXPECT_NE(j.dump().find("fused LoRA Functions for O, MLP"), std::string::npos) << qwen2.out;
  // A full fine-tune runs through Unsloth's FastModel: the Hugging Face layer.
  const auto full = run_sparkops(
      {"--root", root(), "plan", "Llama-3.1-8B", "--framework", "unsloth", "--method", "full"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_EQ(full.out.find("Unsloth's own decoder layer"), std::string::npos) << full.out;
}

// ms-swift's own defaults reach the plan: rank 8, dropout 0.05, fused AdamW, and 16 micro-batches
// a step at batch 1 on one GPU, shown on the Run line; the flags still win.
TEST(PlanCli, SwiftPresetSetsRankAndAccumulation) {
  const auto j =
      run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "swift", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto run = nlohmann::json::parse(j.out)["run"];
  EXPECT_EQ(run["lora_rank"], 8);
  EXPECT_EQ(run["grad_accum"], 16);
  EXPECT_EQ(run["lora_dropout"], 0.05);
  EXPECT_EQ(run["adapter_dtype"], "fp32");
  const auto text =
      run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "swift"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  accum 16"), std::string::npos) << text.out;
  const auto over = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "swift",
                                  "--lora-rank", "64", "--grad-accum", "1", "--json"});
  ASSERT_EQ(over.exit_code, 0) << over.err;
  const auto o = nlohmann::json::parse(over.out)["run"];
  EXPECT_EQ(o["lora_rank"], 64);
  EXPECT_EQ(o["grad_accum"], 1);
}

TEST(PlanCli, AnUnknownFrameworkPrintsThePresetsRange) {
  const auto r = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["framework_range"].is_object()) << r.out;
  const auto& fr = j["framework_range"];
  EXPECT_LT(fr["low_bytes"].get<std::uint64_t>(), fr["high_bytes"].get<std::uint64_t>());
  EXPECT_LE(fr["low_bytes"].get<std::uint64_t>(), j["peak_bytes"].get<std::uint64_t>());
  EXPECT_GE(fr["high_bytes"].get<std::uint64_t>(), j["peak_bytes"].get<std::uint64_t>());
  EXPECT_NE(fr["low"], fr["high"]);
  const auto text = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("note: framework not given (hf assumed"), std::string::npos) << text.out;
  // Named, it is one figure.
  const auto named =
      run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--framework", "hf", "--json"});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_TRUE(nlohmann::json::parse(named.out)["framework_range"].is_null());
}

TEST(PlanCli, ShardingFlagsReachTheEstimate) {
  const auto r = run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--method", "full",
                               "--gpus", "8", "--shard", "fsdp", "--budget", "1000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run"]["gpus"], 8);
  EXPECT_EQ(j["run"]["shard"], "fsdp");
  // tests/plan/sharding_test.cpp works this figure by hand.
  EXPECT_EQ(j["terms"]["weights"], 4'981'360'128u);
  const auto text =
      run_sparkops({"--root", root(), "plan", "Llama-3.1-8B", "--method", "full", "--nodes", "2",
                    "--shard", "zero3", "--grad-accum", "4", "--budget", "1000"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("2 × 1 GPU zero3 accum 4"), std::string::npos) << text.out;
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--shard", "hsdp"}, {"--gpus", "0"}, {"--grad-accum", "x"}, {"--gpus", "70000"}}) {
    std::vector<std::string> args = {"--root", root(), "plan", "Llama-3.1-8B"};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto b = run_sparkops(args);
    EXPECT_EQ(b.exit_code, 2) << bad[0] << " " << bad[1];
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
    EXPECT_NE(b.err.find(bad[0]), std::string::npos) << b.err;
  }
}

}  // namespace
}  // namespace sparkops::plan
