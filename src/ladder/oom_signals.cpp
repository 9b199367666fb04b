#include "ladder/oom_signals.hpp"

#include <array>

namespace sparkops::oomsig {
namespace {

using oomtext::BareNumber;
using oomtext::DenseView;
using oomtext::SiPrefix;
using oomtext::TokenEnd;

constexpr std::size_t npos = std::string_view::npos;

Needle sig(std::string_view text, SignalClass c, std::string_view display,
           Check check = Check::none) {
  return Needle{text, Role::signal, c, check, display};
}
Needle mark(std::string_view text, Role role, Check check = Check::none) {
  return Needle{text, role, SignalClass::driver, check, {}};
}

// First occurrence at or after `from`, else the last one before it (facts sit after the message in
// most wordings, before it in ggml's and vLLM's).
std::size_t find_near(std::string_view lower, std::string_view what, std::size_t from) {
  const auto after = lower.find(what, from);
  if (after != npos) return after;
  if (from == 0) return npos;
  return lower.rfind(what, from - 1);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

void read_victim(const DenseView& v, std::size_t from, Facts& facts) {
  // Kernel: "Out of memory: Killed process 3742074 (lmcache) total-vm:..."
  const auto killed = find_near(v.lower, "killedprocess", from);
  if (killed != npos) {
    const auto at = killed + std::string_view("killedprocess").size();
    facts.pid = oomtext::pid_at(v.lower, at);
    const auto open = v.lower.find('(', at);
    if (open != npos && open < at + 12) {
      auto name = oomtext::token_at(v, open + 1, ")", TokenEnd::stop_char);
      if (!name.empty()) facts.process = std::move(name);
    }
    return;
  }
  // Kernel: "oom-kill:constraint=CONSTRAINT_NONE,...,task=lmcache,pid=3742074,uid=0"
  const auto task = find_near(v.lower, "task=", from);
  if (task != npos) {
    auto name = oomtext::token_at(v, task + 5, ",", TokenEnd::stop_char_or_space);
    if (!name.empty()) facts.process = std::move(name);
    const auto pid = v.lower.find(",pid=", task);
    if (pid != npos && pid < task + 80) facts.pid = oomtext::pid_at(v.lower, pid + 5);
  }
}

void read_launcher_victim(const DenseView& v, std::size_t from, Facts& facts) {
  // torchrun: "failed (exitcode: -9) local_rank: 0 (pid: 11127) of binary: /.../bin/python"
  //           "traceback : Signal 9 (SIGKILL) received by PID 11127"
  for (const std::string_view key : {"(pid:", "receivedbypid", "pid="}) {
    const auto at = find_near(v.lower, key, from);
    if (at != npos) {
      facts.pid = oomtext::pid_at(v.lower, at + key.size());
      if (facts.pid) break;
    }
  }
  const auto binary = find_near(v.lower, "ofbinary:", from);
  if (binary != npos) {
    const auto path = oomtext::token_at(v, binary + 9, "", TokenEnd::stop_char_or_space, 256);
    const auto slash = path.rfind('/');
    auto name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (!name.empty()) facts.process = std::move(name);
  }
}

void read_allocator(const DenseView& v, std::size_t from, SiPrefix si, Facts& facts) {
  // "Tried to allocate 3.75 GiB. GPU 0 has a total capacity of 22.05 GiB of which 3.17 GiB is
  //  free." (torch >= 2.1) and "Tried to allocate 4.43 GiB (GPU 0; 23.48 GiB total capacity;
  //  17.83 GiB already allocated; 3.75 GiB free; ...)" (torch <= 2.0)
  const auto lower = v.lower;
  auto at = lower.find("triedtoallocate", from);
  if (at != npos) facts.requested_bytes = oomtext::quantity_at(lower, at + 15, si);
  at = lower.find("totalcapacityof", from);
  if (at != npos) {
    facts.capacity_bytes = oomtext::quantity_at(lower, at + 15, si);
  } else if ((at = lower.find("totalcapacity", from)) != npos) {
    facts.capacity_bytes = oomtext::quantity_before(lower, at, si);
  }
  at = lower.find("ofwhich", from);
  if (at != npos) {
    facts.free_bytes = oomtext::quantity_at(lower, at + 7, si);
  } else if ((at = lower.find("free;", from)) != npos) {
    facts.free_bytes = oomtext::quantity_before(lower, at, si);
  }
  // MPS: "(MPS allocated: 17.36 GB, other allocations: 613.56 MB, max allowed: 18.13 GB)"
  at = lower.find("maxallowed:", from);
  if (at != npos && !facts.capacity_bytes) {
    facts.capacity_bytes = oomtext::quantity_at(lower, at + 11, si);
  }
}

void read_runtime(const DenseView& v, std::size_t from, Facts& facts) {
  const auto lower = v.lower;
  // PyTorch's MPS allocator formats sizes with 1024 steps but prints "GB"/"MB".
  const bool mps = lower.find("mpsbackendoutofmemory") != npos;
  read_allocator(v, from, mps ? SiPrefix::binary : SiPrefix::decimal, facts);
  if (facts.requested_bytes) return;
  // ggml: "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 590.07 MiB on device 0:
  //        cudaMalloc failed: out of memory"
  auto at = find_near(lower, "allocating", from);
  if (at != npos) {
    facts.requested_bytes = oomtext::quantity_at(lower, at + 10, SiPrefix::decimal);
    if (facts.requested_bytes) return;
  }
  // ggml: "failed to allocate CUDA0 buffer of size 1234567"
  at = find_near(lower, "bufferofsize", from);
  if (at != npos) {
    facts.requested_bytes =
        oomtext::quantity_at(lower, at + 12, SiPrefix::decimal, BareNumber::bytes);
    if (facts.requested_bytes) return;
  }
  // XLA: "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes."
  at = find_near(lower, "whiletryingtoallocate", from);
  if (at != npos) {
    facts.requested_bytes =
        oomtext::quantity_at(lower, at + 21, SiPrefix::decimal, BareNumber::bytes);
  }
}

// "(2.6/121.63 GiB)": free / total, one unit after both.
void read_free_over_total(std::string_view lower, std::size_t open, Facts& facts) {
  const auto slash = lower.find('/', open);
  if (slash == npos || slash > open + 24) return;
  facts.capacity_bytes = oomtext::quantity_at(lower, slash + 1, SiPrefix::decimal);
  if (!facts.capacity_bytes) return;
  std::size_t unit = slash + 1;
  while (unit < lower.size() && (is_digit(lower[unit]) || lower[unit] == '.')) ++unit;
  const auto close = lower.find(')', unit);
  if (close == npos || close > unit + 6) return;
  std::string text(lower.substr(open + 1, slash - open - 1));
  text += lower.substr(unit, close - unit);
  facts.free_bytes = oomtext::quantity_at(text, 0, SiPrefix::decimal);
}

void read_admission(const DenseView& v, std::size_t from, Facts& facts) {
  const auto lower = v.lower;
  // vLLM: "Free memory on device cuda:0 (2.6/121.63 GiB) on startup is less than desired GPU
  //        memory utilization (0.08, 9.73 GiB)."
  auto at = find_near(lower, "freememoryondevice", from);
  if (at != npos) {
    const auto open = lower.find('(', at);
    if (open != npos && open < at + 40) read_free_over_total(lower, open, facts);
  }
  at = find_near(lower, "desiredgpumemoryutilization(", from);
  if (at != npos) {
    const auto comma = lower.find(',', at);
    if (comma != npos && comma < at + 40) {
      facts.requested_bytes = oomtext::quantity_at(lower, comma + 1, SiPrefix::decimal);
    }
  }
  // Ollama: "model requires more system memory (44.0 GiB) than is available (7.6 GiB)"
  at = find_near(lower, "requiresmoresystemmemory(", from);
  if (at != npos) facts.requested_bytes = oomtext::quantity_at(lower, at + 25, SiPrefix::decimal);
  at = find_near(lower, "thanisavailable(", from);
  if (at != npos) facts.free_bytes = oomtext::quantity_at(lower, at + 16, SiPrefix::decimal);
}

bool followed_by_kill_code(std::string_view lower, std::size_t end) {
  std::size_t i = end;
  while (i < lower.size() && i < end + 3 &&
         (lower[i] == ':' || lower[i] == '=' || lower[i] == '(' || lower[i] == '[')) {
    ++i;
  }
  const auto rest = lower.substr(i);
  for (const std::string_view code : {"-9", "137"}) {
    if (rest.substr(0, code.size()) == code &&
        (rest.size() == code.size() || !is_digit(rest[code.size()]))) {
      return true;
    }
  }
  return false;
}

bool contains_any(std::string_view text, std::initializer_list<std::string_view> words) {
  for (const auto w : words) {
    if (text.find(w) != npos) return true;
  }
  return false;
}

}  // namespace

OomKind kind_of(SignalClass c) {
  switch (c) {
    case SignalClass::cgroup_kill:
      return OomKind::cgroup_oom_killer;
    case SignalClass::host_kill:
      return OomKind::host_oom_killer;
    case SignalClass::server_admission:
      return OomKind::server_admission;
    case SignalClass::cuda_allocator:
      return OomKind::cuda_allocator;
    case SignalClass::accelerator_runtime:
      return OomKind::accelerator_runtime;
    case SignalClass::host_exit_code:
      return OomKind::host_oom_killer;
    case SignalClass::driver:
      return OomKind::driver;
  }
  return OomKind::not_oom;
}

Evidence evidence_of(SignalClass c) {
  return c == SignalClass::host_exit_code ? Evidence::inferred : Evidence::stated;
}

const std::vector<Needle>& needles() {
  using S = SignalClass;
  static const std::vector<Needle> table = {
      // PyTorch caching allocator, every wording since 1.x (CUDA, ROCm, XPU builds):
      //   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.75 GiB. GPU 0 has ..."
      sig("cudaoutofmemory", S::cuda_allocator, "CUDA out of memory"),
      sig("hipoutofmemory", S::cuda_allocator, "HIP out of memory"),
      sig("xpuoutofmemory", S::cuda_allocator, "XPU out of memory"),
      sig("torch.outofmemoryerror", S::cuda_allocator, "torch.OutOfMemoryError"),
      sig("torch.cuda.outofmemoryerror", S::cuda_allocator, "torch.cuda.OutOfMemoryError"),
      sig("caughtoutofmemoryerror", S::cuda_allocator, "Caught OutOfMemoryError"),
      // Runtime / driver API errors and other frameworks' allocators.
      sig("cudaerror:outofmemory", S::accelerator_runtime, "CUDA error: out of memory"),
      sig("cudaerror2:outofmemory", S::accelerator_runtime, "CUDA error 2: out of memory"),
      sig("cuda_error_out_of_memory", S::accelerator_runtime, "CUDA_ERROR_OUT_OF_MEMORY"),
      sig("cudaerrormemoryallocation", S::accelerator_runtime, "cudaErrorMemoryAllocation"),
      sig("cudamallocfailed:outofmemory", S::accelerator_runtime,
          "cudaMalloc failed: out of memory"),
      sig("unabletoallocatecuda", S::accelerator_runtime, "unable to allocate CUDA buffer"),
      sig("failedtoallocatecuda", S::accelerator_runtime, "failed to allocate CUDA buffer"),
      sig("cublas_status_alloc_failed", S::accelerator_runtime, "CUBLAS_STATUS_ALLOC_FAILED"),
      sig("cudafailure'outofmemory'", S::accelerator_runtime, "NCCL: Cuda failure 'out of memory'"),
      sig("nvmapmem", S::accelerator_runtime, "NvMap error 12", Check::nvmap_error12),
      sig("mpsbackendoutofmemory", S::accelerator_runtime, "MPS backend out of memory"),
      sig("resource_exhausted:outofmemory", S::accelerator_runtime,
          "RESOURCE_EXHAUSTED: Out of memory"),
      sig("oomwhenallocatingtensor", S::accelerator_runtime, "OOM when allocating tensor"),
      // Kernel OOM killer (dmesg / journalctl -k).
      sig("outofmemory:killedprocess", S::host_kill, "Out of memory: Killed process",
          Check::not_memcg),
      sig("invokedoom-killer", S::host_kill, "invoked oom-killer"),
      sig("oom-kill:", S::host_kill, "oom-kill:"),
      sig("oom_reaper:reapedprocess", S::host_kill, "oom_reaper: reaped process"),
      sig("memorycgroupoutofmemory", S::cgroup_kill, "Memory cgroup out of memory"),
      sig("constraint_memcg", S::cgroup_kill, "CONSTRAINT_MEMCG"),
      sig("oom_memcg=", S::cgroup_kill, "oom_memcg="),
      sig("oomkilled", S::cgroup_kill, "OOMKilled"),
      // A launcher or shell reporting SIGKILL: the OOM killer is the usual sender.
      sig("exitcode", S::host_exit_code, "exit code -9/137 (SIGKILL)", Check::kill_exit_code),
      sig("exitedwithcode", S::host_exit_code, "exited with code -9/137 (SIGKILL)",
          Check::kill_exit_code),
      sig("returncode", S::host_exit_code, "return code -9/137 (SIGKILL)", Check::kill_exit_code),
      sig("exitstatus", S::host_exit_code, "exit status 137 (SIGKILL)", Check::kill_exit_code),
      sig("exited(137)", S::host_exit_code, "Exited (137)"),
      sig("signal9(sigkill)", S::host_exit_code, "Signal 9 (SIGKILL)"),
      sig("status=9/kill", S::host_exit_code, "status=9/KILL"),
      sig("signals.sigkill:9", S::host_exit_code, "Signals.SIGKILL: 9"),
      // Inference servers refusing to start.
      sig("lessthandesiredgpumemoryutilization", S::server_admission,
          "free memory less than desired GPU memory utilization"),
      sig("noavailablememoryforthecacheblocks", S::server_admission,
          "No available memory for the cache blocks"),
      sig("largerthantheavailablekvcachememory", S::server_admission,
          "larger than the available KV cache memory"),
      sig("modelrequiresmoresystemmemory", S::server_admission,
          "model requires more system memory"),
      sig("notenoughmemory.pleasetrytoincrease", S::server_admission,
          "Not enough memory (increase --mem-fraction-static)"),
      // NVIDIA kernel driver.
      sig("nv_err_no_memory", S::driver, "NVRM NV_ERR_NO_MEMORY"),

      // Load / start-up markers.
      mark("from_pretrained", Role::load_marker),
      mark("loadingcheckpointshards", Role::load_marker),
      mark("load_shard_file", Role::load_marker),
      mark("load_state_dict", Role::load_marker),
      mark("safe_open", Role::load_marker),
      mark("loadingsafetensors", Role::load_marker),
      mark("load_checkpoint", Role::load_marker),
      mark("llama_model_load", Role::load_marker),
      mark("errorloadingmodel", Role::load_marker),
      mark("load_model", Role::load_marker),
      mark("loadingmodel", Role::load_marker),
      mark("loadingweights", Role::load_marker),
      mark("model_loader", Role::load_marker),
      mark("initializ", Role::load_marker),  // "> initializing model parallel", initialize_kv_cache
      mark("determine_available_memory", Role::load_marker),
      mark("determine_num_available_blocks", Role::load_marker),
      mark("profile_run", Role::load_marker),
      mark("availablekvcachememory", Role::load_marker),
      mark("capturingcudagraph", Role::load_marker),
      mark("onstartup", Role::load_marker),
      mark("pullingmanifest", Role::load_marker),
      mark("get_peft_model", Role::load_marker),
      mark("prepare_model_for_kbit_training", Role::load_marker),
      mark("cudaavailable:", Role::load_marker),  // a start-up device check printed just before
      mark("mempoolenabled", Role::load_marker),  // NVIDIA Warp's init banner device line
      mark("mempooldisabled", Role::load_marker),
      // Step markers: training, evaluation, serving after start-up.
      mark("training_step", Role::step_marker),
      mark("train_step", Role::step_marker),
      mark("train_epoch", Role::step_marker),
      mark("train_batch", Role::step_marker),
      mark("_inner_training_loop", Role::step_marker),
      mark("trainer.train(", Role::step_marker),
      mark(".backward(", Role::step_marker),
      mark("optimizer.step", Role::step_marker),
      mark("evaluation_loop", Role::step_marker),
      mark("prediction_step", Role::step_marker),
      mark("{'loss':", Role::step_marker),
      mark("{\"loss\":", Role::step_marker),
      mark("trainingfailed", Role::step_marker),
      mark("trainloss", Role::step_marker),
      mark(".fit(", Role::step_marker),
      mark(".generate(", Role::step_marker),
      mark("avgpromptthroughput", Role::step_marker),
      mark("post/v1/", Role::step_marker),
      mark("iteration", Role::step_marker, Check::digit_follows),
      mark("traceback(mostrecentcalllast)", Role::traceback_start),
      mark("s/it]", Role::progress_rate),
      mark("it/s]", Role::progress_rate),
      mark("s/it,", Role::progress_rate),
      mark("it/s,", Role::progress_rate),
      mark("bitsandbytes/", Role::bitsandbytes),
      mark("bitsandbytes\\", Role::bitsandbytes),
      mark("dequantize_4bit", Role::bitsandbytes),
      mark("dequantize_nf4", Role::bitsandbytes),
      mark("dequantize_blockwise", Role::bitsandbytes),
      mark("matmul_4bit", Role::bitsandbytes),
      mark("matmul4bit", Role::bitsandbytes),
  };
  return table;
}

bool check_passes(const Needle& needle, const DenseView& v, std::size_t start, std::size_t end) {
  const auto lower = v.lower;
  switch (needle.check) {
    case Check::none:
      return true;
    case Check::nvmap_error12: {
      // "NvMapMemAllocInternalTagged: 1075072515 error 12"
      const auto err = lower.find("error12", end);
      return err != npos && err < end + 48 &&
             (err + 7 == lower.size() || !is_digit(lower[err + 7]));
    }
    case Check::kill_exit_code:
      return followed_by_kill_code(lower, end);
    case Check::not_memcg: {
      constexpr std::string_view memcg = "memorycgroup";
      return start < memcg.size() || lower.substr(start - memcg.size(), memcg.size()) != memcg;
    }
    case Check::digit_follows:
      return end < lower.size() && is_digit(lower[end]);
  }
  return false;
}

Facts extract_facts(SignalClass c, const DenseView& v, std::size_t start, std::size_t end) {
  Facts facts;
  (void)end;
  switch (c) {
    case SignalClass::cgroup_kill:
    case SignalClass::host_kill:
      read_victim(v, start, facts);
      break;
    case SignalClass::host_exit_code:
      read_launcher_victim(v, start, facts);
      break;
    case SignalClass::server_admission:
      read_admission(v, start, facts);
      break;
    case SignalClass::cuda_allocator:
      read_allocator(v, start, SiPrefix::decimal, facts);
      break;
    case SignalClass::accelerator_runtime:
      read_runtime(v, start, facts);
      break;
    case SignalClass::driver:
      break;
  }
  return facts;
}

std::optional<OomPhase> progress_bar_phase(const DenseView& v, std::size_t rate_start) {
  // "Loading checkpoint shards:  93%|█████████▎| 25/27 [01:08<00:05,  2.75s/it]"
  // "# Iteration:   0%|          | 1/1097 [00:58<17:55:10, 58.86s/it]"
  std::size_t line = rate_start;
  while (line > 0 && (static_cast<unsigned char>(v.flags[line]) & oomtext::kLineStart) == 0 &&
         rate_start - line < 512) {
    --line;
  }
  const auto bar = v.lower.substr(line, rate_start - line);
  const auto percent = bar.find("%|");
  if (percent == npos || bar.find('[') == npos) return std::nullopt;
  std::size_t desc_end = percent;
  while (desc_end > 0 && (is_digit(bar[desc_end - 1]) || bar[desc_end - 1] == '.')) --desc_end;
  const auto desc = bar.substr(0, desc_end);
  if (contains_any(desc, {"load", "shard", "download", "fetch", "captur", "compil", "warm",
                          "quantiz", "map", "tokeniz", "filter", "generating", "split", "pull"})) {
    return OomPhase::load;
  }
  if (desc.empty() || desc == ":" ||
      contains_any(desc,
                   {"epoch", "iter", "train", "step", "eval", "batch", "prompt", "request"})) {
    return OomPhase::step;
  }
  return std::nullopt;
}

}  // namespace sparkops::oomsig
