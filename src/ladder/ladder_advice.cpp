#include "ladder/ladder_advice.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/units.hpp"
#include "ladder/server_ladder.hpp"

namespace sparkops::ladder {
namespace {

std::string plan_command(const PlannedRun& p, const plan::RunConfig& run) {
  std::string cmd = fmt::format("sparkops plan {} --method {} --batch {} --seq {}", p.model_arg,
                                plan::method_name(run.method), run.batch, run.seq);
  if (run.nodes > 1) cmd += fmt::format(" --nodes {}", run.nodes);
  return cmd;
}

std::string peak_line(const plan::Estimate& e, std::uint64_t budget) {
  const auto peak = e.peak_pool_bytes();
  return fmt::format("estimated peak {} of a {} budget ({})", format_bytes(peak),
                     format_bytes(budget), peak <= budget ? "fits" : "does not fit");
}

bool current_estimate_fits(const PlannedRun& p) {
  return p.estimate.peak_pool_bytes() <= p.budget_bytes;
}

std::uint64_t halve_seq(std::uint64_t seq) {
  return std::max<std::uint64_t>(128, seq / 2 / 128 * 128);
}

constexpr std::string_view kUnderestimate =
    "the planner estimates the current run within the budget, yet it OOMed, so it cannot size the "
    "cut: halve it";

StepAdvice flush_advice(const std::optional<host::PoolView>& pool) {
  StepAdvice a;
  a.step = LadderStep::flush;
  a.action = "flush the page cache between runs (needs root; changes nothing about the job)";
  a.commands = {"sparkops flush --dry-run", "sudo sparkops flush"};
  if (pool) {
    a.details.push_back(
        fmt::format("MemAvailable - MemFree is {} now: about what a flush gives back "
                    "to CUDA, which sees only MemFree on a unified pool",
                    format_bytes(pool->reclaimable_bytes)));
  }
  a.details.push_back(
      "then rerun the job unchanged; record the outcome with `sparkops oom --done 1` "
      "(sparkops flush records it for you when a ladder state file exists)");
  return a;
}

StepAdvice packing_advice(const std::optional<PlannedRun>& planned) {
  StepAdvice a;
  a.step = LadderStep::packing;
  if (!planned) {
    a.action = "cut the packing length (halve it, e.g. 4096 -> 2048); keep the batch";
    a.details.push_back(
        "describe the run with the plan flags (MODEL --method --batch --seq ...) for "
        "the largest packing length that fits");
    return a;
  }
  const auto& run = planned->run;
  plan::RunConfig next = run;
  if (current_estimate_fits(*planned)) {
    next.seq = halve_seq(run.seq);
    a.details.emplace_back(kUnderestimate);
  } else if (auto fit = plan::largest_seq_that_fits(planned->shape, run, planned->budget_bytes,
                                                    planned->largest_shard_bytes)) {
    next = fit->run;
    a.details.push_back(peak_line(fit->estimate, planned->budget_bytes));
  } else {
    next.seq = halve_seq(run.seq);
    a.details.push_back(
        fmt::format("no packing length fits at batch {} by the estimate; halve it, "
                    "and go on to step 2b if it still fails",
                    run.batch));
  }
  a.action = fmt::format("cut the packing length from {} to {} tokens; keep batch {}", run.seq,
                         next.seq, run.batch);
  a.commands.push_back(plan_command(*planned, next));
  a.changes = {fmt::format("TRL SFTConfig: max_length={} (max_seq_length in older TRL)", next.seq),
               fmt::format("axolotl: sequence_len: {}", next.seq),
               fmt::format("LLaMA-Factory: cutoff_len: {}", next.seq)};
  a.new_run = next;
  return a;
}

StepAdvice batch_advice(const std::optional<PlannedRun>& planned) {
  StepAdvice a;
  a.step = LadderStep::batch;
  if (!planned) {
    a.action =
        "cut the micro-batch (halve it) and raise gradient accumulation to keep the "
        "effective batch";
    a.details.push_back("describe the run with the plan flags for the largest batch that fits");
    return a;
  }
  const auto& run = planned->run;
  plan::RunConfig next = run;
  if (current_estimate_fits(*planned)) {
    next.batch = std::max<std::uint64_t>(1, run.batch / 2);
    a.details.emplace_back(kUnderestimate);
  } else if (auto fit = plan::largest_batch_that_fits(planned->shape, run, planned->budget_bytes,
                                                      planned->largest_shard_bytes)) {
    next = fit->run;
    a.details.push_back(peak_line(fit->estimate, planned->budget_bytes));
  } else {
    next.batch = 1;
    a.details.push_back(
        fmt::format("no batch fits at packing {} by the estimate; use 1 and go on to "
                    "step 3 if it still fails",
                    run.seq));
  }
  a.action = fmt::format("cut the micro-batch from {} to {} at packing {}", run.batch, next.batch,
                         run.seq);
  a.commands.push_back(plan_command(*planned, next));
  const auto factor = next.batch == 0 ? 1 : (run.batch + next.batch - 1) / next.batch;
  a.changes = {fmt::format("per_device_train_batch_size={} (axolotl: micro_batch_size: {})",
                           next.batch, next.batch),
               fmt::format("gradient_accumulation_steps x{} to keep the effective batch", factor)};
  a.new_run = next;
  return a;
}

StepAdvice method_advice(LadderStep step, const std::optional<PlannedRun>& planned) {
  StepAdvice a;
  a.step = step;
  const bool to_lora = step == LadderStep::method_lora;
  a.action = to_lora ? "switch from a full fine-tune to bf16 LoRA"
                     : "switch from bf16 LoRA to QLoRA (4-bit NF4 base weights)";
  a.changes = to_lora
                  ? std::vector<std::string>{"peft LoraConfig(r=16, target_modules=\"all-linear\"), "
                                             "model in bf16 (axolotl: adapter: lora)"}
                  : std::vector<std::string>{"BitsAndBytesConfig(load_in_4bit=True, "
                                             "bnb_4bit_quant_type=\"nf4\", "
                                             "bnb_4bit_use_double_quant=True, "
                                             "bnb_4bit_compute_dtype=torch.bfloat16) "
                                             "(axolotl: adapter: qlora, load_in_4bit: true)"};
  if (!to_lora) a.details.emplace_back(step_reason(LadderStep::method_qlora));
  if (!planned) {
    a.details.push_back("describe the run with the plan flags for the estimate of the next tier");
    return a;
  }
  plan::RunConfig from = planned->run;
  if (!to_lora && from.method == plan::Method::full) {
    from = plan::method_tier_down(from).value_or(from);  // 3a was taken: start from bf16 LoRA
  }
  const auto next = plan::method_tier_down(from);
  if (!next) return a;
  const auto est = plan::estimate(planned->shape, *next, planned->largest_shard_bytes);
  a.details.push_back(peak_line(est, planned->budget_bytes));
  plan::RunConfig chosen = *next;
  if (est.peak_pool_bytes() > planned->budget_bytes) {
    if (auto fit = plan::largest_seq_that_fits(planned->shape, *next, planned->budget_bytes,
                                               planned->largest_shard_bytes)) {
      chosen = fit->run;
      a.details.push_back(fmt::format("at packing {}: {}", chosen.seq,
                                      peak_line(fit->estimate, planned->budget_bytes)));
    }
  }
  a.commands.push_back(plan_command(*planned, chosen));
  a.new_run = chosen;
  return a;
}

StepAdvice scale_advice(const std::optional<PlannedRun>& planned) {
  StepAdvice a;
  a.step = LadderStep::scale;
  a.action = "use a smaller model, or split the run across several machines (FSDP full shard)";
  a.details.push_back(
      "two Sparks linked over ConnectX-7 run DDP/FSDP; tensor parallel across the "
      "link is not viable");
  if (!planned) {
    a.commands.push_back("sparkops plan MODEL --nodes 2");
    return a;
  }
  plan::RunConfig two = planned->run;
  two.nodes = std::max<std::uint64_t>(2, planned->run.nodes + 1);
  const auto est = plan::estimate(planned->shape, two, planned->largest_shard_bytes);
  a.details.push_back(
      fmt::format("with {} nodes: {}", two.nodes, peak_line(est, planned->budget_bytes)));
  a.commands.push_back(plan_command(*planned, two));
  a.new_run = two;
  return a;
}

void add_failure_notes(const OomReport& r, const AdviceInput& in, std::vector<std::string>& notes) {
  if (r.phase == OomPhase::load && r.kind != OomKind::server_admission) {
    notes.push_back(
        "this OOM happened while loading: the peak is the load transient (the weights plus the "
        "mmap'd safetensors: up to ~2x the checkpoint as one mmap, weights + one shard when shards "
        "load one at a time; QLoRA quantizes from the bf16 shard), not activations, so packing and "
        "batch do not change it. The flush (step 1) gives the mmap'd pages room; smaller shards "
        "lower the transient");
    if (in.planned) {
      const auto& e = in.planned->estimate;
      notes.push_back(fmt::format(
          "estimated load peak {} (largest shard {}), training peak {}, "
          "budget {}",
          format_bytes(e.load_peak_pool_bytes), format_bytes(e.largest_shard_bytes),
          format_bytes(e.train_peak_pool_bytes), format_bytes(in.planned->budget_bytes)));
    }
  }
  switch (r.kind) {
    case OomKind::cgroup_oom_killer:
      notes.push_back(
          "a memory cgroup limit was hit (container or systemd scope), not the whole "
          "pool: check the limit (`sparkops status` shows it) before cutting the run");
      break;
    case OomKind::server_admission:
      notes.push_back(
          "the server refused to start: vLLM compares --gpu-memory-utilization x total "
          "with free memory, and on a unified pool free memory is MemFree (page cache "
          "counts as used). Flush first, then stop other GPU servers (`sparkops procs`) "
          "or lower --gpu-memory-utilization");
      break;
    case OomKind::host_oom_killer:
      if (r.evidence == Evidence::inferred) {
        notes.push_back(
            "exit -9/137 (SIGKILL) is usually the kernel OOM killer; confirm with "
            "`journalctl -k | grep -i 'killed process'`");
      }
      break;
    case OomKind::driver:
      notes.push_back(
          "NVRM NV_ERR_NO_MEMORY alone is also logged on healthy hosts: treat it as "
          "memory pressure, not proof of an OOM");
      break;
    default:
      break;
  }
  const bool qlora = in.planned && in.planned->run.method == plan::Method::qlora;
  if (r.bitsandbytes_on_stack && qlora) {
    plan::RunConfig lora = in.planned->run;
    lora.method = plan::Method::lora;
    lora.kbit_prep = plan::KbitPrep::off;
    const auto est = plan::estimate(in.planned->shape, lora, in.planned->largest_shard_bytes);
    if (est.peak_pool_bytes() <= in.planned->budget_bytes) {
      notes.push_back(fmt::format(
          "this QLoRA OOM has bitsandbytes dequantization on the stack, and bf16 LoRA is estimated "
          "to fit ({}): QLoRA's dequantization buffers are transient allocations that can OOM "
          "before an equivalent bf16 LoRA run would, so this is not proof that the model does not "
          "fit. Try bf16 LoRA: {}",
          peak_line(est, in.planned->budget_bytes), plan_command(*in.planned, lora)));
    }
  } else if (r.bitsandbytes_on_stack) {
    notes.push_back(
        "bitsandbytes frames are on the stack: QLoRA's dequantization buffers are "
        "transient allocations that can OOM before an equivalent bf16 LoRA run would");
  }
}

}  // namespace

std::string model_arg_of(const plan::PlanArgs& args) {
  return args.model.empty() ? fmt::format("--params {}", args.params) : args.model;
}

PlannedRun planned_run_of(const plan::PlanResult& plan, std::string model_arg) {
  PlannedRun p;
  p.model_arg = std::move(model_arg);
  p.shape = plan.model.shape;
  p.run = plan.run;
  p.budget_bytes = plan.budget_bytes;
  if (!plan.model.shards.empty()) p.largest_shard_bytes = plan.estimate.largest_shard_bytes;
  p.estimate = plan.estimate;
  return p;
}

StepAdvice advise_step(LadderStep s, const std::optional<PlannedRun>& planned,
                       const std::optional<host::PoolView>& pool) {
  switch (s) {
    case LadderStep::flush:
      return flush_advice(pool);
    case LadderStep::packing:
      return packing_advice(planned);
    case LadderStep::batch:
      return batch_advice(planned);
    case LadderStep::method_lora:
    case LadderStep::method_qlora:
      return method_advice(s, planned);
    case LadderStep::scale:
      return scale_advice(planned);
    case LadderStep::server_hold:
    case LadderStep::server_cap:
      return advise_server_step(s, ServerFailure{}, pool);
  }
  return flush_advice(pool);
}

OomAdvice advise_oom(const AdviceInput& in) {
  OomAdvice out;
  if (in.report && in.report->kind == OomKind::not_oom) {
    out.ladder_applies = false;
    out.notes.push_back(
        "no out-of-memory failure in this text: the ladder does not apply and "
        "nothing was recorded");
    return out;
  }
  if (in.report && !in.report->memory_exhausted) {
    // NVRM Xid 31 (NVIDIA Xid catalogue: MMU_ERR, GPU memory page fault; resolution
    // RESTART_APP, investigate the application): a kernel used an address with no valid mapping.
    out.ladder_applies = false;
    out.notes.push_back(
        "this is a GPU memory page fault (NVRM Xid 31), not a lack of memory: a kernel read or "
        "wrote an address with no valid mapping (an out-of-bounds index, a use-after-free, a "
        "driver/library bug). Smaller batches or flushing do not fix it, so the ladder does not "
        "apply; rerun with CUDA_LAUNCH_BLOCKING=1 or under compute-sanitizer to find the kernel");
    return out;
  }
  std::optional<ServerFailure> server;
  if (in.ctx.server && in.server_engine) {
    server = ServerFailure{*in.server_engine, in.server_facts, in.serving, in.model_arg};
    for (auto& n : server_failure_notes(*server)) out.notes.push_back(std::move(n));
    if (in.report && in.report->phase == OomPhase::load) {
      out.notes.push_back(
          "this failure happened while loading: the peak is the load transient (the model file's "
          "pages in the page cache beside the copies in CUDA buffers, until reclaimed), so the "
          "flush (step 1) gives the load room before anything the server holds is cut");
    }
  }
  if (in.report && !server) add_failure_notes(*in.report, in, out.notes);
  if (in.state.resolved()) {
    out.notes.push_back(fmt::format("the ladder is resolved: the run went through after step {}",
                                    step_id(in.state.last()->step)));
    return out;
  }
  const auto next = next_step(in.state, in.ctx);
  if (!next) {
    out.notes.push_back("every step of the ladder has been tried");
    return out;
  }
  out.next = server ? advise_server_step(*next, *server, in.pool)
                    : advise_step(*next, in.planned, in.pool);
  return out;
}

}  // namespace sparkops::ladder
