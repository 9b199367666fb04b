#include "workloads/classify.hpp"

#include <gtest/gtest.h>

namespace sparkops::workloads {
namespace {

using Argv = std::vector<std::string>;

struct Case {
  std::string comm;
  Argv argv;
  Engine engine;
  Role role;
  std::string label;
};

// Command lines as /proc shows the server and trainer commands of the command-line corpus
// (docs/procs.md; the trees built from them are tests/fixtures/procs).
TEST(Classify, CorpusCommandLines) {
  const std::string py = "/home/u/.venv/bin/python3";
  const std::vector<Case> cases = {
      {"python",
       {"python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m",
        "--gpu-memory-utilization", "0.9"},
       Engine::vllm,
       Role::server,
       "vLLM"},
      {"vllm",
       {py, "/home/u/.venv/bin/vllm", "serve", "m", "--gpu-memory-utilization", "0.95"},
       Engine::vllm,
       Role::server,
       "vLLM"},
      {"vllm", {"vllm", "serve", "/workspace/model"}, Engine::vllm, Role::server, "vLLM"},
      {"VLLM::EngineCor", {"VLLM::EngineCore"}, Engine::vllm, Role::engine, "vLLM EngineCore"},
      {"VLLM::EngineCor", {}, Engine::vllm, Role::engine, "vLLM EngineCore"},
      {"VLLM::Worker_TP", {"VLLM::Worker_TP1"}, Engine::vllm, Role::worker, "vLLM Worker_TP1"},
      {"python",
       {"python", "-m", "sglang.launch_server", "--model-path", "m", "--mem-fraction-static",
        "0.6"},
       Engine::sglang,
       Role::server,
       "SGLang"},
      {"sglang::schedul",
       {"sglang::scheduler_TP0"},
       Engine::sglang,
       Role::engine,
       "SGLang scheduler"},
      {"ollama", {"/usr/local/bin/ollama", "serve"}, Engine::ollama, Role::server, "Ollama serve"},
      {"ollama",
       {"/usr/local/bin/ollama", "runner", "--model", "/blobs/sha256-x", "--port", "41235"},
       Engine::ollama,
       Role::runner,
       "Ollama runner"},
      {"ollama_llama_se",
       {"/tmp/ollama123/runners/cuda_v12/ollama_llama_server", "--model", "x"},
       Engine::ollama,
       Role::runner,
       "Ollama runner"},
      {"llama-server",
       {"./build/bin/llama-server", "-m", "x.gguf", "-c", "0", "-ngl", "99"},
       Engine::llama_cpp,
       Role::server,
       "llama-server"},
      {"llama-cli", {"llama-cli", "-m", "x.gguf"}, Engine::llama_cpp, Role::server, "llama-cli"},
      {"text-generation",
       {"text-generation-launcher", "--model-id", "x"},
       Engine::tgi,
       Role::server,
       "TGI"},
      {"trtllm-serve",
       {"/usr/bin/python3", "/usr/local/bin/trtllm-serve", "x"},
       Engine::tensorrt_llm,
       Role::server,
       "TensorRT-LLM"},
      {"trl",
       {py, "/home/u/.venv/bin/trl", "sft", "--model_name_or_path", "Qwen/Qwen2.5-0.5B"},
       Engine::trainer,
       Role::trainer,
       "TRL"},
      {"axolotl",
       {py, "/home/u/.venv/bin/axolotl", "train", "lora-1b.yml"},
       Engine::trainer,
       Role::trainer,
       "axolotl"},
      {"python3",
       {"python3", "train_llm_axolotl.py", "--config", "c.yaml"},
       Engine::trainer,
       Role::trainer,
       "axolotl"},
      {"python",
       {"python", "-m", "axolotl.cli.train", "c.yml"},
       Engine::trainer,
       Role::trainer,
       "axolotl"},
      {"python", {"python", "unsloth_qlora.py"}, Engine::trainer, Role::trainer, "Unsloth"},
      {"llamafactory-cl",
       {py, "/v/bin/llamafactory-cli", "train", "x.yaml"},
       Engine::trainer,
       Role::trainer,
       "LLaMA-Factory"},
      {"tune",
       {py, "/v/bin/tune", "run", "lora_finetune_single_device"},
       Engine::trainer,
       Role::trainer,
       "torchtune"},
      {"train_evo2",
       {"/opt/conda/bin/python3", "/opt/conda/bin/train_evo2", "-d", "c.yaml"},
       Engine::trainer,
       Role::trainer,
       "NeMo"},
      {"python",
       {"python", "-m", "mlx_lm.lora", "--train"},
       Engine::trainer,
       Role::trainer,
       "MLX-LM"},
      {"finetune",
       {"./finetune", "--model-base", "m.gguf", "--train-data", "s.txt"},
       Engine::trainer,
       Role::trainer,
       "llama.cpp finetune"},
      {"torchrun",
       {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc_per_node=4", "./lmy/Train_dist.py"},
       Engine::trainer,
       Role::launcher,
       "torchrun"},
      {"python",
       {"python", "-m", "torch.distributed.run", "--nproc_per_node", "2", "train.py"},
       Engine::trainer,
       Role::launcher,
       "torchrun"},
      {"accelerate",
       {"/usr/bin/python3", "/usr/local/bin/accelerate", "launch", "-m", "axolotl.cli.train",
        "c.yml"},
       Engine::trainer,
       Role::launcher,
       "accelerate (axolotl)"},
      {"deepspeed",
       {"/usr/bin/python3", "/usr/local/bin/deepspeed", "train.py"},
       Engine::trainer,
       Role::launcher,
       "deepspeed"},
      {"python3",
       {"/usr/bin/python3", "-u", "./lmy/Train_dist.py"},
       Engine::trainer,
       Role::trainer,
       "python Train_dist.py"},
      {"python3",
       {py, "-m", "ipykernel_launcher", "-f", "/run/kernel-1.json"},
       Engine::jupyter,
       Role::kernel,
       "Jupyter kernel"},
  };
  for (const auto& c : cases) {
    const auto got = classify_process(c.comm, c.argv);
    ASSERT_TRUE(got) << (c.argv.empty() ? c.comm : c.argv.front());
    EXPECT_EQ(got->engine, c.engine) << c.label;
    EXPECT_EQ(got->role, c.role) << c.label;
    EXPECT_EQ(got->label, c.label);
  }
}

TEST(Classify, WrappersClientsAndViewersAreNotWorkloads) {
  const std::vector<Argv> not_workloads = {
      {"grep", "-E", "vllm|ollama|trl|axolotl"},
      {"tail", "-f", "vllm.log"},
      {"docker", "run", "--gpus", "all", "nvcr.io/nvidia/vllm:26.09-py3", "vllm", "serve", "m"},
      {"ollama", "run", "llama3"},
      {"ollama", "ps"},
      {"/home/u/.venv/bin/python3", "/home/u/.venv/bin/vllm", "bench", "serve"},
      {"python3", "-c", "import torch; print(1)"},
      {"python3", "app.py"},
      {"./finetune", "--help"},
      {"bash", "train.sh"},
  };
  for (const auto& argv : not_workloads) {
    EXPECT_FALSE(classify_process("x", argv)) << argv.front() << " " << argv.back();
  }
}

TEST(Classify, LauncherChildIsAWorkerEvenWithAPlainScriptName) {
  const Classification torchrun{Engine::trainer, Role::launcher, "torchrun"};
  const auto w =
      classify_launcher_child(torchrun, {"/usr/bin/python3", "-u", "example_chat_completion.py"});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->role, Role::worker);
  EXPECT_EQ(w->label, "python example_chat_completion.py (torchrun worker)");
  const Classification server{Engine::vllm, Role::server, "vLLM"};
  EXPECT_FALSE(classify_launcher_child(server, {"python3", "x.py"}));
}

TEST(Invocation, PythonOptionsAreSkipped) {
  const auto inv = parse_invocation(
      {"/usr/bin/python3.12", "-u", "-X", "faulthandler", "-m", "trl.scripts.sft", "--x"});
  EXPECT_EQ(inv.program, "python3.12");
  EXPECT_EQ(inv.module, "trl.scripts.sft");
  EXPECT_EQ(inv.first_arg, 6u);
}

}  // namespace
}  // namespace sparkops::workloads
