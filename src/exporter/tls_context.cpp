#include "exporter/tls_context.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>

namespace sparkops::exporter {

namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;

// OpenSSL's most recent error as text, clearing the queue.
std::string ssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

Error tls_error(const std::string& what) {
  return Error{Errc::malformed, "web config: " + what + ": " + ssl_reason()};
}

BioPtr memory_bio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Every certificate in a PEM text, in order.
std::vector<X509Ptr> read_certificates(const std::string& pem) {
  std::vector<X509Ptr> out;
  auto bio = memory_bio(pem);
  if (!bio) return out;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    out.emplace_back(cert);
  }
  ERR_clear_error();  // the loop ends on "no start line"
  return out;
}

int accept_any_certificate(int /*preverify_ok*/, X509_STORE_CTX* /*ctx*/) {
  return 1;
}

int tls_version_code(TlsVersion v) {
  switch (v) {
    case TlsVersion::tls10:
      return TLS1_VERSION;
    case TlsVersion::tls11:
      return TLS1_1_VERSION;
    case TlsVersion::tls12:
      return TLS1_2_VERSION;
    case TlsVersion::tls13:
      return TLS1_3_VERSION;
  }
  return TLS1_2_VERSION;
}

}  // namespace

Result<SslCtxPtr> make_tls_context(const TlsServerConfig& config) {
  ERR_clear_error();
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return tl::unexpected(tls_error("cannot create a TLS context"));
  SSL_CTX* c = ctx.get();
  if (SSL_CTX_set_min_proto_version(c, tls_version_code(config.min_version)) != 1 ||
      SSL_CTX_set_max_proto_version(c, tls_version_code(config.max_version)) != 1) {
    return tl::unexpected(tls_error("min_version/max_version"));
  }
  long options = SSL_OP_NO_RENEGOTIATION;
  if (config.prefer_server_cipher_suites) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(c, static_cast<std::uint64_t>(options));

  auto certs = read_certificates(config.cert_pem);
  if (certs.empty()) {
    return tl::unexpected(
        Error{Errc::malformed, "web config: " + config.cert_source + ": no PEM certificate in it"});
  }
  if (SSL_CTX_use_certificate(c, certs.front().get()) != 1) {
    return tl::unexpected(tls_error(config.cert_source));
  }
  for (std::size_t i = 1; i < certs.size(); ++i) {
    if (SSL_CTX_add1_chain_cert(c, certs[i].get()) != 1) {
      return tl::unexpected(tls_error(config.cert_source + " (chain)"));
    }
  }
  auto key_bio = memory_bio(config.key_pem);
  PkeyPtr key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr)
                      : nullptr);
  if (!key) return tl::unexpected(tls_error("tls_server_config key: not a PEM private key"));
  if (SSL_CTX_use_PrivateKey(c, key.get()) != 1 || SSL_CTX_check_private_key(c) != 1) {
    return tl::unexpected(tls_error("tls_server_config key does not match " + config.cert_source));
  }

  if (config.client_ca_pem) {
    auto cas = read_certificates(*config.client_ca_pem);
    if (cas.empty()) {
      return tl::unexpected(
          Error{Errc::malformed, "web config: client CA: no PEM certificate in it"});
    }
    X509_STORE* store = SSL_CTX_get_cert_store(c);
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    for (const auto& ca : cas) {
      if (X509_STORE_add_cert(store, ca.get()) != 1) {
        sk_X509_NAME_pop_free(names, X509_NAME_free);
        return tl::unexpected(tls_error("client CA"));
      }
      sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(ca.get())));
    }
    SSL_CTX_set_client_CA_list(c, names);  // takes ownership
  }
  switch (config.client_auth) {
    case ClientAuth::none:
      SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::request:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER, accept_any_certificate);
      break;
    case ClientAuth::require_any:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         accept_any_certificate);
      break;
    case ClientAuth::verify_if_given:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::require_and_verify:
      SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  if (!config.curve_groups.empty()) {
    std::string list;
    for (const auto& g : config.curve_groups) list += (list.empty() ? "" : ":") + g;
    if (SSL_CTX_set1_groups_list(c, list.c_str()) != 1) {
      return tl::unexpected(tls_error("curve_preferences"));
    }
  }
  return ctx;
}

std::vector<std::string> certificate_sans(X509* cert) {
  std::vector<std::string> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type == GEN_DNS || n->type == GEN_EMAIL || n->type == GEN_URI) {
      const ASN1_IA5STRING* s = n->d.ia5;
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       static_cast<std::size_t>(ASN1_STRING_length(s)));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = n->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = {};
      const int len = ASN1_STRING_length(ip);
      const unsigned char* bytes = ASN1_STRING_get0_data(ip);
      if (len == 4 && inet_ntop(AF_INET, bytes, text, sizeof text)) {
        out.emplace_back(text);
      } else if (len == 16 && inet_ntop(AF_INET6, bytes, text, sizeof text)) {
        out.emplace_back(text);
      }
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

bool client_san_allowed(SSL* ssl, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  X509Ptr cert(SSL_get1_peer_certificate(ssl));
  if (!cert) return false;
  const auto sans = certificate_sans(cert.get());
  return std::any_of(sans.begin(), sans.end(), [&allowed](const std::string& s) {
    return std::find(allowed.begin(), allowed.end(), s) != allowed.end();
  });
}

}  // namespace sparkops::exporter
