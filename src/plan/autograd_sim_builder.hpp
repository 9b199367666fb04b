#pragma once
// The builder that turns a family's layer program (data/families.json) into an autograd graph
// (autograd_sim_graph.hpp) under PyTorch's save rules: one method per operator of the program
// language, each declared with what it keeps. The Hugging Face and Megatron operators are
// defined in autograd_sim_builder.cpp, Unsloth's fused LoRA operators in autograd_sim_unsloth.cpp.
// Internal to the activation model.

#include <map>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "plan/autograd_sim_graph.hpp"

namespace sparkops::plan::sim {

struct Builder {
  const Family& f;
  const SimRun& run;
  const Dims& d;
  Graph& g;
  unsigned db;  // model dtype bytes
  int cos = -1, sin = -1, mask = -1;
  std::map<int, int> shared_dropped = {};  // layer input -> its one LoRA dropout (fused_qkv_lora)
  bool full() const { return run.method == TrainMethod::full; }

  bool targeted(const std::string& module) const { return is_targeted(run, module); }

  // tanh, softmax, rsqrt: backward needs the op's own result (only when a grad flows).
  void save_output(int t);
  int cast(int x, unsigned bytes);
  // Element-wise op producing a fresh tensor; `saves` are tensors kept for backward.
  int op(std::vector<int> ins, double elems, unsigned bytes, std::vector<int> saves,
         double extra = 0, double param_grad = 0, bool param_rg = false);
  // mul.Tensor: grad_a = grad * b (b saved when a requires grad), grad_b = grad * a.
  int mul(int a, int b);
  std::vector<int> matmul_saves(int a, int b);
  int add(std::vector<int> ins);
  // LlamaRMSNorm: x.float(); pow(2) saves x32; mean; +eps; rsqrt saves its result; x32 * rs
  // saves both; .to(dtype); weight * that saves it when the weight trains.
  int rmsnorm(int x, double rows, bool gemma);
  // native_layer_norm saves input, mean and rstd (fp32 on CUDA) when anything needs a grad.
  int layernorm(int x);
  Result<int> linear(int x, const std::string& name);
  // lora_B(lora_A(dropped)) * scaling added to the base output, cast back to the model dtype.
  int lora_tail(int base, int dropped, double out_el, double experts, double scale, double din,
                double dout);
  // HF apply_rotary_pos_emb: (x * cos) + (rotate_half(x) * sin), rotate_half a cat of two
  // halves (one negated). Forward: x * cos, the cat and its product with sin are alive together
  // (3n), or x * cos, that product and the sum (2n beside the output). A partial rotary
  // (GPT-NeoX, Phi: the first rotary_fraction of each head) runs that on the rotated slice, then
  // torch.cat((x_rot, x_pass)) makes the output beside the rotated part: n * fraction beside it.
  int rope(int x, bool partial);
  // torch SDPA's math fallback (aten/src/ATen/native/transformers/attention.cpp
  // _scaled_dot_product_attention_math, torch 2.0-2.5), which SDPA takes when neither fused
  // kernel accepts the call (an attn_mask before torch 2.1's efficient kernel, k/v with fewer
  // heads than q, ...): query * sqrt(scale) and key^T * sqrt(scale) are copies; matmul saves
  // both (fewer k/v heads broadcast: matmul's expand + reshape copies them to q's size, as
  // repeat_kv would); the causal mask is added in place; _softmax in the input dtype saves its
  // output (heads x s per token); matmul(attn, value) saves the probabilities and value; the
  // caller's transpose(1, 2) + reshape copies the output.
  // matmul reshapes a head-strided view of a fused projection (b, h, s, d over (b, s, 3, h, d))
  // into (b*h, s, d): not viewable, so it copies, and bmm saves the copy, not the projection.
  int matmul_operand(int t);
  int math_attention(int q, int k, int v);
  // LitGPT's CausalSelfAttention (model.py at 43c44323, a509064d, 00af8b0d; fused_qkv_lora marks
  // LitGPT's model code) computes q, k and v as one `qkv = self.attn(x)` and splits its
  // (B, groups, q_per_kv + 2, T, hs) permutation. With as many query groups as heads nothing is
  // expanded, and with one group `v.expand(B, 1, q_per_kv, T, hs)` has stride 0 over the heads:
  // either way `v.reshape(B, -1, T, hs)` is a view, so the attention kernel that saves v keeps
  // the whole qkv storage, its q and k parts beyond v's own. Grouped layouts (1 < groups < heads)
  // cannot view the expanded v and copy it: nothing more.
  void keep_fused_qkv(int v);
  // A fused kernel (flash-attention 2, SDPA's flash or memory-efficient backend, xformers):
  // keeps q, k, v as given, the output and the fp32 log-sum-exp (one per head per token).
  int fused_attention(int q, int k, int v);
  int attention(int q, int k, int v);
  // Megatron-Core's TE decoder layer (the megatron_gpt programs; docs/estimator.md lists the
  // rules). TE LayerNormLinear's norm half (TransformerEngine d0067d0d
  // pytorch/module/layernorm_linear.py _LayerNormLinear.forward): prepare_for_saving(inputmat,
  // ..., mu, rsigma) keeps the input and rsigma (fp32, one per row; RMSNorm has no mu) whenever a
  // gradient flows; ln_out (this op's output) is kept by the linear half under the linear rule
  // (a trained weight, or a LoRA adapter fed by return_layernorm_output).
  int te_rmsnorm(int x);
  // TE LayerNormLinear: the norm above, then the GEMM (with its LoRA adapter) under the linear
  // rule. One autograd.Function: its backward runs the norm's backward while the engine still
  // holds the GEMM output's gradient (the call's grad_output), so that is counted there.
  Result<int> te_norm_linear(int x, const std::string& module);
  // TEDotProductAttention on the cuDNN fused backend: q, k, v (GQA native, no repeat), the output
  // and the fp32 softmax stats (one per head per token) whatever run.attn says (HF's kernels):
  // what every fused kernel keeps.
  int te_attention(int q, int k, int v) { return fused_attention(q, k, v); }
  int dropout(int x);

  // ---- Unsloth's decoder layer (autograd_sim_unsloth.cpp) ----
  // Fast_RMS_Layernorm over rows_per_token rows (1, or the heads of a q/k norm).
  int unsloth_rmsnorm(int x, double rows_per_token);
  // Fast_RoPE_Embedding_QK on a transposed q or k: a clone rotated in place.
  int unsloth_rope(int x);
  // LoRA_QKV (or, unfused, the three PEFT projections): q, k, v.
  Result<std::vector<int>> lora_qkv(int x, const std::vector<std::string>& modules);
  // LoRA_W on o_proj (or, unfused, the PEFT projection).
  Result<int> lora_w(int x, const std::string& module);
  // run_attention's training backends (utils/attention_dispatch.py).
  int unsloth_attention(int q, int k, int v);
  // LoRA_MLP with SwiGLU (or, unfused, the HF MLP on PEFT projections).
  Result<int> lora_mlp(int x, const std::vector<std::string>& modules);

  // Runs the layer program on input x; returns the output tensor.
  Result<int> layer(int x);
};

}  // namespace sparkops::plan::sim
