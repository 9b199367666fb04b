#pragma once
// Certificates for TLS tests, made by the openssl command (Debian's `openssl` package) in a
// temporary directory: a CA, a server certificate for 127.0.0.1/localhost signed by it, a client
// certificate signed by it (SAN DNS:prometheus.lab, email:ops@lab.example), and a self-signed
// client certificate the CA does not know. EC P-256 keys, one day of validity.

#include <filesystem>
#include <optional>
#include <string>

#include "support/test_support.hpp"

namespace sparkops::test {

struct TlsFiles {
  std::filesystem::path ca_crt, ca_key;
  std::filesystem::path server_crt, server_key;
  std::filesystem::path client_crt, client_key;
  std::filesystem::path stranger_crt, stranger_key;
};

// nullopt (with a test failure describing why) when openssl is missing or fails.
std::optional<TlsFiles> make_tls_files(const std::filesystem::path& dir);

}  // namespace sparkops::test
