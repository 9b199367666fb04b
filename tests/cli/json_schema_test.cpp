// The JSON contract (docs/json.md): every command's --json document, on every fixture root, is
// validated against its schema in docs/json/<name>.schema.json, and carries schema_version.
//
// The validator is the subset of JSON Schema the schemas use: "type" (a name or a list),
// "properties", "required", "items". With SPARKOPS_UPDATE_GOLDEN=1 the schemas are rewritten from
// the documents seen (a field's type is the union of its types; it is required when every
// document of that kind has it), for review like any golden file.

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fake_nvml.hpp"
#include "support/test_support.hpp"

namespace sparkops {
namespace {

using nlohmann::json;

std::string type_name(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "boolean";
  if (j.is_number_integer() || j.is_number_unsigned()) return "integer";
  if (j.is_number()) return "number";
  if (j.is_string()) return "string";
  if (j.is_array()) return "array";
  return "object";
}

bool type_allows(const json& schema_type, const std::string& actual) {
  const auto one = [&](const std::string& t) {
    return t == actual || (t == "number" && actual == "integer");
  };
  if (schema_type.is_string()) return one(schema_type.get<std::string>());
  for (const auto& t : schema_type)
    if (one(t.get<std::string>())) return true;
  return false;
}

void validate(const json& doc, const json& schema, const std::string& path,
              std::vector<std::string>& errors) {
  const std::string actual = type_name(doc);
  if (schema.contains("type") && !type_allows(schema["type"], actual)) {
    errors.push_back(path + ": " + actual + " where the schema says " + schema["type"].dump());
    return;
  }
  if (doc.is_object()) {
    for (const auto& r : schema.value("required", json::array())) {
      if (!doc.contains(r.get<std::string>()))
        errors.push_back(path + ": missing required \"" + r.get<std::string>() + "\"");
    }
    const json props = schema.value("properties", json::object());
    for (const auto& [k, v] : doc.items()) {
      if (props.contains(k)) validate(v, props[k], path + "." + k, errors);
    }
  }
  if (doc.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < doc.size(); ++i)
      validate(doc[i], schema["items"], path + "[" + std::to_string(i) + "]", errors);
  }
}

// Inference for SPARKOPS_UPDATE_GOLDEN=1: merges one more document into `schema`.
void merge(json& schema, const json& doc, bool first) {
  if (!schema.is_object()) schema = json::object();
  std::set<std::string> types;
  if (schema.contains("type")) {
    if (schema["type"].is_string()) {
      types.insert(schema["type"].get<std::string>());
    } else {
      for (const auto& t : schema["type"]) types.insert(t.get<std::string>());
    }
  }
  std::string t = type_name(doc);
  types.insert(t);
  if (types.count("number") && types.count("integer")) types.erase("integer");
  // A field seen only as null says nothing about its type: leave it open.
  if (types == std::set<std::string>{"null"}) {
    schema.erase("type");
    schema["description"] = "null in every fixture";
    schema["nullable_seen"] = true;
  } else {
    types.erase("null");
    const bool nullable = t == "null" || schema.value("nullable_seen", false);
    if (nullable) types.insert("null");
    schema.erase("description");
    if (types.size() == 1) {
      schema["type"] = *types.begin();
    } else {
      schema["type"] = json(std::vector<std::string>(types.begin(), types.end()));
    }
    if (t == "null") schema["nullable_seen"] = true;
  }
  if (doc.is_object()) {
    json& props = schema["properties"];
    if (!props.is_object()) props = json::object();
    std::set<std::string> required;
    if (first || !schema.contains("required")) {
      for (const auto& [k, v] : doc.items()) required.insert(k);
    } else {
      for (const auto& r : schema["required"])
        if (doc.contains(r.get<std::string>())) required.insert(r.get<std::string>());
    }
    for (const auto& [k, v] : doc.items()) {
      const bool new_field = !props.contains(k);
      merge(props[k], v, new_field);
    }
    schema["required"] = json(std::vector<std::string>(required.begin(), required.end()));
  }
  if (doc.is_array()) {
    for (const auto& item : doc) {
      const bool fresh = !schema.contains("items");
      merge(schema["items"], item, fresh);
    }
  }
}

void strip_marks(json& schema) {
  schema.erase("nullable_seen");
  if (schema.contains("properties"))
    for (auto& [k, v] : schema["properties"].items()) strip_marks(v);
  if (schema.contains("items")) strip_marks(schema["items"]);
}

std::string root(const std::string& name) {
  return test::fixture("roots/" + name).string();
}

const std::vector<std::string> kRoots{"container-cgroup", "gb10-finetune", "gb10-idle",
                                      "gb10-throttled", "x86-bare"};

struct Document {
  std::string schema;  // docs/json/<schema>.schema.json
  std::string what;    // for messages
  json doc;
};

void add(std::vector<Document>& out, const std::string& schema, std::vector<std::string> args,
         const std::map<std::string, std::string>& env = {}, bool from_stderr = false) {
  const auto r = test::run_sparkops(args, env);
  std::string what = schema + ":";
  for (const auto& a : args) what += " " + a;
  const std::string& text = from_stderr ? r.err : r.out;
  const auto brace = from_stderr ? text.find("\n{") : std::string::npos;
  const std::string body =
      from_stderr && brace != std::string::npos ? text.substr(brace + 1) : text;
  ASSERT_TRUE(json::accept(body)) << what << " (exit " << r.exit_code << ")\n" << r.out << r.err;
  out.push_back({schema, what, json::parse(body)});
}

std::vector<Document> every_document(const test::TempDir& tmp) {
  std::vector<Document> docs;
  add(docs, "config", {"config", "--json"});
  add(docs, "catalogue", {"plan", "--list", "--json"});
  for (const auto& r : kRoots) {
    add(docs, "status", {"status", "--json", "--root", root(r), "--gpu", "none"});
    add(docs, "status", {"status", "--json", "--root", root(r), "--gpu", "nvml"},
        test::fake_nvml_env("gb10"));
    add(docs, "procs", {"procs", "--json", "--root", root(r), "--gpu", "none"});
    add(docs, "procs", {"procs", "--json", "--root", root(r), "--need", "20", "--gpu", "none"});
    add(docs, "plan", {"plan", "Llama-3.1-8B", "--json", "--root", root(r)});
    add(docs, "plan", {"plan", "Llama-3.1-70B", "--method", "full", "--json", "--root", root(r)});
    add(docs, "plan_matrix",
        {"plan", "Qwen2.5-7B", "--batch", "1,2", "--seq", "1024,4096", "--json", "--root",
         root(r)});
    add(docs, "flush", {"flush", "--dry-run", "--json", "--root", root(r)});
  }
  // A discrete card (NVML reports device memory): the training budget is the GPU's.
  const auto h200 = test::fake_nvml_env("h200");
  add(docs, "status", {"status", "--json", "--root", root("x86-bare")}, h200);
  add(docs, "procs", {"procs", "--json", "--root", root("x86-bare")}, h200);
  add(docs, "plan", {"plan", "Llama-3.1-8B", "--json", "--root", root("x86-bare")}, h200);
  add(docs, "plan_matrix",
      {"plan", "Qwen2.5-7B", "--batch", "1,2", "--seq", "1024,4096", "--json", "--root",
       root("x86-bare")},
      h200);
  // Claims beyond the pool: the verdict's oversubscription line is a string here.
  const std::string oversubscribed = test::fixture("procs/vllm_uncapped_orphan").string();
  add(docs, "procs",
      {"procs", "--json", "--root", oversubscribed, "--gpu-apps",
       oversubscribed + "/gpu-apps.csv"});
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("oom/corpus"))) {
    if (e.path().extension() != ".txt") continue;
    add(docs, "oom",
        {"oom", "--json", "--root", root("gb10-idle"), "--log", e.path().string(), "--state",
         (tmp / "ladder.json").string()});
  }
  for (const auto& e : std::filesystem::directory_iterator(test::fixture("logs"))) {
    const auto ext = e.path().extension();
    if (ext != ".log" && ext != ".jsonl") continue;
    add(docs, "analyze", {"analyze", "--json", "--log", e.path().string()});
  }
  add(docs, "analyze",
      {"analyze", "--json", "--log", test::fixture("watch/hf_trainer_head.log").string(),
       "--thermal", test::fixture("sample/thermal-sample-nvidia-smi.log").string()});
  add(docs, "sample",
      {"sample", "--json", "--root", root("gb10-idle"), "--gpu", "none", "--count", "2",
       "--interval", "0.01", "--out", (tmp / "thermal.log").string()});
  add(docs, "watch",
      {"watch", "--json", "--root", root("gb10-idle"), "--gpu", "none", "--no-preflight", "--dir",
       (tmp / "run").string(), "--", "/bin/sh", "-c", "echo step 1"},
      {}, true);
  // A job that outlives a few samples (the peaks are figures), beside the one above that may end
  // before the first (they are null): watch's timing decides, so both shapes are in the schema.
  add(docs, "watch",
      {"watch", "--json", "--root", root("gb10-idle"), "--gpu", "none", "--no-preflight",
       "--interval", "0.01", "--dir", (tmp / "run2").string(), "--", "/bin/sh", "-c",
       "echo step 1; sleep 0.3"},
      {}, true);
  return docs;
}

