#include "workloads/classify.hpp"

#include "base/text.hpp"

namespace sparkops::workloads {

namespace {

std::string basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// python, python3, python3.12, python3.12d.
bool is_python(std::string_view program) {
  if (!program.starts_with("python")) return false;
  for (const char c : program.substr(6)) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'd' || c == 'm')) return false;
  }
  return true;
}

std::string_view arg_at(const std::vector<std::string>& argv, std::size_t index) {
  return index < argv.size() ? std::string_view(argv[index]) : std::string_view{};
}

Classification make(Engine e, Role r, std::string label) {
  return Classification{e, r, std::move(label)};
}

// A trainer framework named by a script, module or program; empty when none.
std::string framework_from_name(std::string_view name) {
  const std::string n = to_lower(name);
  if (contains(n, "axolotl")) return "axolotl";
  if (contains(n, "unsloth")) return "Unsloth";
  if (contains(n, "llamafactory") || contains(n, "llama_factory") || contains(n, "llama-factory")) {
    return "LLaMA-Factory";
  }
  if (contains(n, "torchtune")) return "torchtune";
  if (n.starts_with("trl.") || n == "trl") return "TRL";
  if (n.starts_with("nemo.") || n.starts_with("nemo_") || contains(n, "megatron_gpt") ||
      n == "train_evo2") {
    return "NeMo";
  }
  if (n.starts_with("mlx_lm.lora")) return "MLX-LM";
  return {};
}

// train.py, Train_dist.py, train_gsm8k_deepspeed.py, finetune_lora.py, sft.py.
bool is_training_script(std::string_view script) {
  const std::string n = to_lower(script);
  return contains(n, "train") || contains(n, "finetun") || contains(n, "fine_tune") ||
         n.starts_with("sft") || contains(n, "_sft");
}

// What a launcher runs: the first *.py argument or the module after -m / --module.
std::string launcher_target(const std::vector<std::string>& argv, std::size_t from) {
  for (std::size_t i = from; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    if ((a == "-m" || a == "--module") && i + 1 < argv.size() && contains(argv[i + 1], ".")) {
      return argv[i + 1];
    }
    if (a.ends_with(".py")) return basename_of(a);
  }
  return {};
}

std::optional<Classification> classify_title(std::string_view title) {
  // setproctitle also sets comm, truncated to 15 bytes: "VLLM::EngineCor".
  if (title.starts_with("VLLM::EngineCor"))
    return make(Engine::vllm, Role::engine, "vLLM EngineCore");
  if (title.starts_with("VLLM::Worker")) {
    return make(Engine::vllm, Role::worker, "vLLM " + std::string(title.substr(6)));
  }
  if (title.starts_with("VLLM::APIServer")) return make(Engine::vllm, Role::server, "vLLM");
  if (title.starts_with("VLLM::"))
    return make(Engine::vllm, Role::worker, "vLLM " + std::string(title.substr(6)));
  if (title.starts_with("sglang::scheduler"))
    return make(Engine::sglang, Role::engine, "SGLang scheduler");
  if (title.starts_with("sglang::"))
    return make(Engine::sglang, Role::worker, "SGLang " + std::string(title.substr(8)));
  return std::nullopt;
}

std::optional<Classification> classify_program(const Invocation& inv,
                                               const std::vector<std::string>& argv) {
  const std::string& p = inv.program;
  const std::string_view a1 = arg_at(argv, inv.first_arg);
  if (p == "vllm") {
    if (a1 == "serve") return make(Engine::vllm, Role::server, "vLLM");
    return std::nullopt;  // vllm bench / chat / complete are clients
  }
  if (p == "sglang" && a1 == "serve") return make(Engine::sglang, Role::server, "SGLang");
  if (p == "ollama") {
    if (a1 == "serve") return make(Engine::ollama, Role::server, "Ollama serve");
    if (a1 == "runner") return make(Engine::ollama, Role::runner, "Ollama runner");
    return std::nullopt;  // ollama run / pull / ps are clients of the server
  }
  if (p == "ollama_llama_server") return make(Engine::ollama, Role::runner, "Ollama runner");
  if (p == "llama-server" || p == "llama-cli" || p == "llama-mtmd-cli") {
    return make(Engine::llama_cpp, Role::server, p);
  }
  if (p == "llama-finetune") return make(Engine::trainer, Role::trainer, "llama.cpp finetune");
  if (p == "finetune") {
    for (const auto& a : argv) {
      if (a == "--model-base" || a == "--train-data") {
        return make(Engine::trainer, Role::trainer, "llama.cpp finetune");
      }
    }
    return std::nullopt;
  }
  if (p == "text-generation-launcher") return make(Engine::tgi, Role::server, "TGI");
  if (p == "text-generation-server") return make(Engine::tgi, Role::engine, "TGI shard");
  if (p == "text-generation-router") return make(Engine::tgi, Role::worker, "TGI router");
  if (p == "trtllm-serve" || p == "trtllm-llmapi-launch" || p == "trtllm-bench") {
    return make(Engine::tensorrt_llm, Role::server, "TensorRT-LLM");
  }
  if (p == "tritonserver") return make(Engine::tensorrt_llm, Role::server, "Triton server");
  if (p == "trl") return make(Engine::trainer, Role::trainer, "TRL");
  if (p == "axolotl") return make(Engine::trainer, Role::trainer, "axolotl");
  if ((p == "llamafactory-cli" || p == "lmf") && a1 == "train") {
    return make(Engine::trainer, Role::trainer, "LLaMA-Factory");
  }
  if (p == "tune" && a1 == "run") return make(Engine::trainer, Role::trainer, "torchtune");
  if (p == "nemo" || p == "train_evo2") return make(Engine::trainer, Role::trainer, "NeMo");
  if (p == "torchrun") return make(Engine::trainer, Role::launcher, "torchrun");
  if (p == "deepspeed") return make(Engine::trainer, Role::launcher, "deepspeed");
  if (p == "accelerate" && a1 == "launch")
    return make(Engine::trainer, Role::launcher, "accelerate");
  return std::nullopt;
}

