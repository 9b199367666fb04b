#include "ladder/oom_text.hpp"

#include <gtest/gtest.h>

namespace sparkops::ladder::oomtext {
namespace {

TEST(DenseText, WhitespaceLineBreaksAndCommentPrefixesVanish) {
  const auto dense = make_dense("# CUDA out of mem\n#   ory. Tried\r\n// to allocate");
  EXPECT_EQ(dense.lower, "cudaoutofmemory.triedtoallocate");
  EXPECT_EQ(dense.orig, "CUDAoutofmemory.Triedtoallocate");
}

TEST(DenseText, LiteralBackslashNIsALineBreak) {
  const auto dense = make_dense(R"(last):\n  File "x.py"\n# CUDA)");
  EXPECT_EQ(dense.lower, "last):file\"x.py\"cuda");
  EXPECT_NE(static_cast<unsigned char>(dense.flags[6]) & kLineStart, 0);
}

TEST(DenseText, ChunkBoundaryInsideEscapeIsHandled) {
  DenseNormalizer normalizer;
  DenseText out;
  normalizer.feed("a\\", out);
  normalizer.feed("nb\\", out);
  normalizer.finish(out);
  EXPECT_EQ(out.lower, "ab\\");
}

TEST(DenseQuantity, ReadsBinaryAndDecimalUnits) {
  EXPECT_EQ(quantity_at("3.75gib.gpu0", 0, SiPrefix::decimal), 4026531840ULL);
  EXPECT_EQ(quantity_at("(44.0gib)", 0, SiPrefix::decimal), 47244640256ULL);
  EXPECT_EQ(quantity_at(":18.13gb", 0, SiPrefix::decimal), 18130000000ULL);
  EXPECT_EQ(quantity_at("192.00mb", 0, SiPrefix::binary), 201326592ULL);
  EXPECT_EQ(quantity_at("1234", 0, SiPrefix::decimal, BareNumber::bytes), 1234ULL);
  EXPECT_FALSE(quantity_at("1234", 0, SiPrefix::decimal).has_value());
  EXPECT_FALSE(quantity_at("-0.3gib", 0, SiPrefix::decimal).has_value());
}

TEST(DenseQuantity, ReadsTheSizeBeforeAPosition) {
  const std::string_view text = "17.83gibalreadyallocated;3.75gibfree;";
  EXPECT_EQ(quantity_before(text, text.find("free;"), SiPrefix::decimal), 4026531840ULL);
}

TEST(DenseToken, RestoresSpacesAndStopsAtStopChar) {
  const auto dense = make_dense("Killed process 12 (ollama runner) total");
  const auto v = dense.view();
  EXPECT_EQ(token_at(v, v.lower.find('(') + 1, ")", TokenEnd::stop_char), "ollama runner");
  EXPECT_EQ(pid_at(v.lower, v.lower.find("process") + 7), 12U);
}

}  // namespace
}  // namespace sparkops::ladder::oomtext
