#include "exporter/http_module.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <system_error>

namespace sparkops::exporter {

namespace {

Result<const HttpModule*> open_module() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return fail(Errc::io, "cannot find the sparkops binary (/proc/self/exe): " + ec.message());
  }
  // Relative to the binary, never a search path: a module from LD_LIBRARY_PATH or the working
  // directory would run code the operator did not install.
  const auto path = (self.parent_path() / SPARKOPS_HTTP_MODULE_REL / SPARKOPS_HTTP_MODULE_NAME)
                        .lexically_normal()
                        .string();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return fail(Errc::not_found, "cannot load the HTTP module " + path + ": " +
                                     (why != nullptr ? why : "unknown dlopen error") +
                                     " (it is installed with sparkops; reinstall the package)");
  }
  using Entry = const HttpModule* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kHttpModuleEntry));
  const HttpModule* module = entry != nullptr ? entry() : nullptr;
  if (module == nullptr || module->abi != kHttpModuleAbi || module->read_web_setup == nullptr ||
      module->make_front == nullptr) {
    return fail(Errc::unsupported, "the HTTP module " + path +
                                       " is from another sparkops build (reinstall the package)");
  }
  return module;
}

}  // namespace

Result<const HttpModule*> load_http_module() {
  static std::once_flag once;
  static Result<const HttpModule*> loaded = fail(Errc::io, "not loaded");
  std::call_once(once, [] { loaded = open_module(); });
  return loaded;
}

}  // namespace sparkops::exporter
