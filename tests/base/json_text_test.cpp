// Every document goes through dump_document: schema_version first, and numbers rounded at the edge
// (the binary noise of a computation never reaches a reader), integers untouched.
#include "base/json_text.hpp"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace sparkops {
namespace {

TEST(JsonText, DocumentsRoundFloatNoiseAndLeadWithTheSchemaVersion) {
  nlohmann::json doc;
  doc["ratio"] = 3.4999999999999996;
  doc["sum"] = 0.1 + 0.2;  // 0.30000000000000004
  doc["nested"] = {{"list", {1.0 / 3.0, 2.5}}};
  doc["bytes"] = std::uint64_t{18446744073709551615ULL};  // integers keep every digit
  doc["schema_version"] = 99;                             // the document's own is replaced
  const std::string text = dump_document(doc, -1);
  EXPECT_NE(text.find("\"schema_version\":1,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ratio\":3.5"), std::string::npos) << text;
  EXPECT_NE(text.find("\"sum\":0.3"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.30000000000000004"), std::string::npos) << text;
  EXPECT_NE(text.find("0.333333333333"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.3333333333333333"), std::string::npos) << text;
  EXPECT_NE(text.find("18446744073709551615"), std::string::npos) << text;
  // An ordered document gets schema_version first, ahead of its own keys.
  nlohmann::ordered_json ordered;
  ordered["z"] = 0.1 + 0.2;
  EXPECT_EQ(dump_document(ordered, -1), "{\"schema_version\":1,\"z\":0.3}");
  // A bare array is printed as it is (only objects carry schema_version).
  EXPECT_EQ(dump_document(nlohmann::json::array({0.1 + 0.2}), -1), "[0.3]");
}

}  // namespace
}  // namespace sparkops