// Fields that are null or a figure depending on timing the fixtures cannot pin (a sample falls
// before the job ends or not): nullable by design, whatever the fixtures happened to show.
const std::map<std::string, std::vector<std::string>> kNullableByDesign{
    {"watch",
     {"launch_used_bytes", "peak_used_bytes", "peak_over_launch_bytes", "peak_gpu_process_bytes",
      "plan_peak_bytes", "signal", "baseline_step_seconds", "final_step_seconds"}}};

void make_nullable(json& schema, const std::string& name) {
  for (const auto& field :
       kNullableByDesign.count(name) ? kNullableByDesign.at(name) : std::vector<std::string>{}) {
    json& f = schema["properties"][field];
    if (!f.contains("type")) continue;
    std::set<std::string> types;
    if (f["type"].is_string()) {
      types.insert(f["type"].get<std::string>());
    } else {
      for (const auto& t : f["type"]) types.insert(t.get<std::string>());
    }
    types.insert("null");
    f["type"] = json(std::vector<std::string>(types.begin(), types.end()));
  }
}

std::filesystem::path schema_path(const std::string& name) {
  return std::filesystem::path(SPARKOPS_SOURCE_DIR) / "docs/json" / (name + ".schema.json");
}

TEST(JsonContract, EveryDocumentOnEveryFixtureMatchesItsSchema) {
  const test::TempDir tmp;
  const auto docs = every_document(tmp);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const char* update = std::getenv("SPARKOPS_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::map<std::string, json> schemas;
    for (const auto& d : docs) {
      const bool first = !schemas.count(d.schema);
      merge(schemas[d.schema], d.doc, first);
    }
    for (auto& [name, s] : schemas) {
      strip_marks(s);
      make_nullable(s, name);
      json out = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                  {"title", "sparkops " + name + " --json"}};
      for (auto& [k, v] : s.items()) out[k] = v;
      std::filesystem::create_directories(schema_path(name).parent_path());
      test::write_text(schema_path(name), out.dump(2) + "\n");
    }
  }
  std::map<std::string, json> loaded;
  for (const auto& d : docs) {
    if (!loaded.count(d.schema)) loaded[d.schema] = json::parse(test::slurp(schema_path(d.schema)));
    EXPECT_EQ(d.doc.value("schema_version", 0), 1) << d.what;
    std::vector<std::string> errors;
    validate(d.doc, loaded[d.schema], "$", errors);
    EXPECT_TRUE(errors.empty()) << d.what << "\n  " << [&] {
      std::string all;
      for (const auto& e : errors) all += e + "\n  ";
      return all;
    }();
  }
}

// The validator itself: it must catch what the contract forbids.
TEST(JsonContract, ValidatorCatchesATypeChangeAndAMissingField) {
  const json schema = json::parse(R"({"type":"object","required":["a","b"],
    "properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"type":"boolean"}}}})");
  std::vector<std::string> errors;
  validate(json::parse(R"({"a":"240","b":[true]})"), schema, "$", errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "$.a: string where the schema says \"integer\"");
  errors.clear();
  validate(json::parse(R"({"a":1,"b":[true,"no"]})"), schema, "$", errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "$.b[1]: string where the schema says \"boolean\"");
  errors.clear();
  validate(json::parse(R"({"b":[]})"), schema, "$", errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "$: missing required \"a\"");
}

}  // namespace
}  // namespace sparkops
