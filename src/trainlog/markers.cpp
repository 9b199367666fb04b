#include "trainlog/markers.hpp"

namespace sparkops::trainlog {

namespace {

struct Pattern {
  std::string_view text;
  MarkerKind kind;
};

// Order matters only for speed; each is a phrase seen in real logs.
constexpr Pattern kPatterns[] = {
    {"Saving model checkpoint", MarkerKind::checkpoint},         // HF Trainer, axolotl, DeepSpeed
    {"saving checkpoint at iteration", MarkerKind::checkpoint},  // Megatron-LM
    {"Saving checkpoint", MarkerKind::checkpoint},               // Lightning / NeMo / torchtune
    {"Saved adapter weights", MarkerKind::checkpoint},           // MLX-LM
    {"save_checkpoint", MarkerKind::checkpoint},                 // llama.cpp finetune
    {"is about to be saved",
     MarkerKind::checkpoint},  // DeepSpeed "[Torch] Checkpoint global_step10 is about to be saved!"
    {"Running Evaluation", MarkerKind::eval},  // HF Trainer "***** Running Evaluation *****"
    {"validation loss at iteration", MarkerKind::eval},            // Megatron-LM
    {"Resuming training from", MarkerKind::restart},               // Lightning / torchtune
    {"Continuing training from checkpoint", MarkerKind::restart},  // HF Trainer
    {"resume_from_checkpoint", MarkerKind::restart},
};

}  // namespace

std::optional<MarkerKind> detect_marker(std::string_view line) {
  for (const auto& p : kPatterns) {
    if (line.find(p.text) != std::string_view::npos) return p.kind;
  }
  return std::nullopt;
}

}  // namespace sparkops::trainlog
