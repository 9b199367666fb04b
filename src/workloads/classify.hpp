#pragma once
// Workload classifier: from a process's comm and argv (never its environment) to what it is.
// Programs are recognised by the basename of argv[0], by a console script run through python
// ("/venv/bin/python3 /venv/bin/vllm serve ..."), by `python -m module`, by a python script name,
// and by process titles set with setproctitle ("VLLM::EngineCore", "sglang::scheduler").
// Wrappers that hold no model memory (docker/podman run, sudo, ssh, shells, ollama clients) are not
// workloads: the process they start is.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkops::workloads {

// `other`: a process no rule names that holds GPU memory (a custom script, a notebook server...).
enum class Engine { vllm, sglang, ollama, llama_cpp, tgi, tensorrt_llm, trainer, jupyter, other };

enum class Role {
  server,    // API server / launcher that owns the model flags (vllm serve, ollama serve)
  engine,    // engine process holding the weights (VLLM::EngineCore, sglang::scheduler, TGI shard)
  worker,    // tensor-parallel / distributed worker (VLLM::Worker_TP0, torchrun rank)
  runner,    // ollama runner: one loaded model
  launcher,  // torchrun / accelerate launch / deepspeed: spawns the trainer workers
  trainer,   // a training process
  kernel,    // Jupyter kernel
  child,     // an unclassified descendant of a workload (multiprocessing child, dataloader)
  other,     // an unclassified process holding GPU memory
};

std::string_view engine_name(Engine e);  // "vllm", "sglang", ..., stable for JSON
std::string_view role_name(Role r);      // "server", "engine", ...

struct Classification {
  Engine engine = Engine::trainer;
  Role role = Role::trainer;
  std::string label;  // for people: "vLLM", "vLLM EngineCore", "TRL", "torchrun", "Jupyter kernel"
};

// How a command line starts: the program, and for python the module or script it runs.
struct Invocation {
  std::string program;        // basename of argv[0], or of the console script python runs
  std::string module;         // python -m <module>
  std::string script;         // basename of the .py script python runs
  std::size_t first_arg = 0;  // index in argv of the first argument after program/module/script
};
Invocation parse_invocation(const std::vector<std::string>& argv);

// nullopt: not a workload sparkops tracks.
std::optional<Classification> classify_process(std::string_view comm,
                                               const std::vector<std::string>& argv);

// A python process whose parent is a launcher (torchrun, accelerate, deepspeed) is one of its
// workers even when its script name says nothing ("python -u example_chat_completion.py").
std::optional<Classification> classify_launcher_child(const Classification& parent,
                                                      const std::vector<std::string>& argv);

}  // namespace sparkops::workloads
