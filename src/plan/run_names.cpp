// The run's vocabulary (declared in plan/estimator.hpp): each enum's name as `plan` prints it and
// the flag value that parses to it, from one table per enum, so a name and its parse never
// disagree.

#include <string>
#include <utility>

#include <fmt/format.h>

#include "plan/estimator.hpp"

namespace sparkops::plan {

namespace {

template <class E, std::size_t N>
Result<E> parse_enum(std::string_view s, const std::pair<std::string_view, E> (&table)[N],
                     std::string_view flag) {
  for (const auto& [name, value] : table) {
    if (s == name) return value;
  }
  std::string choices;
  for (const auto& [name, value] : table) {
    if (!choices.empty()) choices += "|";
    choices += name;
  }
  return fail(Errc::invalid_argument,
              fmt::format("{}: unknown value \"{}\" (one of {})", flag, s, choices));
}

constexpr std::pair<std::string_view, Method> kMethods[] = {
    {"full", Method::full}, {"lora", Method::lora}, {"qlora", Method::qlora}};
constexpr std::pair<std::string_view, Precision> kPrecisions[] = {{"bf16", Precision::bf16},
                                                                  {"fp16", Precision::fp16},
                                                                  {"fp32", Precision::fp32},
                                                                  {"mixed", Precision::mixed}};
constexpr std::pair<std::string_view, Optim> kOptims[] = {
    {"adamw", Optim::adamw},
    {"adamw8bit", Optim::adamw8bit},
    {"paged_adamw", Optim::paged_adamw},
    {"paged_adamw8bit", Optim::paged_adamw8bit},
    {"adafactor", Optim::adafactor},
    {"sgd", Optim::sgd}};
constexpr std::pair<std::string_view, GradCkpt> kCkpts[] = {
    {"none", GradCkpt::none}, {"full", GradCkpt::full}, {"offload", GradCkpt::offload}};
constexpr std::pair<std::string_view, LossKind> kLosses[] = {
    {"hf", LossKind::hf},
    {"hf_shifted", LossKind::hf_shifted},
    {"hf_shifted_kept", LossKind::hf_shifted_kept},
    {"chunked", LossKind::chunked},
    {"fused", LossKind::fused},
    {"fused_unsloth", LossKind::fused_unsloth},
    {"chunked_nll", LossKind::chunked_nll},
    {"chunked_output", LossKind::chunked_output},
    {"megatron", LossKind::megatron}};
constexpr std::pair<std::string_view, Attn> kAttns[] = {{"flash", Attn::flash},
                                                        {"sdpa", Attn::sdpa},
                                                        {"eager", Attn::eager},
                                                        {"math", Attn::math},
                                                        {"xformers", Attn::xformers}};

template <class E, std::size_t N>
std::string_view enum_name(E v, const std::pair<std::string_view, E> (&table)[N]) {
  for (const auto& [name, value] : table) {
    if (v == value) return name;
  }
  return "?";
}

}  // namespace

std::string_view method_name(Method m) {
  return enum_name(m, kMethods);
}
std::string_view precision_name(Precision p) {
  return enum_name(p, kPrecisions);
}
std::string_view optim_name(Optim o) {
  return enum_name(o, kOptims);
}
std::string_view grad_ckpt_name(GradCkpt g) {
  return enum_name(g, kCkpts);
}
std::string_view attn_name(Attn a) {
  return enum_name(a, kAttns);
}
std::string_view loss_name(LossKind l) {
  return enum_name(l, kLosses);
}
Result<LossKind> parse_loss(std::string_view s) {
  return parse_enum(s, kLosses, "--loss");
}
Result<Method> parse_method(std::string_view s) {
  return parse_enum(s, kMethods, "--method");
}
Result<Precision> parse_precision(std::string_view s) {
  return parse_enum(s, kPrecisions, "--precision");
}
Result<Optim> parse_optim(std::string_view s) {
  return parse_enum(s, kOptims, "--optim");
}
Result<GradCkpt> parse_grad_ckpt(std::string_view s) {
  return parse_enum(s, kCkpts, "--grad-ckpt");
}
Result<Attn> parse_attn(std::string_view s) {
  return parse_enum(s, kAttns, "--attn");
}

}  // namespace sparkops::plan
