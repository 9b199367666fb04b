// The OpenSSL context built from a web config: the test's own certificates (openssl, in a temp
// directory) load, a key that does not match its certificate or a file that holds no PEM is refused
// with the setting's name, and SANs read as Go's x509 lists them.

#include "exporter/tls_context.hpp"

#include <openssl/pem.h>

#include <gtest/gtest.h>

#include "tls_fixture.hpp"

namespace sparkops::exporter {
namespace {

TlsServerConfig config_of(const test::TlsFiles& f) {
  TlsServerConfig c;
  c.cert_pem = test::slurp(f.server_crt);
  c.key_pem = test::slurp(f.server_key);
  c.cert_source = f.server_crt.string();
  return c;
}

TEST(TlsContext, LoadsCertificateKeyAndClientCa) {
  test::TempDir dir;
  const auto f = test::make_tls_files(dir.path());
  ASSERT_TRUE(f);
  auto c = config_of(*f);
  c.client_ca_pem = test::slurp(f->ca_crt);
  c.client_auth = ClientAuth::require_and_verify;
  c.curve_groups = {"X25519", "P-256"};
  auto ctx = make_tls_context(c);
  ASSERT_TRUE(ctx) << ctx.error().detail;
  EXPECT_EQ(SSL_CTX_get_verify_mode(ctx->get()), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
  EXPECT_EQ(SSL_CTX_get_min_proto_version(ctx->get()), TLS1_2_VERSION);
  EXPECT_EQ(sk_X509_NAME_num(SSL_CTX_get_client_CA_list(ctx->get())), 1);
}

TEST(TlsContext, ARequestedCertificateIsNotVerifiedOrRequired) {
  test::TempDir dir;
  const auto f = test::make_tls_files(dir.path());
  ASSERT_TRUE(f);
  auto c = config_of(*f);
  c.client_auth = ClientAuth::request;
  auto ctx = make_tls_context(c);
  ASSERT_TRUE(ctx);
  EXPECT_EQ(SSL_CTX_get_verify_mode(ctx->get()), SSL_VERIFY_PEER);
  EXPECT_NE(SSL_CTX_get_verify_callback(ctx->get()), nullptr);
}

TEST(TlsContext, RefusesAMismatchedKeyAndTextWithoutPem) {
  test::TempDir dir;
  const auto f = test::make_tls_files(dir.path());
  ASSERT_TRUE(f);
  auto mismatched = config_of(*f);
  mismatched.key_pem = test::slurp(f->client_key);
  auto r = make_tls_context(mismatched);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("does not match"), std::string::npos) << r.error().detail;

  auto garbage = config_of(*f);
  garbage.cert_pem = "not a certificate\n";
  r = make_tls_context(garbage);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("no PEM certificate"), std::string::npos);

  auto no_key = config_of(*f);
  no_key.key_pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
  r = make_tls_context(no_key);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().detail.find("not a PEM private key"), std::string::npos);

  auto bad_ca = config_of(*f);
  bad_ca.client_ca_pem = "nothing\n";
  bad_ca.client_auth = ClientAuth::require_and_verify;
  EXPECT_FALSE(make_tls_context(bad_ca));
}

TEST(TlsContext, SansReadAsGoListsThem) {
  test::TempDir dir;
  const auto f = test::make_tls_files(dir.path());
  ASSERT_TRUE(f);
  const std::string pem = test::slurp(f->client_crt);
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(certificate_sans(cert),
            (std::vector<std::string>{"prometheus.lab", "ops@lab.example"}));
  X509_free(cert);
  const std::string server = test::slurp(f->server_crt);
  bio = BIO_new_mem_buf(server.data(), static_cast<int>(server.size()));
  cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EXPECT_EQ(certificate_sans(cert), (std::vector<std::string>{"127.0.0.1", "localhost"}));
  X509_free(cert);
}

// deploy/tls/web-config.yml, with the test's certificates under the names it uses, loads and
// builds a context.
TEST(TlsContext, TheDeployExampleLoads) {
  test::TempDir dir;
  const auto f = test::make_tls_files(dir.path());
  ASSERT_TRUE(f);
  std::filesystem::copy_file(f->server_crt, dir / "spark.crt");
  std::filesystem::copy_file(f->server_key, dir / "spark.key");
  std::filesystem::copy_file(f->ca_crt, dir / "lab-ca.crt");
  std::filesystem::copy_file(
      std::filesystem::path(SPARKOPS_SOURCE_DIR) / "deploy" / "tls" / "web-config.yml",
      dir / "web-config.yml");
  auto config = read_web_config(dir / "web-config.yml");
  ASSERT_TRUE(config) << config.error().detail;
  ASSERT_TRUE(config->tls);
  EXPECT_EQ(config->tls->client_auth, ClientAuth::verify_if_given);
  EXPECT_EQ(config->basic_auth_users.count("ops"), 1U);
  auto ctx = make_tls_context(*config->tls);
  EXPECT_TRUE(ctx) << ctx.error().detail;
}

}  // namespace
}  // namespace sparkops::exporter
