#pragma once
// Files sparkops creates or appends to, safe when it runs as root in a folder someone else
// controls (a shared /tmp, a project directory, a captured --root tree). Every output is opened
// relative to a directory descriptor that was checked once, so a path swapped afterwards cannot
// redirect the write:
//  - the file itself is never followed when it is a symlink (O_NOFOLLOW), never written when it is
//    not a regular file (a FIFO, a device) or has more than one hard link (a planted link to
//    /etc/shadow), and opened without blocking;
//  - temporaries for atomic writes get unpredictable names and O_EXCL, so a symlink planted for
//    "the next name" is never written through;
//  - with OutputTrust::checked (the default) the directory's last component may not be a symlink,
//    and a directory other users can write to is refused: group- or world-writable without the
//    sticky bit (a group that is the owner's private group does not count). Sticky directories
//    such as /tmp are accepted: other users can plant names there but not rename or remove ours,
//    and the checks above handle planted names. The global flag --trust-output-path
//    (OutputTrust::trusted) lifts the directory checks; the file checks always hold.
// Intermediate path components are resolved by the kernel as usual (its protected_symlinks rule
// covers links in sticky directories).

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/fd.hpp"
#include "base/result.hpp"

namespace sparkops {

enum class OutputTrust {
  checked,  // refuse a symlinked directory and one others can write to
  trusted,  // --trust-output-path: the user vouches for the directory
};

// The directory a file is written into, opened O_DIRECTORY (and O_NOFOLLOW when checked).
// Errors: not_found, permission_denied; conflict (with the one-line reason) for a symlinked or
// shared directory under OutputTrust::checked.
Result<Fd> open_output_dir(const std::filesystem::path& dir, OutputTrust trust);

enum class AppendAccess { write_only, read_write };

// Opens `path` for appending, creating it with `mode` when absent, relative to its checked
// directory. Refuses a symlink, a non-regular file and a file with several hard links (conflict).
Result<Fd> open_output_append(const std::filesystem::path& path, OutputTrust trust,
                              AppendAccess access = AppendAccess::write_only, mode_t mode = 0644);

// Opens an existing file `relative` (no leading '/') below `root` for writing, without following
// any symlink below the root, and only when it is a regular file with one link (/proc/sys knobs,
// a captured tree's copies of them). Nothing is created or truncated.
Result<Fd> open_existing_beneath(const std::filesystem::path& root, std::string_view relative);

// For a secret read from a file (serve --token): a one-line warning when users other than the
// owner can read it (other-readable, or group-readable by a group that is not the owner's private
// group). nullopt when only the owner can, or when the file cannot be examined (reading it will
// report that).
std::optional<std::string> readable_by_others(const std::filesystem::path& path);

// `dir_error` (from open_output_dir) restated for the file that was to be written there.
Error for_file(const std::filesystem::path& path, Error dir_error);

// The directory `path` is written into ("." for a bare file name).
std::filesystem::path output_parent(const std::filesystem::path& path);

}  // namespace sparkops
