#pragma once
// The OOM ladder of an inference server (docs/oom-ladder.md "Servers"): when the failed program is
// a server (vLLM, SGLang, Ollama, llama.cpp, TensorRT), the training steps (packing, batch, method)
// do not apply and the server's do, in this order:
//   1  flush the page cache (the same step, the same refusal while a trainer runs);
//   2s lower what the engine holds: context (--max-model-len, -c, OLLAMA_CONTEXT_LENGTH), sequences
//      (--max-num-seqs, -np, OLLAMA_NUM_PARALLEL), the KV cache dtype (fp8, q8_0);
//   3s the cap: --gpu-memory-utilization / --mem-fraction-static, -ngl, fewer loaded models;
//   4  a smaller or more quantized model.
// Exact values come from the failure text (vLLM prints the free memory and the maximum model
// length it could serve) and from the serving plan when the server was described (--serve).
// Pure: no I/O.

#include <optional>
#include <string>
#include <vector>

#include "host/pool.hpp"
#include "ladder/ladder.hpp"
#include "serving/server_log.hpp"
#include "serving/serving_plan.hpp"

namespace sparkops::ladder {

struct StepAdvice;

struct ServerFailure {
  serving::ServeEngine engine = serving::ServeEngine::vllm;
  serving::ServerLogFacts facts;             // what the failure text says
  std::optional<serving::ServingPlan> plan;  // --serve ENGINE [flags]: the server as described
  std::string model_arg;                     // MODEL as typed, for the commands printed
};

// The advice for a server step: flush, server_hold, server_cap or scale.
StepAdvice advise_server_step(LadderStep s, const ServerFailure& f,
                              const std::optional<host::PoolView>& pool);

// One note about the failure, before the step ("vLLM refused to start: CUDA's free memory ...").
std::vector<std::string> server_failure_notes(const ServerFailure& f);

}  // namespace sparkops::ladder
