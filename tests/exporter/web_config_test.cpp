// --web.config.file: exporter-toolkit's format (docs/web-configuration.md, web/tls_config.go at
// v0.17.1), strict, paths relative to the file, and every refusal names the key.

#include "exporter/web_config.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace sparkops::exporter {
namespace {

const std::string kCarol = "$2y$10$qRTBuFoULoYNA7AQ/F3ck.trZBPyjV64.oA4ZsSBCIWvXuvQlQTuu";

class WebConfigParse : public ::testing::Test {
 protected:
  void SetUp() override {
    test::write_text(dir_ / "server.crt", "CERT PEM\n");
    test::write_text(dir_ / "server.key", "KEY PEM\n");
    test::write_text(dir_ / "ca.crt", "CA PEM\n");
  }
  Result<WebConfig> parse(const std::string& yaml) { return parse_web_config(yaml, dir_.path()); }
  std::string error(const std::string& yaml) {
    auto r = parse(yaml);
    EXPECT_FALSE(r) << yaml;
    return r ? std::string() : r.error().detail;
  }
  test::TempDir dir_;
};

TEST_F(WebConfigParse, ExporterToolkitUsersConfigWithRelativePaths) {
  // exporter-toolkit's web/testdata/web_config_users.good.yml, abridged to one user.
  auto c = parse(
      "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"server.key\"\n"
      "basic_auth_users:\n  carol: " +
      kCarol + "\n");
  ASSERT_TRUE(c) << c.error().detail;
  ASSERT_TRUE(c->tls);
  EXPECT_EQ(c->tls->cert_pem, "CERT PEM\n");
  EXPECT_EQ(c->tls->key_pem, "KEY PEM\n");
  EXPECT_EQ(c->tls->cert_source, (dir_ / "server.crt").string());
  EXPECT_EQ(c->tls->client_auth, ClientAuth::none);
  EXPECT_EQ(c->tls->min_version, TlsVersion::tls12);
  EXPECT_EQ(c->tls->max_version, TlsVersion::tls13);
  EXPECT_EQ(c->basic_auth_users.at("carol"), kCarol);
}

TEST_F(WebConfigParse, EmptyFileOrUsersOnlyMeansPlainHttp) {
  auto empty = parse("");
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->tls);
  EXPECT_TRUE(empty->basic_auth_users.empty());
  auto users = parse("basic_auth_users:\n  carol: " + kCarol + "\n");
  ASSERT_TRUE(users);
  EXPECT_FALSE(users->tls);
  EXPECT_EQ(users->basic_auth_users.size(), 1U);
}

