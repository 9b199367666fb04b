#include "ladder/oom_signals.hpp"

#include <array>

namespace sparkops::ladder::oomsig {
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
Needle near(std::string_view text, std::string_view display) {
  return Needle{text, Role::near_miss, SignalClass::driver, Check::none, display};
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
  // Habana: "FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::939524096 (896)MB"
  at = find_near(lower, "allocationfailedforsize", from);
  if (at != npos) {
    facts.requested_bytes =
        oomtext::quantity_at(lower, at + 23, SiPrefix::decimal, BareNumber::bytes);
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

// "NVRM: Xid (PCI:0000:01:00): 31, pid=..." and the older "NVRM: Xid (0000:01:00): 31, Ch ...":
// the Xid number follows the first "):" after the match.
bool xid_is_31(std::string_view lower, std::size_t end) {
  const auto close = lower.find("):", end);
  if (close == npos || close > end + 32) return false;
  const auto rest = lower.substr(close + 2);
  return rest.substr(0, 2) == "31" && (rest.size() == 2 || !is_digit(rest[2]));
}

// A progress counter "384/635" within 16 bytes of end ("Batch processed (384/635)").
bool counter_after(std::string_view lower, std::size_t end) {
  std::size_t i = end;
  while (i < lower.size() && i < end + 16 && !is_digit(lower[i])) ++i;
  const std::size_t digits = i;
  while (i < lower.size() && is_digit(lower[i])) ++i;
  if (i == digits || i >= lower.size() || lower[i] != '/') return false;
  return i + 1 < lower.size() && is_digit(lower[i + 1]);
}

// The start of the line holding pos (at most `limit` bytes back).
std::size_t line_begin(const DenseView& v, std::size_t pos, std::size_t limit = 512) {
  std::size_t line = pos;
  while (line > 0 && (static_cast<unsigned char>(v.flags[line]) & oomtext::kLineStart) == 0 &&
         pos - line < limit) {
    --line;
  }
  return line;
}

}  // namespace

OomPhase phase_of(Role r) {
  switch (r) {
    case Role::load_marker:
    case Role::load_outcome:
      return OomPhase::load;
    case Role::step_marker:
    case Role::step_context:
      return OomPhase::step;
    case Role::eval_marker:
      return OomPhase::eval;
    case Role::save_marker:
      return OomPhase::save;
    default:
      return OomPhase::unknown;
  }
}

bool nvmap_failure_stated(const DenseView& v, std::size_t start) {
  const auto own = line_begin(v, start);
  const auto previous = own > 0 ? line_begin(v, own - 1) : own;
  const auto before = v.lower.substr(previous, start - previous);
  return contains_any(before, {"fail", "error:", "abort", "exception", "killed"});
}

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
      // The device word is the backend's: CUDA/HIP (c10/cuda/CUDACachingAllocator.cpp), XPU,
      // NPU (torch_npu's NPUCachingAllocator, same message shape).
      sig("cudaoutofmemory", S::cuda_allocator, "CUDA out of memory", Check::allocator_message),
      sig("hipoutofmemory", S::cuda_allocator, "HIP out of memory", Check::allocator_message),
      sig("xpuoutofmemory", S::cuda_allocator, "XPU out of memory", Check::allocator_message),
      sig("npuoutofmemory", S::cuda_allocator, "NPU out of memory", Check::allocator_message),
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
      // Intel Gaudi (HPU) device memory: "FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for
      // size::939524096 (896)MB" (the statement PyTorch Lightning's is_oom_error lists for HPU).
      sig("module:pt_devmemallocationfailed", S::accelerator_runtime,
          "Gaudi PT_DEVMEM Allocation failed"),
      // TensorRT's error recorder: "Error Code 1: Cuda Runtime (out of memory)" (cudaErrorMemory-
      // Allocation's string, wrapped by TensorRT's checkCudaErrors-style reporting).
      sig("cudaruntime(outofmemory)", S::accelerator_runtime,
          "TensorRT: Cuda Runtime (out of memory)"),
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
      // Xid 31 (MMU_ERR, "GPU memory page fault", NVIDIA Xid catalogue): a kernel touched an
      // address with no valid mapping. A fault, not exhaustion; reported so that the text is not
      // read as an OOM, and so the illegal-memory-access errors that follow it are explained.
      sig("nvrm:xid(", S::driver, "NVRM Xid 31: GPU memory page fault (MMU fault), not an OOM",
          Check::xid_31),

      // Near misses: failures that look like an OOM and are not one.
      near("anillegalmemoryaccesswasencountered",
           "CUDA error: an illegal memory access was encountered (cudaErrorIllegalAddress: an "
           "out-of-bounds access, not a lack of memory)"),
      near("segfault", "segmentation fault (SIGSEGV, exit 139 = 128+11): a crash, not an OOM kill"),
      near("segmentationfault",
           "segmentation fault (SIGSEGV, exit 139 = 128+11): a crash, not an OOM kill"),
      near("sigsegv", "segmentation fault (SIGSEGV, exit 139 = 128+11): a crash, not an OOM kill"),

      // Load / start-up markers.
      mark("from_pretrained", Role::load_marker),
      mark("loadingcheckpointshards", Role::load_marker),
      mark("load_shard_file", Role::load_marker),
      mark("load_state_dict", Role::load_marker),
      mark("safe_open", Role::load_marker),
      mark("loadingsafetensors", Role::load_marker),
      mark("load_checkpoint", Role::load_marker),
      mark("llama_model_load", Role::load_marker),
      mark("errorloadingmodel", Role::load_outcome),       // llama.cpp, after the failed allocation
      mark("failedtoload", Role::load_outcome),            // Triton/Riva "failed to load 'model'"
      mark("failedtostart", Role::load_outcome),           // vLLM "EngineCore failed to start."
      mark("startfailed", Role::load_outcome),             // "Service start failed"
      mark("resize_token_embeddings", Role::load_marker),  // model set-up after from_pretrained
      mark("preflight", Role::load_marker),       // a start-up check run before the training loop
      mark("startup", Role::load_marker),         // "During startup", "Application startup"
      mark("tensorparallel", Role::load_marker),  // how the weights are sharded, set at start-up
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
      mark("episode:", Role::step_marker, Check::digit_follows),  // RL: "Episode: 1129"
      mark("rollout", Role::step_marker),  // RL: the generation half of a training iteration
      mark("batch", Role::step_marker, Check::counter_follows),  // "Batch 384/635"
      mark("/health", Role::step_marker),  // answered health checks: start-up is over (llama.cpp
                                           // answers 503 "Loading model" while loading, which
                                           // puts a load marker after it on the same line)
      mark(".chat(", Role::step_marker),   // a chat request to a client library
      mark("num_speculative_tokens", Role::step_marker),  // draft tokens per decode step
      // Job descriptions in prose. torch_npu / MindSpeed users write in Chinese: backward pass,
      // gradient, training.
      mark("\xe5\x8f\x8d\xe5\x90\x91", Role::step_context),  // 反向
      mark("\xe6\xa2\xaf\xe5\xba\xa6", Role::step_context),  // 梯度
      mark("\xe8\xae\xad\xe7\xbb\x83", Role::step_context),  // 训练
      // Evaluation: HF Trainer's evaluation_loop/prediction_step and its "***** Running
      // Evaluation *****" banner, Lightning's validation/test loops.
      mark("evaluation_loop", Role::eval_marker),
      mark("prediction_step", Role::eval_marker),
      mark("runningevaluation", Role::eval_marker),
      mark("evaluating", Role::eval_marker),
      mark("validation_step", Role::eval_marker),
      mark("test_step", Role::eval_marker),
      mark("trainer.evaluate(", Role::eval_marker),
      // Saving: HF Trainer's _save_checkpoint/save_model/save_pretrained and "Saving model
      // checkpoint to", torch.save, soundfile/torchaudio writing an output.
      mark("_save_checkpoint", Role::save_marker),
      mark("save_checkpoint", Role::save_marker),
      mark("savingmodelcheckpoint", Role::save_marker),
      mark("savingcheckpoint", Role::save_marker),
      mark("save_pretrained", Role::save_marker),
      mark("save_model", Role::save_marker),
      mark("torch.save(", Role::save_marker),
      mark("safetensors.torch.save", Role::save_marker),
      mark("sf.write(", Role::save_marker),
      mark("soundfile.write(", Role::save_marker),
      mark("torchaudio.save(", Role::save_marker),
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
    case Check::allocator_message: {
      // PyTorch always continues "<DEV> out of memory. Tried to allocate N"; a bare mention counts
      // when it is an error message's text, after a colon.
      const auto rest = lower.substr(end, 24);
      if (rest.find("triedtoallocate") != npos) return true;
      return start > 0 && lower[start - 1] == ':';
    }
    case Check::xid_31:
      return xid_is_31(lower, end);
    case Check::counter_follows:
      return counter_after(lower, end);
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
  const std::size_t line = line_begin(v, rate_start);
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
  // Evaluation bars: HF Trainer's undescribed nested eval bar cannot be told from its training bar
  // here (both have no description); described ones can: "Evaluating", "Validation", "Testing",
  // "Predicting", MLX's "Calculating loss".
  if (contains_any(desc, {"eval", "valid", "test", "predict", "calculatingloss"})) {
    return OomPhase::eval;
  }
  if (contains_any(desc, {"sav", "checkpoint"})) return OomPhase::save;
  if (desc.empty() || desc == ":" ||
      contains_any(desc, {"epoch", "iter", "train", "step", "batch", "prompt", "request"})) {
    return OomPhase::step;
  }
  return std::nullopt;
}

}  // namespace sparkops::ladder::oomsig
