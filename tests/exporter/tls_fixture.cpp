#include "tls_fixture.hpp"

#include <gtest/gtest.h>

namespace sparkops::test {

namespace {

bool openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_process(argv);
  if (r.exit_code != 0) ADD_FAILURE() << "openssl " << args.front() << " failed: " << r.err;
  return r.exit_code == 0;
}

bool key(const std::filesystem::path& path) {
  return openssl({"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                  path.string()});
}

// A certificate for `subject`, signed by the CA, with the extensions in `ext` (an openssl
// extension file section).
bool signed_cert(const std::filesystem::path& dir, const std::string& name,
                 const std::string& subject, const std::string& ext, const TlsFiles& f) {
  const auto csr = dir / (name + ".csr");
  const auto extfile = dir / (name + ".ext");
  write_text(extfile, ext);
  return openssl({"req", "-new", "-key", (dir / (name + ".key")).string(), "-subj", subject, "-out",
                  csr.string()}) &&
         openssl({"x509", "-req", "-in", csr.string(), "-CA", f.ca_crt.string(), "-CAkey",
                  f.ca_key.string(), "-CAcreateserial", "-days", "1", "-extfile", extfile.string(),
                  "-out", (dir / (name + ".crt")).string()});
}

}  // namespace

std::optional<TlsFiles> make_tls_files(const std::filesystem::path& dir) {
  if (!std::filesystem::exists("/usr/bin/openssl")) {
    ADD_FAILURE() << "/usr/bin/openssl missing: run tools/install-deps.sh --test";
    return std::nullopt;
  }
  TlsFiles f{dir / "ca.crt",     dir / "ca.key",     dir / "server.crt",   dir / "server.key",
             dir / "client.crt", dir / "client.key", dir / "stranger.crt", dir / "stranger.key"};
  const bool ok =
      key(f.ca_key) &&
      openssl({"req", "-x509", "-new", "-key", f.ca_key.string(), "-subj", "/CN=sparkops test CA",
               "-days", "1", "-out", f.ca_crt.string()}) &&
      key(f.server_key) &&
      signed_cert(dir, "server", "/CN=localhost",
                  "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n", f) &&
      key(f.client_key) &&
      signed_cert(dir, "client", "/CN=prometheus",
                  "subjectAltName=DNS:prometheus.lab,email:ops@lab.example\n"
                  "extendedKeyUsage=clientAuth\n",
                  f) &&
      key(f.stranger_key) &&
      openssl({"req", "-x509", "-new", "-key", f.stranger_key.string(), "-subj", "/CN=stranger",
               "-days", "1", "-addext", "subjectAltName=DNS:prometheus.lab", "-out",
               f.stranger_crt.string()});
  if (!ok) return std::nullopt;
  return f;
}

}  // namespace sparkops::test