TEST_F(WebConfigParse, ClientCertificatePoliciesAndVersions) {
  auto c = parse(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n"
      "  min_version: TLS13\n  max_version: TLS13\n  prefer_server_cipher_suites: false\n"
      "  curve_preferences: [X25519, CurveP256]\n  client_allowed_sans: [prometheus.lab]\n");
  ASSERT_TRUE(c) << c.error().detail;
  EXPECT_EQ(c->tls->client_auth, ClientAuth::require_and_verify);
  EXPECT_EQ(c->tls->client_ca_pem, "CA PEM\n");
  EXPECT_EQ(c->tls->min_version, TlsVersion::tls13);
  EXPECT_FALSE(c->tls->prefer_server_cipher_suites);
  EXPECT_EQ(c->tls->curve_groups, (std::vector<std::string>{"X25519", "P-256"}));
  EXPECT_EQ(c->tls->client_allowed_sans, (std::vector<std::string>{"prometheus.lab"}));
  auto alias = parse(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  client_auth_type: RequireClientCert\n");
  ASSERT_TRUE(alias);
  EXPECT_EQ(alias->tls->client_auth, ClientAuth::require_any);
}

TEST_F(WebConfigParse, InlinePem) {
  auto c = parse(
      "tls_server_config:\n  cert: |\n    -----BEGIN CERTIFICATE-----\n    abc\n"
      "  key: |\n    -----BEGIN PRIVATE KEY-----\n    def\n");
  ASSERT_TRUE(c) << c.error().detail;
  EXPECT_EQ(c->tls->cert_pem, "-----BEGIN CERTIFICATE-----\nabc\n");
  EXPECT_EQ(c->tls->cert_source, "tls_server_config.cert");
}

TEST_F(WebConfigParse, HeadersFromTheAllowedSet) {
  auto c = parse(
      "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n"
      "    Strict-Transport-Security: max-age=31536000\n");
  ASSERT_TRUE(c) << c.error().detail;
  ASSERT_EQ(c->headers.size(), 2U);
  EXPECT_NE(error("http_server_config:\n  headers:\n    X-Frame-Options: allow\n")
                .find("X-Frame-Options"),
            std::string::npos);
  EXPECT_NE(error("http_server_config:\n  headers:\n    Server: sparkops\n").find("Server"),
            std::string::npos);
  EXPECT_NE(error("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n")
                .find("X-Content-Type-Options"),
            std::string::npos);
}

TEST_F(WebConfigParse, RefusalsNameTheKey) {
  const std::string files = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tls_server_config:\n  certfile: server.crt\n", "certfile: unknown key"},
      {"basic_auth_user:\n  carol: x\n", "basic_auth_user: unknown key"},
      {"tls_server_config:\n  cert_file: server.crt\n", "missing one of key or key_file"},
      {"tls_server_config:\n  key_file: server.key\n", "missing one of cert or cert_file"},
      {"tls_server_config:\n  cert_file: server.crt\n  cert: x\n  key_file: server.key\n",
       "cert or cert_file"},
      {"tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n",
       "tls_server_config.cert_file"},
      {files + "  client_ca_file: ca.crt\n", "without a client_auth_type"},
      {files + "  client_auth_type: RequireAndVerifyClientCert\n", "needs client_ca_file"},
      {files + "  client_auth_type: VerifyAll\n", "client_auth_type: invalid VerifyAll"},
      {files + "  min_version: TLS14\n", "unknown TLS version TLS14"},
      {files + "  min_version: TLS13\n  max_version: TLS12\n", "min_version is above"},
      {files + "  curve_preferences: [CurveP999]\n", "unknown curve CurveP999"},
      {files + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "cipher_suites: not supported"},
      {files + "  client_allowed_sans: [a]\n", "client_allowed_sans needs"},
      {files + "  prefer_server_cipher_suites: maybe\n", "expected true or false"},
      {"rate_limit:\n  interval: 1s\n  burst: 5\n", "rate_limit: not supported"},
      {"basic_auth_users:\n  carol: carol123\n", "basic_auth_users.carol: not a bcrypt hash"},
      {"basic_auth_users: [carol]\n", "basic_auth_users: expected a mapping"},
      {"tls_server_config: [a, b]\n", "tls_server_config: expected a mapping"},
      {"http_server_config:\n  http2: yes please\n", "http2: expected true or false"},
      {"key: [unclosed\n", "not YAML"},
      {"- a\n- b\n", "expected a mapping"},
  };
  for (const auto& [yaml, expected] : cases) {
    const auto e = error(yaml);
    EXPECT_NE(e.find(expected), std::string::npos) << yaml << "-> " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << "one line: " << e;
  }
}

TEST(WebConfigRead, NamesTheFileAndBoundsItsSize) {
  test::TempDir dir;
  test::write_text(dir / "web.yml", "tls_server_config:\n  nope: 1\n");
  auto r = read_web_config(dir / "web.yml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find((dir / "web.yml").string()), std::string::npos);
  auto missing = read_web_config(dir / "absent.yml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().detail.find("--web.config.file"), std::string::npos);
  test::write_text(dir / "big.yml", std::string(2 << 20, '#'));
  EXPECT_FALSE(read_web_config(dir / "big.yml"));
}

}  // namespace
}  // namespace sparkops::exporter