std::optional<Classification> classify_module(std::string_view m) {
  if (m.starts_with("vllm.entrypoints")) return make(Engine::vllm, Role::server, "vLLM");
  if (m.starts_with("sglang.") && contains(m, "launch_server")) {
    return make(Engine::sglang, Role::server, "SGLang");
  }
  if (m.starts_with("tensorrt_llm"))
    return make(Engine::tensorrt_llm, Role::server, "TensorRT-LLM");
  if (m == "torch.distributed.run" || m == "torch.distributed.launch") {
    return make(Engine::trainer, Role::launcher, "torchrun");
  }
  if (m.starts_with("deepspeed.launcher"))
    return make(Engine::trainer, Role::launcher, "deepspeed");
  if (m.starts_with("accelerate.commands.launch")) {
    return make(Engine::trainer, Role::launcher, "accelerate");
  }
  if (m == "ipykernel_launcher" || m == "ipykernel") {
    return make(Engine::jupyter, Role::kernel, "Jupyter kernel");
  }
  if (const auto fw = framework_from_name(m); !fw.empty()) {
    return make(Engine::trainer, Role::trainer, fw);
  }
  return std::nullopt;
}

}  // namespace

std::string_view engine_name(Engine e) {
  switch (e) {
    case Engine::vllm:
      return "vllm";
    case Engine::sglang:
      return "sglang";
    case Engine::ollama:
      return "ollama";
    case Engine::llama_cpp:
      return "llama.cpp";
    case Engine::tgi:
      return "tgi";
    case Engine::tensorrt_llm:
      return "tensorrt-llm";
    case Engine::trainer:
      return "trainer";
    case Engine::jupyter:
      return "jupyter";
    case Engine::other:
      return "other";
  }
  return "unknown";
}

std::string_view role_name(Role r) {
  switch (r) {
    case Role::server:
      return "server";
    case Role::engine:
      return "engine";
    case Role::worker:
      return "worker";
    case Role::runner:
      return "runner";
    case Role::launcher:
      return "launcher";
    case Role::trainer:
      return "trainer";
    case Role::kernel:
      return "kernel";
    case Role::child:
      return "child";
    case Role::other:
      return "other";
  }
  return "unknown";
}

Invocation parse_invocation(const std::vector<std::string>& argv) {
  Invocation inv;
  if (argv.empty()) return inv;
  inv.program = basename_of(argv[0]);
  inv.first_arg = 1;
  if (!is_python(inv.program)) return inv;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string_view a = argv[i];
    if (a == "-m") {
      if (i + 1 < argv.size()) inv.module = argv[i + 1];
      inv.first_arg = i + 2;
      return inv;
    }
    if (a == "-c") {
      inv.first_arg = argv.size();
      return inv;
    }
    if (a == "-X" || a == "-W") {
      ++i;
      continue;
    }
    if (a.starts_with("-")) continue;
    inv.first_arg = i + 1;
    if (a.ends_with(".py")) {
      inv.script = basename_of(a);
    } else {
      inv.program = basename_of(a);  // a console script: /venv/bin/vllm
    }
    return inv;
  }
  inv.first_arg = argv.size();
  return inv;
}

std::optional<Classification> classify_process(std::string_view comm,
                                               const std::vector<std::string>& argv) {
  if (argv.size() <= 1) {
    if (auto t = classify_title(argv.empty() ? comm : std::string_view(argv.front()))) return t;
  }
  if (auto t = classify_title(comm)) return t;
  if (argv.empty()) return std::nullopt;
  const Invocation inv = parse_invocation(argv);
  if (!inv.module.empty()) return classify_module(inv.module);
  if (!inv.script.empty()) {
    if (const auto fw = framework_from_name(inv.script); !fw.empty()) {
      return make(Engine::trainer, Role::trainer, fw);
    }
    if (is_training_script(inv.script))
      return make(Engine::trainer, Role::trainer, "python " + inv.script);
    return std::nullopt;
  }
  auto c = classify_program(inv, argv);
  if (c && c->role == Role::launcher) {
    const std::string target = launcher_target(argv, inv.first_arg);
    const std::string fw = framework_from_name(target);
    if (!fw.empty()) c->label += " (" + fw + ")";
  }
  return c;
}

std::optional<Classification> classify_launcher_child(const Classification& parent,
                                                      const std::vector<std::string>& argv) {
  if (parent.role != Role::launcher || argv.empty()) return std::nullopt;
  const Invocation inv = parse_invocation(argv);
  std::string label = parent.label;
  if (const auto paren = label.find(" ("); paren != std::string::npos) label.resize(paren);
  std::string fw = framework_from_name(!inv.module.empty() ? inv.module : inv.script);
  if (fw.empty() && !inv.script.empty()) fw = "python " + inv.script;
  if (fw.empty() && !inv.module.empty()) fw = "python -m " + inv.module;
  return make(Engine::trainer, Role::worker,
              fw.empty() ? label + " worker" : fw + " (" + label + " worker)");
}

}  // namespace sparkops::workloads
