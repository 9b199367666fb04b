#pragma once
// The OpenSSL server context for a web config's tls_server_config, and the per-connection checks
// Go's crypto/tls makes that OpenSSL leaves to the caller.
//
// client_auth_type maps to OpenSSL verify modes as Go's tls.ClientAuthType does:
//   NoClientCert                no certificate requested
//   RequestClientCert           requested, not required, not verified
//   RequireAnyClientCert        required, not verified
//   VerifyClientCertIfGiven     requested, verified against the client CA when sent
//   RequireAndVerifyClientCert  required and verified (the only setting that authenticates)
// Client-initiated renegotiation is refused (a cheap way to make the server do expensive work).
// The system OpenSSL policy still applies: Debian's default (SECLEVEL=2) refuses TLS 1.0/1.1 even
// when min_version allows them.

#include <memory>
#include <string>
#include <vector>

#include <openssl/ssl.h>

#include "base/result.hpp"
#include "exporter/web_config.hpp"

namespace sparkops::exporter {

struct SslCtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxDeleter>;

// Loads the certificate chain, key (checked against the certificate), client CAs and policy.
// Errors name the setting and OpenSSL's reason.
Result<SslCtxPtr> make_tls_context(const TlsServerConfig& config);

// True when the client certificate of the finished handshake `ssl` carries a SAN (DNS, e-mail, IP
// in Go's text form, or URI) equal to one of `allowed`; true when `allowed` is empty.
bool client_san_allowed(SSL* ssl, const std::vector<std::string>& allowed);

// The SANs of `cert` as Go's x509 lists them (DNS names, e-mails, IPs, URIs). For tests and errors.
std::vector<std::string> certificate_sans(X509* cert);

}  // namespace sparkops::exporter
