#include "ladder/ladder.hpp"

#include <fmt/format.h>

namespace sparkops::ladder {

bool step_applies(LadderStep s, const LadderContext& ctx, std::string* why) {
  const bool server_step = s == LadderStep::server_hold || s == LadderStep::server_cap;
  const bool training_step = s == LadderStep::packing || s == LadderStep::batch ||
                             s == LadderStep::method_lora || s == LadderStep::method_qlora;
  if (ctx.server && training_step) {
    if (why) *why = "an inference server: its ladder has no training steps";
    return false;
  }
  if (!ctx.server && server_step) {
    if (why) *why = "a training run: the server steps do not apply";
    return false;
  }
  if (ctx.server) return true;
  if (s == LadderStep::batch && ctx.batch && *ctx.batch <= 1) {
    if (why) *why = "the micro-batch is already 1";
    return false;
  }
  if (!ctx.method) return true;
  const auto method = *ctx.method;
  if (s == LadderStep::method_lora && method != plan::Method::full) {
    if (why) *why = fmt::format("the run is already {}", plan::method_name(method));
    return false;
  }
  if (s == LadderStep::method_qlora && method == plan::Method::qlora) {
    if (why) *why = "the run is already QLoRA";
    return false;
  }
  return true;
}

std::optional<LadderStep> next_step(const LadderState& state, const LadderContext& ctx) {
  if (state.resolved()) return std::nullopt;
  for (const auto s : kLadderOrder) {
    if (step_applies(s, ctx) && !state.tried(s)) return s;
  }
  return std::nullopt;
}

std::string_view step_reason(LadderStep s) {
  switch (s) {
    case LadderStep::flush:
      return "flushing the page cache is a between-run reset that changes nothing about the job, "
             "and on a unified pool the cache counts as used for CUDA (its free memory is MemFree)";
    case LadderStep::packing:
      return "the packing length drives activations more directly at long context, so it is cut "
             "before the batch (reducing batch is never the first step)";
    case LadderStep::batch:
      return "packing and batch are cut before the training method is changed";
    case LadderStep::method_lora:
      return "bf16 LoRA comes before QLoRA";
    case LadderStep::method_qlora:
      return "QLoRA's bitsandbytes dequantization buffers are transient allocations that can OOM "
             "before an equivalent bf16 LoRA run would, so QLoRA comes after bf16 LoRA and before "
             "a smaller model";
    case LadderStep::server_hold:
      return "lowering what the server holds (context, sequences, KV dtype) keeps the model and "
             "its cap, so it comes before the cap";
    case LadderStep::server_cap:
      return "the cap comes after what the server holds and before a smaller model";
    case LadderStep::scale:
      return "a smaller model or several machines is the last resort";
  }
  return "";
}

Status check_can_record(const LadderState& state, LadderStep s, const LadderContext& ctx,
                        Force force) {
  if (force == Force::yes) return {};
  std::string why;
  if (!step_applies(s, ctx, &why)) {
    return fail(Errc::conflict,
                fmt::format("step {} ({}) does not apply: {}; pass --force to record "
                            "it anyway",
                            step_id(s), step_title(s), why));
  }
  for (const auto earlier : kLadderOrder) {
    if (earlier == s) break;
    if (!step_applies(earlier, ctx) || state.tried(earlier)) continue;
    return fail(Errc::conflict,
                fmt::format("refusing to record step {} ({}): step {} ({}) has not been tried: "
                            "{}. Try it, record it with `sparkops oom --done {}`, or pass --force",
                            step_id(s), step_title(s), step_id(earlier), step_title(earlier),
                            step_reason(earlier), step_id(earlier)));
  }
  return {};
}

Status record_step(LadderState& state, LadderStep s, StepResult result, SystemTime at,
                   const LadderContext& ctx, Force force, std::string note) {
  const bool skipped = !check_can_record(state, s, ctx, Force::no).has_value();
  if (auto ok = check_can_record(state, s, ctx, force); !ok) return ok;
  state.steps.push_back(StepRecord{s, at, result, skipped, std::move(note)});
  return {};
}

}  // namespace sparkops::ladder
