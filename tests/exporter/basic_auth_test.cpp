// Basic auth against bcrypt hashes. The $2y$ hashes were made by Go's golang.org/x/crypto/bcrypt
// (exporter-toolkit's web/testdata/web_config_users.good.yml and handler.go, v0.17.1: carol123,
// dave123, fakepassword), so libxcrypt is checked against another implementation.

#include "exporter/basic_auth.hpp"

#include <gtest/gtest.h>

namespace sparkops::exporter {
namespace {

const std::string kCarol = "$2y$10$qRTBuFoULoYNA7AQ/F3ck.trZBPyjV64.oA4ZsSBCIWvXuvQlQTuu";
const std::string kDave = "$2y$10$2UXri9cIDdgeKjBo4Rlpx.U3ZLDV8X1IxKmsfOvhcM5oXQt/mLmXq";
const std::string kFake = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";
const std::string k2b = "$2b$04$lKssf9oNUg3jCV/UKaPpzeqId7nus8l6jCjdemC89Q8YmY2xSahdS";  // spark-02

TEST(Bcrypt, RecognisesTheHashFormats) {
  EXPECT_TRUE(is_bcrypt_hash(kCarol));
  EXPECT_TRUE(is_bcrypt_hash(k2b));
  EXPECT_TRUE(is_bcrypt_hash("$2a$04$lKssf9oNUg3jCV/UKaPpzeqId7nus8l6jCjdemC89Q8YmY2xSahdS"));
  EXPECT_FALSE(is_bcrypt_hash("$2x$04$lKssf9oNUg3jCV/UKaPpzeqId7nus8l6jCjdemC89Q8YmY2xSahdS"));
  EXPECT_FALSE(is_bcrypt_hash("$2b$03$lKssf9oNUg3jCV/UKaPpzeqId7nus8l6jCjdemC89Q8YmY2xSahdS"));
  EXPECT_FALSE(is_bcrypt_hash("$2b$04$lKssf9oNUg3jCV/UKaPpzeqId7nus8l6jCjdemC89Q8YmY2xSahd"));
  EXPECT_FALSE(is_bcrypt_hash("$2b$04$lKssf9oNUg3jCV/UKaPpzeqId7nus8l6jCjdemC89Q8YmY2xSah!S"));
  EXPECT_FALSE(is_bcrypt_hash("$6$salt$hash"));  // SHA-512 crypt: not what the format allows
  EXPECT_FALSE(is_bcrypt_hash("carol123"));
}

TEST(Bcrypt, VerifiesGoMadeAndXcryptMadeHashes) {
  EXPECT_TRUE(bcrypt_matches("carol123", kCarol));
  EXPECT_TRUE(bcrypt_matches("dave123", kDave));
  EXPECT_TRUE(bcrypt_matches("fakepassword", kFake));
  EXPECT_TRUE(bcrypt_matches("spark-02", k2b));
  EXPECT_FALSE(bcrypt_matches("carol1234", kCarol));
  EXPECT_FALSE(bcrypt_matches("", kCarol));
  EXPECT_FALSE(bcrypt_matches("dave123", kCarol));
}

TEST(Bcrypt, OverlongOrNulPasswordsNeverMatch) {
  // bcrypt reads 72 bytes: a 73-byte password sharing them would match a truncating verifier.
  EXPECT_FALSE(bcrypt_matches(std::string(73, 'a'), kCarol));
  EXPECT_FALSE(bcrypt_matches(std::string("carol123\0tail", 13), kCarol));
  EXPECT_FALSE(bcrypt_matches("carol123", "not a hash"));
}

BasicAuth users() {
  return BasicAuth({{"carol", kCarol}, {"dave", kDave}});
}

TEST(BasicAuth, AllowsAListedUserWithTheRightPassword) {
  auto auth = users();
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.allows("Basic Y2Fyb2w6Y2Fyb2wxMjM="));  // carol:carol123
  EXPECT_TRUE(auth.allows("Basic ZGF2ZTpkYXZlMTIz"));      // dave:dave123
  EXPECT_TRUE(auth.allows("Basic Y2Fyb2w6Y2Fyb2wxMjM="));  // again, from the cache
}

TEST(BasicAuth, RefusesWrongPasswordsUnknownUsersAndMalformedHeaders) {
  auto auth = users();
  EXPECT_FALSE(auth.allows("Basic Y2Fyb2w6Y2Fyb2wxMjM0"));      // carol:carol1234
  EXPECT_FALSE(auth.allows("Basic bWFsbG9yeTpjYXJvbDEyMw=="));  // mallory with carol's password
  EXPECT_FALSE(auth.allows("Basic Y2Fyb2w6"));                  // carol, empty password
  EXPECT_FALSE(auth.allows("Basic bm9jb2xvbg=="));              // no colon
  EXPECT_FALSE(auth.allows("Basic !!!!"));
  EXPECT_FALSE(auth.allows("Basic Y2Fyb2w6Y2Fyb2wxMjM"));  // not a multiple of 4
  EXPECT_FALSE(auth.allows("Bearer Y2Fyb2w6Y2Fyb2wxMjM="));
  EXPECT_FALSE(auth.allows("basic Y2Fyb2w6Y2Fyb2wxMjM="));
  EXPECT_FALSE(auth.allows(""));
  EXPECT_FALSE(auth.allows("Basic " + std::string(8000, 'A')));
  // A refusal is cached per password: the right one still works afterwards.
  EXPECT_TRUE(auth.allows("Basic Y2Fyb2w6Y2Fyb2wxMjM="));
}

TEST(BasicAuth, NoUsersMeansNoBasicAuth) {
  BasicAuth none({});
  EXPECT_FALSE(none.enabled());
  EXPECT_TRUE(none.allows(""));
}

}  // namespace
}  // namespace sparkops::exporter
