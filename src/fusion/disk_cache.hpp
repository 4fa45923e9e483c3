#pragma once
// Internal: the file level of the disk cache (Note [disk cache] and Note [cache trust] in
// jit.cpp), shared by the kernel cache (jit.cpp) and the lowered-program cache (Note
// [lowered-program cache] in lower_cache.cpp).
#include <cstdint>
#include <functional>
#include <string>

namespace npc::fusion::disk {

/// Where entries are looked up and written, for a configured cache directory.
struct Dirs {
  std::string lookup;  ///< "" when the configured directory is not trusted
  bool writable = false;
};
/// Checks (and creates, 0700) the configured directory: Note [cache trust].
Dirs resolve_dirs(const std::string& configured);

/// The identity of this process's npc and machine that every key holds: npc version, build
/// id (npc_build_id()) and CPU features.
std::string build_identity();

/// Opens the entry at `path` as Note [cache trust] says (O_NOFOLLOW, a regular file owned by
/// this user, not writable by others, bounded size), reads it whole into `bytes` and verifies
/// its trailer against `key`. Returns the open descriptor (the caller closes it) with `bytes`
/// holding the payload without the trailer, or -1: `bad` then tells an entry that exists but
/// was refused from a missing one.
int open_entry(const std::string& path, const std::string& key, std::string& bytes, bool& bad);
/// open_entry reading into the caller's storage (Note [entries read in place] in jit.cpp):
/// `buffer(n)` returns n writable bytes for the whole entry, trailer included (null: treated
/// as no entry); on success `size` is the payload's size, the bytes before the trailer.
int open_entry_into(const std::string& path, const std::string& key, const std::function<char*(size_t)>& buffer,
                    size_t& size, bool& bad);
/// Writes `payload` and its trailer for `key` to a unique temporary in `dir`, renames it to
/// `dir`/`name` and trims the directory to `limit` bytes (Note [cache size]). False when the
/// entry could not be installed (nothing is left behind).
bool install_entry(const std::string& dir, const std::string& name, const std::string& payload, const std::string& key,
                   int64_t limit);

}  // namespace npc::fusion::disk
