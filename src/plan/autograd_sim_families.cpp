#include "plan/autograd_sim_families.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace sparkops::embedded {
extern const std::string_view families_json;
}

namespace sparkops::plan {

namespace sim {

const Families& families() {
  static const Families f = [] {
    Families out;
    const auto j = nlohmann::json::parse(embedded::families_json, nullptr, false);
    if (j.is_discarded() || !j.contains("families")) {
      out.error = "families.json: not JSON";
      return out;
    }
    const auto& fams = j["families"];
    auto load = [&](const std::string& name, const nlohmann::json& e, auto& self) -> Family {
      Family fam;
      if (e.contains("like"))
        fam = self(e["like"].get<std::string>(), fams[e["like"].get<std::string>()], self);
      fam.name = name;
      fam.norm = e.value("norm", fam.norm);
      if (e.contains("modules")) {
        fam.modules.clear();
        for (const auto& [m, dims] : e["modules"].items())
          fam.modules[m] = Module{dims[0], dims[1]};
      }
      if (e.contains("layer")) fam.layer = e["layer"].get<std::vector<std::string>>();
      for (const auto& b : e.value("bias", std::vector<std::string>{})) fam.modules[b].bias = true;
      for (const auto& b : e.value("expert_modules", std::vector<std::string>{}))
        fam.modules[b].expert = true;
      fam.rotary_fraction = e.value("rotary_fraction", fam.rotary_fraction);
      fam.embed_scale = e.value("embed_scale", fam.embed_scale);
      fam.attn_softcap = e.value("attn_softcap", fam.attn_softcap);
      fam.final_softcap = e.value("final_softcap", fam.final_softcap);
      fam.learned_positions = e.value("learned_positions", fam.learned_positions);
      fam.lm_head_bias = e.value("lm_head_bias", fam.lm_head_bias);
      fam.norm_head = e.value("norm_head", fam.norm_head);
      fam.dropout = e.value("dropout", fam.dropout);
      fam.rope_shared = e.value("rope_shared", fam.rope_shared);
      fam.embed_requires_grad = e.value("embed_requires_grad", fam.embed_requires_grad);
      fam.position_ids = e.value("position_ids", fam.position_ids);
      if (e.contains("layer")) fam.held.clear();
      if (e.contains("held")) fam.held = e["held"].get<std::map<std::string, std::string>>();
      return fam;
    };
    for (const auto& [name, e] : fams.items()) {
      out.by_name[name] = load(name, e, load);
      for (const auto& text : out.by_name[name].layer) {
        Line ln;
        ln.text = text;
        const auto eq = text.find('=');
        if (eq != std::string::npos) {
          const std::string lhs = text.substr(0, eq), rhs = text.substr(eq + 1);
          for (const auto& w : split(lhs, ' '))
            if (!trim(w).empty()) ln.outs.emplace_back(trim(w));
          for (const auto& w : split(rhs, ' ')) {
            const std::string_view t = trim(w);
            if (t.empty()) continue;
            if (t[0] == '@') {
              ln.modules.emplace_back(t.substr(1));
              if (ln.module.empty()) ln.module = ln.modules.back();
            } else
              ln.words.emplace_back(t);
          }
        }
        if (contains(text, "mcore_rope")) out.by_name[name].seq_saves = true;
        out.by_name[name].program.push_back(std::move(ln));
      }
      for (const auto& a : e.value("aliases", std::vector<std::string>{})) out.alias[a] = name;
    }
    return out;
  }();
  return f;
}

Result<double> eval_dim(std::string_view e, const Dims& d) {
  double total = 0;
  for (const auto& term : split(e, '+')) {
    double v = 1;
    for (const auto& f : split(term, '*')) {
      const std::string_view x = trim(f);
      if (x == "h")
        v *= d.h;
      else if (x == "q")
        v *= d.q;
      else if (x == "kv")
        v *= d.kv;
      else if (x == "i")
        v *= d.i;
      else if (x == "E")
        v *= d.E;
      else if (!x.empty() &&
               std::all_of(x.begin(), x.end(), [](char c) { return c >= '0' && c <= '9'; }))
        v *= std::stod(std::string(x));
      else
        return fail(Errc::malformed, fmt::format("families.json: unknown size \"{}\"", x));
    }
    total += v;
  }
  return total;
}

Dims dims_for(const models::Architecture& a, const SimRun& run) {
  Dims d{};
  d.h = static_cast<double>(a.hidden);
  d.hd = static_cast<double>(a.head_dim);
  d.heads = static_cast<double>(a.heads);
  d.kvh = static_cast<double>(a.kv_heads);
  d.q = d.heads * d.hd;
  d.kv = d.kvh * d.hd;
  d.i = static_cast<double>(a.intermediate);
  d.k = static_cast<double>(std::max<std::uint64_t>(a.experts_per_token, 1));
  d.E = static_cast<double>(std::max<std::uint64_t>(a.experts, 1));
  d.s = static_cast<double>(run.seq);
  d.V = static_cast<double>(a.vocab);
  d.r = static_cast<double>(run.lora_rank);
  return d;
}

// PEFT matches a target against the module name or its last component ("c_proj" adapts both
// GPT-2 c_proj maps).
bool is_targeted(const SimRun& run, const std::string& module) {
  if (run.method == TrainMethod::full) return false;
  if (run.all_linear) return true;
  const std::string last = module.substr(module.rfind('.') + 1);
  auto named = [&](std::string_view n) {
    return std::find(run.targets.begin(), run.targets.end(), n) != run.targets.end();
  };
  if (named(module) || named(last)) return true;
  // A fused q/k/v projection (GPT-NeoX/Falcon query_key_value, Phi-3 qkv_proj, GPT-2 c_attn,
  // Baichuan W_pack) is adapted when any of q, k, v is: the estimator counts the adapter on the
  // separate maps (models::layer_linears), and the fused module's input is what the LoRA keeps.
  const bool fused_qkv = last == "query_key_value" || last == "qkv_proj" || last == "c_attn" ||
                         last == "W_pack" || last == "linear_qkv";
  if (fused_qkv && (named("q_proj") || named("k_proj") || named("v_proj"))) return true;
  // Megatron-Core's names for the Llama projections (NeMo's LoRA target_modules).
  if (last == "linear_proj") return named("o_proj");
  if (last == "linear_fc1") return named("gate_proj") || named("up_proj");
  if (last == "linear_fc2") return named("down_proj");
  return false;
}

bool unsloth_fuses(const Family& f, const SimRun& run, const std::vector<std::string>& modules) {
  if (run.lora_dropout > 0 || modules.empty()) return false;
  for (const auto& m : modules) {
    auto it = f.modules.find(m);
    if (it == f.modules.end() || it->second.bias || !is_targeted(run, m)) return false;
  }
  return true;
}

}  // namespace sim

using models::Architecture;
using namespace sim;

std::string_view family_for(std::string_view model_type, bool* known) {
  const auto& fs = families();
  const std::string key(model_type);
  if (fs.by_name.count(key)) {
    *known = true;
    return fs.by_name.find(key)->first;
  }
  if (auto it = fs.alias.find(key); it != fs.alias.end()) {
    *known = true;
    return it->second;
  }
  *known = false;
  return "llama";
}

std::string_view program_for(std::string_view model_type, const SimRun& run, bool* known) {
  const std::string_view hf = family_for(model_type, known);
  // unsloth 2026.8.19 models/loader.py sends these model types to FastLlamaModel,
  // FastMistralModel, FastQwen2Model and FastQwen3Model, whose decoder layer and attention are
  // Unsloth's (llama.py LlamaDecoderLayer_fast_forward; Qwen2 reuses LlamaAttention_fast_forward,
  // Qwen3 adds its q/k norms); Gemma, Granite, Cohere and the FastModel families keep the HF
  // program here.
  if (run.unsloth_layer && run.method != TrainMethod::full) {
    if (model_type == "llama" || model_type == "mistral") return "unsloth_llama";
    if (model_type == "qwen2") return "unsloth_qwen2";
    if (model_type == "qwen3") return "unsloth_qwen3";
  }
  if (!run.megatron_layer || run.ckpt != Checkpointing::none || run.method == TrainMethod::qlora)
    return hf;
  // NeMo 8cfedd72 llm/gpt/model: LlamaConfig sets bias_activation_fusion and apply_rope_fusion,
  // MistralConfig7B and Qwen2Config (add_qkv_bias) leave Megatron's defaults (both off).
  if (model_type == "llama") return "megatron_gpt";
  if (model_type == "mistral") return "megatron_gpt_glu";
  if (model_type == "qwen2") return "megatron_gpt_glu_qkv_bias";
  return hf;
}

Result<ParamBytes> param_bytes(const Architecture& a, const SimRun& run, bool double_quant,
                               std::uint64_t positions) {
  const auto& fs = families();
  if (!fs.error.empty()) return fail(Errc::malformed, fs.error);
  bool known = false;
  const Family& f = fs.by_name.at(std::string(program_for(a.family, run, &known)));
  const Dims d = dims_for(a, run);
  const double db = run.model_bytes, ab = run.adapter_bytes, r = static_cast<double>(run.lora_rank);
  const double L = static_cast<double>(a.layers);
  ParamBytes pb;
  double dense = 0;  // non-quantized parameter elements
  for (const auto& [name, m] : f.modules) {
    bool used = false;
    for (const auto& line : f.layer) used = used || contains(line, "@" + name);
    if (!used) continue;
    auto din = eval_dim(m.d_in, d), dout = eval_dim(m.d_out, d);
    if (!din || !dout) return tl::unexpected(din ? dout.error() : din.error());
    const double copies = m.expert ? d.E : 1;
    const double n = *din * *dout;
    if (run.method == TrainMethod::qlora) {
      const double blocks = std::ceil(n / 64);
      const double absmax = double_quant ? blocks + std::ceil(blocks / 256) * 4 : blocks * 4;
      pb.base += L * copies * (std::ceil(n / 2) + absmax);
    } else {
      dense += L * copies * n;
    }
    if (m.bias) dense += L * copies * *dout;
    pb.base_params += L * copies * (n + (m.bias ? *dout : 0));
    if (is_targeted(run, name)) pb.adapter += L * copies * r * (*din + *dout) * ab;
  }
  double norms = 0;
  for (const auto& line : f.layer) {
    if (contains(line, "= rmsnorm") || contains(line, "= gemma_rmsnorm") ||
        contains(line, "= te_rmsnorm") || contains(line, "= te_norm_linear") ||
        contains(line, "= unsloth_rmsnorm"))
      norms += d.h;
    if (contains(line, "= layernorm")) norms += 2 * d.h;
    if (contains(line, "head_rmsnorm") || contains(line, "head_gemma_rmsnorm")) norms += d.hd;
  }
  const double final_norm = f.norm == "layernorm" ? 2 * d.h : d.h;
  const double V = static_cast<double>(a.vocab);
  const bool tied = a.tied_embeddings;
  double other = L * norms + final_norm + V * d.h * (tied ? 1 : 2);
  if (f.learned_positions) other += static_cast<double>(positions) * d.h;
  if (f.lm_head_bias) other += V;
  dense += other;
  pb.base_params += other;
  pb.base += dense * db;
  if (run.lora_head && run.method != TrainMethod::full) pb.adapter += r * (d.h + V) * ab;
  pb.trainable = run.method == TrainMethod::full ? pb.base : pb.adapter;
  return pb;
}

namespace {

// Unsloth's program for `a` under `run`, or nullptr when the run executes another layer.
const Family* unsloth_program(const Architecture& a, const SimRun& run) {
  const auto& fs = families();
  bool known = false;
  const std::string prog(program_for(a.family, run, &known));
  if (!fs.error.empty() || prog.rfind("unsloth_", 0) != 0) return nullptr;
  return &fs.by_name.at(prog);
}

// The program's fused-group lines (lora_qkv, lora_w, lora_mlp) whose group patch_peft_model
// fuses under `run`, each with the name the plan note gives it.
std::vector<std::pair<const Line*, const char*>> fused_lines(const Family& f, const SimRun& run) {
  std::vector<std::pair<const Line*, const char*>> out;
  for (const Line& ln : f.program) {
    if (ln.words.empty() || !unsloth_fuses(f, run, ln.modules)) continue;
    const std::string& op = ln.words[0];
    if (op == "lora_qkv") out.emplace_back(&ln, "QKV");
    if (op == "lora_w") out.emplace_back(&ln, "O");
    if (op == "lora_mlp") out.emplace_back(&ln, "MLP");
  }
  return out;
}

}  // namespace

double unsloth_buffer_bytes(const Architecture& a, const SimRun& run, std::uint64_t positions) {
  const Family* f = unsloth_program(a, run);
  if (f == nullptr) return 0;
  const double db = run.model_bytes;
  // LlamaRotaryEmbedding builds min(max_position_embeddings, 32768) rows at init;
  // extend_rope_embedding (to max_position_embeddings in LlamaModel_fast_forward, to a longer
  // sequence in the attention) grows it to a multiple of 8192.
  const double max_pos = static_cast<double>(positions > 0 ? positions : run.seq);
  const double wanted = std::max(max_pos, static_cast<double>(run.seq));
  const double initial = std::min(max_pos, 32768.0);
  const double rows = wanted > initial ? std::ceil(wanted / 8192) * 8192 : initial;
  const double bytes = 2 * rows * static_cast<double>(a.head_dim) * db;
  if (run.method != TrainMethod::qlora) return bytes;
  // The largest weight of a fused group.
  const Dims d = dims_for(a, run);
  double largest = 0;
  for (const auto& [ln, name] : fused_lines(*f, run))
    for (const auto& m : ln->modules) {
      const Module& mod = f->modules.at(m);
      auto din = eval_dim(mod.d_in, d), dout = eval_dim(mod.d_out, d);
      if (din && dout) largest = std::max(largest, *din * *dout);
    }
  return largest > 0 ? bytes + largest * db + std::ceil(largest / 64) * 4 : bytes;
}

std::vector<std::string> unsloth_fused_groups(const Architecture& a, const SimRun& run) {
  std::vector<std::string> out;
  if (const Family* f = unsloth_program(a, run))
    for (const auto& [ln, name] : fused_lines(*f, run)) out.emplace_back(name);
  return out;
}

}  // namespace sparkops::plan
