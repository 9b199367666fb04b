// `sparkops serve --web.config.file` on loopback: TLS with a certificate the test makes (openssl),
// basic auth with a bcrypt hash, client certificates (verified, unknown, absent) and SAN checks.

#include <gtest/gtest.h>

#include "../tls_fixture.hpp"
#include "serve_harness.hpp"

namespace sparkops::exporter {
namespace {

// Made by Go's bcrypt (exporter-toolkit web/testdata/web_config_users.good.yml): "carol123".
const std::string kCarol = "$2y$10$qRTBuFoULoYNA7AQ/F3ck.trZBPyjV64.oA4ZsSBCIWvXuvQlQTuu";

class ServeTls : public ::testing::Test {
 protected:
  void SetUp() override {
    files_ = test::make_tls_files(dir_.path());
    ASSERT_TRUE(files_);
  }
  // Starts serve with `yaml` as its web config (paths relative to the temp dir).
  test::ServeInstance start(const std::string& yaml) {
    test::write_text(dir_ / "web.yml", yaml);
    return test::start_serve(dir_.path(), "gb10-idle", "",
                             {"--web.config.file", (dir_ / "web.yml").string()});
  }
  // An HTTPS client that verifies the server against the test CA, with an optional client cert.
  std::unique_ptr<httplib::SSLClient> client(int port, bool with_cert = false,
                                             bool stranger = false) {
    std::unique_ptr<httplib::SSLClient> c;
    if (with_cert) {
      const auto& crt = stranger ? files_->stranger_crt : files_->client_crt;
      const auto& key = stranger ? files_->stranger_key : files_->client_key;
      c = std::make_unique<httplib::SSLClient>("127.0.0.1", port, crt.string(), key.string());
    } else {
      c = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    }
    c->set_ca_cert_path(files_->ca_crt.string().c_str());
    c->enable_server_certificate_verification(true);
    c->set_connection_timeout(std::chrono::seconds{5});
    c->set_read_timeout(std::chrono::seconds{10});
    return c;
  }
  std::string tls_block() const {
    return "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
  }
  test::TempDir dir_;
  std::optional<test::TlsFiles> files_;
};

TEST_F(ServeTls, ServesMetricsOverTlsAndNotInPlainText) {
  auto s = start(tls_block());
  ASSERT_GT(s.port, 0);
  EXPECT_NE(s.process->output().find("listening on https://"), std::string::npos);
  auto r = client(s.port)->Get("/metrics");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("sparkops_pool_total_bytes"), std::string::npos);
  // A plain-HTTP client gets no HTTP answer from the TLS port.
  auto plain = test::http_get(s.port, "/metrics");
  EXPECT_TRUE(!plain || plain->status != 200);
  // The server still answers properly afterwards.
  auto again = client(s.port)->Get("/api/status");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

TEST_F(ServeTls, BasicAuthUsersWithBcryptHashes) {
  auto s = start(tls_block() + "basic_auth_users:\n  carol: " + kCarol + "\n");
  ASSERT_GT(s.port, 0);
  auto c = client(s.port);
  auto none = c->Get("/metrics");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Basic");
  c->set_basic_auth("carol", "carol1234");
  auto wrong = c->Get("/metrics");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  c->set_basic_auth("mallory", "carol123");
  auto unknown = c->Get("/metrics");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 401);
  c->set_basic_auth("carol", "carol123");
  auto right = c->Get("/metrics");
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  EXPECT_NE(right->body.find("sparkops_info"), std::string::npos);
  auto dashboard = c->Get("/");
  ASSERT_TRUE(dashboard);
  EXPECT_EQ(dashboard->status, 200);
}

TEST_F(ServeTls, RequireAndVerifyClientCertAdmitsOnlyTheCasClients) {
  auto s = start(tls_block() +
                 "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n");
  ASSERT_GT(s.port, 0);
  auto ok = client(s.port, true)->Get("/metrics");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);
  EXPECT_FALSE(client(s.port)->Get("/metrics")) << "no client certificate must fail the handshake";
  EXPECT_FALSE(client(s.port, true, true)->Get("/metrics")) << "a self-signed client must fail";
  auto after = client(s.port, true)->Get("/metrics");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

TEST_F(ServeTls, ClientAllowedSansAreChecked) {
  const std::string base = tls_block() +
                           "  client_auth_type: RequireAndVerifyClientCert\n"
                           "  client_ca_file: ca.crt\n  client_allowed_sans: [";
  {
    auto s = start(base + "prometheus.lab]\n");
    ASSERT_GT(s.port, 0);
    auto r = client(s.port, true)->Get("/metrics");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
  }
  {
    auto s = start(base + "other.lab]\n");
    ASSERT_GT(s.port, 0);
    auto r = client(s.port, true)->Get("/metrics");
    EXPECT_TRUE(!r || r->status != 200) << "a SAN outside the list must not be served";
  }
}

TEST_F(ServeTls, HeadersFromTheConfigAreSent) {
  auto s = start(tls_block() +
                 "http_server_config:\n  headers:\n    Strict-Transport-Security: max-age=600\n");
  ASSERT_GT(s.port, 0);
  auto r = client(s.port)->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("Strict-Transport-Security"), "max-age=600");
}

TEST_F(ServeTls, BadConfigIsOneLineAndExitTwo) {
  test::write_text(dir_ / "web.yml", "tls_server_config:\n  cert_file: server.crt\n");
  const auto r = test::run_sparkops(
      {"serve", "--gpu", "none", "--web.config.file", (dir_ / "web.yml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing one of key or key_file"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  test::write_text(dir_ / "mismatch.yml",
                   "tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n");
  const auto m = test::run_sparkops(
      {"serve", "--gpu", "none", "--web.config.file", (dir_ / "mismatch.yml").string()});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_NE(m.err.find("does not match"), std::string::npos) << m.err;
}

TEST_F(ServeTls, NonLoopbackNeedsAuthenticationNotJustTls) {
  test::write_text(dir_ / "web.yml", tls_block());
  const auto r = test::run_sparkops({"serve", "--gpu", "none", "--listen", "0.0.0.0:9877",
                                     "--web.config.file", (dir_ / "web.yml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("basic_auth_users"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sparkops::exporter
