#include "cli/help_format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace sparkops::cli {
namespace {

// A flag takes no value (CLI11 sets expected(0) for add_flag).
bool is_flag(const CLI::Option& opt) {
  return opt.get_expected_max() == 0;
}

// CLI11's automatic type names: parser internals, not words a user types.
bool generic_type_name(std::string_view t) {
  static constexpr std::array<std::string_view, 9> kGeneric{
      "", "TEXT", "INT", "UINT", "FLOAT", "NUMBER", "BOOLEAN", "ENUM", "CHAR"};
  return std::find(kGeneric.begin(), kGeneric.end(), t) != kGeneric.end() ||
         t.front() == '[';  // vectors: [TEXT,TEXT]
}

// get_type_name() is "NAME" followed by ":<validator description>" per check.
std::string base_type_name(const CLI::Option& opt) {
  std::string t = opt.get_type_name();
  if (const auto colon = t.find(':'); colon != std::string::npos) t.resize(colon);
  return t;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Defaults that mean "not given" (a count of 0 = no limit, an empty list) say nothing to a user.
bool meaningful_default(const CLI::Option& opt) {
  const std::string& d = opt.get_default_str();
  return !d.empty() && d != "0" && d != "[]" && d != "false" && d != "{}";
}

struct Example {
  std::string_view command;
  std::string_view text;
};

constexpr std::array<Example, 13> kExamples{{
    {"status", "sparkops status --json   # or: sparkops --root /path/to/capture status"},
    {"config", "sparkops config --config ./sparkops.toml"},
    {"serve", "sparkops serve --listen 127.0.0.1:9877"},
    {"sample", "sparkops sample --interval 30 --out thermal.log"},
    {"plan", "sparkops plan meta-llama/Llama-3.1-8B --method qlora --batch 1,2,4"},
    {"procs", "sparkops procs --need 40G"},
    {"analyze", "sparkops analyze --log train.log --thermal thermal.log --html report.html"},
    {"oom", "sparkops oom --log train.log   # then: sparkops oom --done 1 --result oom"},
    {"flush", "sparkops flush --dry-run"},
    {"watch", "sparkops watch --model Qwen/Qwen2.5-7B --method lora -- python train.py"},
    {"top", "sparkops top --interval 2s"},
    {"help", "sparkops help plan"},
    {"completion",
     "sparkops completion bash > ~/.local/share/bash-completion/completions/sparkops"},
}};

}  // namespace

std::string value_label(const CLI::Option& opt) {
  if (is_flag(opt)) return {};
  std::string t = base_type_name(opt);
  if (!generic_type_name(t)) return t;
  // A copy: get_name() returns by value.
  std::string name = opt.get_lnames().empty() ? opt.get_name() : opt.get_lnames().front();
  if (const auto dash = name.rfind('-'); dash != std::string::npos) name.erase(0, dash + 1);
  return name.empty() ? std::string("VALUE") : upper(name);
}

std::string option_description(const CLI::Option& opt) {
  std::string desc = opt.get_description();
  if (!is_flag(opt) && !opt.get_positional() && meaningful_default(opt) &&
      desc.find("default") == std::string::npos) {
    desc += fmt::format(" (default {})", opt.get_default_str());
  }
  return desc;
}

std::vector<std::string> enum_values(const CLI::Option& opt) {
  std::vector<std::string> out;
  const std::string t = opt.get_type_name();
  if (const auto open = t.find(":{"); open != std::string::npos) {
    const auto close = t.find('}', open);
    std::string_view list(t.data() + open + 2,
                          (close == std::string::npos ? t.size() : close) - (open + 2));
    while (!list.empty()) {
      const auto comma = list.find(',');
      out.emplace_back(list.substr(0, comma));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
    return out;
  }
  // "full | lora | qlora" at the start of the description: the plan flags' convention.
  std::string_view d = opt.get_description();
  while (true) {
    const auto end = d.find_first_of(" ,;(");
    const std::string_view word = d.substr(0, end);
    if (word.empty()) break;
    const bool more = end != std::string_view::npos && d.substr(end).rfind(" | ", 0) == 0;
    if (!more && out.empty()) break;  // no "a | b" list at all
    out.emplace_back(word);
    if (!more) break;
    d.remove_prefix(end + 3);
  }
  return out;
}

bool takes_path(const CLI::Option& opt) {
  const std::string t = base_type_name(opt);
  return t == "FILE" || t == "DIR" || t == "PATH";
}

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) {
         return !s->get_group().empty();  // an empty group hides a subcommand
       })) {
    out.push_back(sub);
  }
  return out;
}

void add_examples(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (const Example& e : kExamples) {
      if (sub->get_name() == e.command) sub->footer(fmt::format("Example:\n  {}", e.text));
    }
  }
  app.footer(
      "Global options go before or after the command. `sparkops help COMMAND` for one command; "
      "man sparkops for all.\nExit: 0 ok, 1 the answer is no or the machine could not be read, "
      "2 bad input, 3 tight (plan, procs), 70 internal error.");
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  if (opt->get_positional() || is_flag(*opt)) return {};
  std::string out = " " + value_label(*opt);
  if (opt->get_expected_max() > 1) out += " ...";
  if (opt->get_required()) out += " (required)";
  return out;
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  return option_description(*opt);
}

}  // namespace sparkops::cli
