// JIT: compile one translation unit with the system C++ compiler, cache the shared object
// on disk, load it with dlopen.
//
// Note [disk cache]
// An entry is <cache_dir>/<key>.so, key = hash(source, compiler identity, flags, CPU
// features, npc version, build id of the binary that holds npc). The build id (the linker's
// GNU build-id note) changes with every rebuild of npc, so a kernel compiled against another
// build's calling convention is never loaded, even when its source text is the same. The
// file is the shared object followed by a 32-byte trailer ("NPCSO003", payload size,
// payload hash, hash of the key), so a truncated or corrupt entry, and an entry of another
// kernel renamed to this key, are detected before dlopen (the dynamic loader ignores bytes
// after the ELF image). Writers compile to a unique temporary name and rename() it into
// place, so concurrent processes never see a partial file; two writers racing both install
// a valid entry. Every failure path removes the temporaries; files a killed process left
// behind are pruned with the least recently used entries (Note [cache size]).
//
// Note [cache trust]
// Loading an entry runs its code in this process, so the cache is a trust boundary. A
// directory is used only when lstat() shows a real directory (not a symlink) owned by this
// user (or root) and not writable by group or others; npc creates it 0700. Otherwise a
// warning is printed once and this process keeps no disk cache: kernels are compiled into a
// private mkdtemp() directory removed at exit (never a predictable shared path such as
// /tmp/npc-cache-<uid>, which another user could create first). A trusted directory this
// process cannot write (a cache baked into a read-only image) is still used for lookups;
// new kernels then go to the private directory (logged once). An entry is opened once with
// O_NOFOLLOW|O_NONBLOCK (a symlink is refused, a FIFO does not block), must be a regular
// file owned by this user (or root), not writable by group or others and at most
// kMaxEntryBytes long; its trailer is verified and the same open file is loaded through
// /proc/self/fd/N, so the file checked is the file loaded. The trailer hashes are not a
// signature (anyone can compute them): the directory's ownership is what keeps others out.
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <vector>

#include "core/hash.hpp"
#include "fusion/disk_cache.hpp"
#include "npc/fusion.hpp"
#include "ops/math_simd.hpp"

#ifndef NPC_VERSION
#define NPC_VERSION "0"
#endif

namespace npc::fusion {
namespace {

std::mutex g_mu;
Stats g_stats;

std::string hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

std::string env(const char* name, const std::string& def = "") {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : def;
}

// The compiler's identity without running it: resolved path, size and mtime of the binary
// (an upgrade changes them). Empty when the compiler is not found.
std::string compiler_identity(const std::string& cxx) {
  std::string prog = cxx.substr(0, cxx.find(' '));
  std::string found;
  if (prog.find('/') != std::string::npos) {
    found = prog;
  } else {
    std::string path = env("PATH", "/usr/bin:/bin");
    size_t s = 0;
    while (s <= path.size()) {
      size_t e = path.find(':', s);
      if (e == std::string::npos) e = path.size();
      std::string cand = path.substr(s, e - s) + "/" + prog;
      if (::access(cand.c_str(), X_OK) == 0) { found = cand; break; }
      s = e + 1;
    }
  }
  if (found.empty()) return "";
  char real[4096];
  if (!::realpath(found.c_str(), real)) return "";
  struct stat st{};
  if (::stat(real, &st) != 0) return "";
  return cxx + "|" + real + "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_mtime);
}

const std::string& cpu_features() {
  static const std::string s = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(f, line)) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
      if (!model.empty() && !flags.empty()) break;
    }
    return model + "|" + flags;
  }();
  return s;
}

// 003: the payload and key hashes are hash64 (Note [hashing bytes] in src/core/hash.hpp).
constexpr char kMagic[8] = {'N', 'P', 'C', 'S', 'O', '0', '0', '3'};
constexpr size_t kTrailer = 32;
// Larger than any generated kernel library by far; a bigger "entry" is never read.
constexpr int64_t kMaxEntryBytes = int64_t(256) << 20;

uint64_t key_hash(const std::string& key) { return hash64(key.data(), key.size(), 1); }

// The trailer appended to a compiled shared object of `key` (Note [disk cache]).
std::string trailer(std::string_view payload, const std::string& key) {
  std::string t(kMagic, 8);
  uint64_t v[3] = {payload.size(), hash64(payload.data(), payload.size()), key_hash(key)};
  t.append(reinterpret_cast<const char*>(v), sizeof v);
  return t;
}

bool verify_entry(std::string_view bytes, const std::string& key) {
  if (bytes.size() < kTrailer) return false;
  size_t n = bytes.size() - kTrailer;
  return bytes.substr(n) == trailer(bytes.substr(0, n), key);
}

std::map<std::string, std::shared_ptr<Module>>& loaded() {
  static std::map<std::string, std::shared_ptr<Module>> m;
  return m;
}

std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + hex(rd());
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

std::string home_dir() {
  struct passwd pw{}, *res = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &res) == 0 && res && res->pw_dir) return res->pw_dir;
  return "";
}

void warn_line(const std::string& msg) { std::cerr << "npc: warning: " << msg << std::endl; }

// Prints `msg` the first time `what` is seen in this process.
void warn_once(const std::string& what, const std::string& msg) {
  static std::mutex mu;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> l(mu);
    if (!seen.insert(what).second) return;
  }
  warn_line(msg);
}

bool trusted_owner(uid_t uid) { return uid == ::geteuid() || uid == 0; }

// Why `st` (from lstat or fstat) may not be trusted as part of the cache; "" when it may.
std::string distrust(const struct stat& st, bool want_dir) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return want_dir ? "is not a directory" : "is not a regular file";
  if (!trusted_owner(st.st_uid)) return "is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "is writable by group or others";
  return "";
}

// Creates the missing components of `dir` with mode 0700 (existing ones are left alone).
void make_dirs(const std::string& dir) {
  size_t s = 0;
  while (s < dir.size()) {
    size_t e = dir.find('/', s + 1);
    if (e == std::string::npos) e = dir.size();
    std::string cur = dir.substr(0, e);
    if (!cur.empty()) ::mkdir(cur.c_str(), 0700);
    s = e;
  }
}

// Removes the regular files and symlinks directly inside `dir` whose names start with one
// of `prefixes` (all when empty) and, when `rmdir_too`, the directory itself.
int64_t remove_files(const std::string& dir, const std::vector<std::string>& prefixes, bool rmdir_too) {
  int64_t n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      bool match = prefixes.empty();
      for (auto& p : prefixes) match = match || name.rfind(p, 0) == 0;
      if (match && ::unlink((dir + "/" + name).c_str()) == 0) ++n;
    }
    ::closedir(d);
  }
  if (rmdir_too) ::rmdir(dir.c_str());
  return n;
}

// The private directory of this process (Note [cache trust]): created on first use, removed
// at exit by the process that created it (not by forked children).
std::mutex g_private_mu;
std::string g_private_dir;
pid_t g_private_owner = 0;

void remove_private_dir() {
  std::lock_guard<std::mutex> l(g_private_mu);
  if (!g_private_dir.empty() && ::getpid() == g_private_owner) remove_files(g_private_dir, {}, true);
}

std::string private_dir() {
  std::lock_guard<std::mutex> l(g_private_mu);
  if (g_private_dir.empty() || g_private_owner != ::getpid()) {
    std::string base = env("TMPDIR", "/tmp");
    std::string tmpl = base + "/npc-kernels-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!::mkdtemp(buf.data())) {
      tmpl = "/tmp/npc-kernels-XXXXXX";
      buf.assign(tmpl.begin(), tmpl.end());
      buf.push_back('\0');
      if (!::mkdtemp(buf.data()))
        throw CodegenError("cannot create a private directory for compiled kernels: " + std::string(std::strerror(errno)));
    }
    static bool registered = (std::atexit(remove_private_dir), true);
    (void)registered;
    g_private_dir = buf.data();
    g_private_owner = ::getpid();
  }
  return g_private_dir;
}

using disk::Dirs;

Dirs resolve_dirs(const std::string& configured) {
  Dirs d;
  struct stat st{};
  if (::lstat(configured.c_str(), &st) != 0 && errno == ENOENT) make_dirs(configured);
  std::string why;
  if (::lstat(configured.c_str(), &st) != 0) why = std::string("cannot be created (") + std::strerror(errno) + ")";
  else why = distrust(st, true);
  if (!why.empty()) {
    warn_once(configured + "|" + why,
              "kernel cache directory " + configured + " " + why +
                  "; the disk cache is disabled and kernels are compiled into a private temporary directory "
                  "(use a directory owned by you with mode 0700)");
    return d;
  }
  d.lookup = configured;
  d.writable = ::faccessat(AT_FDCWD, configured.c_str(), W_OK | X_OK, AT_EACCESS) == 0;
  if (!d.writable)
    warn_once(configured + "|ro", "kernel cache directory " + configured +
                                      " is read-only: its kernels are used, new ones are compiled into a private "
                                      "temporary directory");
  return d;
}

// Whether an object named `name` is loaded in this process.
bool name_loaded(const std::string& name) {
  struct Query {
    const std::string* name;
    bool found;
  } q{&name, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* q = static_cast<Query*>(data);
        q->found = info->dlpi_name && *q->name == info->dlpi_name;
        return q->found ? 1 : 0;
      },
      &q);
  return q.found;
}

// Note [loading through /proc/self/fd]
// dlopen() of the file open as `fd`, through /proc/self/fd/N. The dynamic loader returns
// the object already loaded under the same name without opening anything, and an earlier
// kernel may have been loaded through the same descriptor number: the file is then loaded
// through a duplicate descriptor whose name is unused. The loader also matches a new file
// against the loaded objects by device and inode, and when one matches it returns that
// object and adds the new name to that object's names, which dl_iterate_phdr does not
// show: a later, different kernel opened as the same N would then get the old object (and
// its old kernels, all named npc_g_k<i>). So a file whose inode is loaded already (the same
// cache entry found on disk again after clear_cache() forgot the loaded modules) is never
// passed to dlopen: its handle is returned from `by_inode`. Loaded kernels are never
// dlclose()d, so their inodes stay allocated and an inode seen here names one file for the
// life of the process.
void* dlopen_fd(int fd) {
  static std::mutex mu;
  static std::map<std::pair<dev_t, ino_t>, void*> by_inode;
  std::lock_guard<std::mutex> l(mu);
  struct stat st{};
  if (::fstat(fd, &st) != 0) return nullptr;
  const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
  if (auto it = by_inode.find(id); it != by_inode.end()) return it->second;
  std::vector<int> held;
  int use = fd;
  while (name_loaded("/proc/self/fd/" + std::to_string(use))) {
    use = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (use < 0) break;
    held.push_back(use);
  }
  void* h = use < 0 ? nullptr : ::dlopen(("/proc/self/fd/" + std::to_string(use)).c_str(), RTLD_NOW | RTLD_LOCAL);
  for (int d : held) ::close(d);
  if (h) by_inode.emplace(id, h);
  return h;
}

// Note [entries read in place]
// A kept trace of a cut loop is tens of megabytes (seidel_2d at size M: 52 MB). Read into a
// std::string (zeroed first, then read) and copied into the Python bytes object the caller
// wanted, its pages were touched three times and faulted in twice: a tenth of loading the
// trace. open_entry_into reads the entry straight into storage the caller provides (for
// _cache_entry_read, the bytes object itself), with every check of open_entry: the caller
// gets the payload's size only when the whole entry was read and its trailer verified. The
// lowered-program cache (lower_cache.cpp) reads its entries, one per graph of a loaded plan,
// into storage that is not zeroed first, for the same reason.
//
// Opens and checks the entry at `path` (Note [cache trust]); disk::open_entry_into says more.
int open_entry_into(const std::string& path, const std::string& key, const std::function<char*(size_t)>& buffer,
                    size_t& size, bool& bad) {
  bad = false;
  size = 0;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    bad = errno != ENOENT;
    return -1;
  }
  struct stat st{};
  if (::fstat(fd, &st) == 0 && distrust(st, false).empty() && st.st_size >= static_cast<off_t>(kTrailer) &&
      st.st_size <= kMaxEntryBytes) {
    const size_t n = static_cast<size_t>(st.st_size);
    char* p = buffer(n);
    if (!p) {  // no storage: as if there were no entry
      ::close(fd);
      return -1;
    }
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd, p + got, n - got, static_cast<off_t>(got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    if (got == n && verify_entry(std::string_view(p, n), key)) {
      size = n - kTrailer;
      return fd;
    }
  }
  ::close(fd);
  bad = true;
  return -1;
}

// Opens and checks the entry at `path` (Note [cache trust]); disk::open_entry says more.
int open_entry(const std::string& path, const std::string& key, std::string& bytes, bool& bad) {
  size_t size = 0;
  const int fd = open_entry_into(path, key, [&](size_t n) {
    bytes.assign(n, '\0');
    return bytes.data();
  }, size, bad);
  bytes.resize(fd < 0 ? 0 : size);
  return fd;
}

// Opens, checks and loads the entry at `path` (Note [cache trust]). Returns the handle, or
// null: `bad` tells an entry that exists but was refused from a missing one.
void* load_entry(const std::string& path, const std::string& key, bool& bad) {
  std::string bytes;
  int fd = open_entry(path, key, bytes, bad);
  if (fd < 0) return nullptr;
  void* h = dlopen_fd(fd);
  if (h) ::futimens(fd, nullptr);  // recently used (Note [cache size]); fails harmlessly read-only
  ::close(fd);
  bad = h == nullptr;
  return h;
}

// The names of cache entries: kernels "<32 hex>.so", lowered programs "<32 hex>.low" (Note
// [lowered-program cache] in lower_cache.cpp), kept traces "<32 hex>.trace" (Note [persisted
// traces] in python/npc/compiler/_persist.py) and kept modes "<32 hex>.mode" (Note [modes kept
// across processes], same file); all are trimmed and cleared together.
bool is_entry_name(const std::string& name) {
  return (name.size() == 35 && name.compare(32, 3, ".so") == 0) || (name.size() == 36 && name.compare(32, 4, ".low") == 0) ||
         (name.size() == 38 && name.compare(32, 6, ".trace") == 0) || (name.size() == 37 && name.compare(32, 5, ".mode") == 0);
}

// Note [cache size]
// After each install the directory is trimmed to npc.config.cache_size_limit bytes: entries
// (kernels, lowered programs, kept traces and modes: is_entry_name) are removed oldest
// modification time first (a disk hit refreshes the time, so this is least recently used),
// and temporaries older than an hour (a process killed while compiling) are removed.
// Removing a loaded entry is safe: its mapping stays valid.
void trim_cache(const std::string& dir, int64_t limit) {
  struct Entry {
    std::string path;
    int64_t size;
    struct timespec mtime;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  const time_t now = ::time(nullptr);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    bool entry = is_entry_name(name);
    bool temp = name.rfind("tmp-", 0) == 0, failed = name.rfind("failed-", 0) == 0;
    if (!entry && !temp && !failed) continue;
    std::string path = dir + "/" + name;
    struct stat st{};
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (temp) {
      if (now - st.st_mtime > 3600) ::unlink(path.c_str());
      continue;
    }
    entries.push_back({path, static_cast<int64_t>(st.st_size), st.st_mtim});
    total += st.st_size;
  }
  ::closedir(d);
  if (limit <= 0 || total <= limit) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
  });
  int64_t evicted = 0;
  for (auto& e : entries) {
    if (total <= limit) break;
    if (::unlink(e.path.c_str()) == 0) {
      total -= e.size;
      ++evicted;
    }
  }
  std::lock_guard<std::mutex> l(g_mu);
  g_stats.evictions += evicted;
}

// Writes all of `data` to `fd`; false on any error (a full disk).
bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_fd(int fd, std::string& out, int64_t cap) {
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) return true;
    out.append(buf, static_cast<size_t>(r));
    if (static_cast<int64_t>(out.size()) > cap) return false;
  }
}

// Temporary files of one compile, removed on every path out of jit() unless released.
struct Temps {
  std::vector<std::string> paths;
  ~Temps() {
    for (auto& p : paths) ::unlink(p.c_str());
  }
};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGSEGV: return "SIGSEGV";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return nullptr;
  }
}

// "exit code 1", "killed by SIGSEGV": the compiler's fate from a wait() status. The command
// runs under a supervising shell (Note [compiler child]), which reports a child killed by
// signal N as exit status 128 + N.
std::string describe_status(int status) {
  int sig = 0;
  if (WIFSIGNALED(status)) sig = WTERMSIG(status);
  else if (WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 32) sig = WEXITSTATUS(status) - 128;
  if (sig) {
    const char* n = signal_name(sig);
    return std::string("killed by ") + (n ? n : "signal " + std::to_string(sig));
  }
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

WaitHooks g_hooks{};
std::mutex g_hooks_mu;

// Note [compiler child]
// The compiler runs as `/bin/sh -c 'trap "kill -KILL 0" TERM; <cxx> <flags> ... & wait $!'`
// in a new process group, with its output in the log file. The shell is a supervisor: it
// gets SIGTERM when this thread dies (PR_SET_PDEATHSIG, set in the vfork()ed child before
// exec; only system calls run between vfork and exec) and then kills the whole group,
// the compiler driver's own children (cc1plus, as, ld) included. jit() waits with the GIL
// released (WaitHooks), polling the child: past npc.config.compile_timeout seconds, or when
// the Python signal handlers raise (Ctrl-C), it kills the group and gives up.
class CompilerChild {
 public:
  CompilerChild(const std::string& command, int log_fd) {
    const std::string script = "trap 'kill -KILL 0' TERM; " + command + " </dev/null & wait $!";
    const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
    const pid_t parent = ::getpid();
    // vfork, as posix_spawn does: no copy of a large parent's page tables (nor a failure
    // under strict overcommit), no fork handlers. Signals stay blocked until the child has
    // reset every handler to the default, so none of this process's handlers runs in it.
    sigset_t all, saved;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &saved);
    pid_ = ::vfork();
    if (pid_ == 0) {
      // System calls only: the child shares this process's memory until execve.
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      for (int sig = 1; sig < NSIG; ++sig)
        if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
      ::sigprocmask(SIG_SETMASK, &saved, nullptr);
      ::execve("/bin/sh", const_cast<char* const*>(argv), environ);
      ::_exit(127);
    }
    const int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    if (pid_ < 0) throw CodegenError(std::string("cannot start the C++ compiler: ") + std::strerror(err));
    ::setpgid(pid_, pid_);  // also here, so the group exists before any kill below
  }
  ~CompilerChild() {
    if (pid_ > 0) kill_group();
  }
  // Waits for the compiler; returns its wait() status, or -1 on a time-out. Rethrows what
  // the interrupt hook throws, after killing the group.
  int wait(double timeout) {
    const auto t0 = std::chrono::steady_clock::now();
    auto last_poll = t0;
    long sleep_us = 500;
    for (;;) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      if (r < 0 && errno != EINTR) {
        pid_ = -1;
        return 0x7f00;  // exit code 127
      }
      auto now = std::chrono::steady_clock::now();
      if (timeout > 0 && std::chrono::duration<double>(now - t0).count() > timeout) {
        kill_group();
        return -1;
      }
      if (g_hooks.poll && now - last_poll > std::chrono::milliseconds(50)) {
        last_poll = now;
        try {
          g_hooks.poll();
        } catch (...) {
          kill_group();
          throw;
        }
      }
      struct timespec ts{0, sleep_us * 1000};
      ::nanosleep(&ts, nullptr);
      sleep_us = std::min(sleep_us * 2, 20000L);
    }
  }

 private:
  pid_t pid_ = -1;
  void kill_group() {
    ::kill(-pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    pid_ = -1;
  }
};

// Gives the GIL back for the lifetime of the object (WaitHooks), when a binding installed
// hooks.
struct HookedRelease {
  void* token = nullptr;
  HookedRelease() {
    if (g_hooks.release) token = g_hooks.release();
  }
  ~HookedRelease() {
    if (g_hooks.restore) g_hooks.restore(token);
  }
};

// Runs `command` (output into `log_path`); returns the wait() status, -1 on a time-out.
int run_compiler(const std::string& command, const std::string& log_path, double timeout) {
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log_fd < 0) throw CodegenError("cannot create " + log_path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{log_fd};
  HookedRelease nogil;
  CompilerChild child(command, log_fd);
  return child.wait(timeout);
}

}  // namespace

Config& config() {
  static Config c = [] {
    Config c;
    c.cxx = env("CXX", "c++");
    // Note [kernel vector width]: 256-bit vectors on every x86-64 CPU. A float sum's SIMD
    // lanes (Note [summation] in lower_reduce.cpp) follow the vector width, and the compiler's
    // default width differs between CPUs with AVX-512 (256 bits on Intel's, 512 on AMD's Zen 4):
    // the same kernel would add a float64 sum of ten elements in another order, and give
    // other bits, depending on the CPU model. Fixing the width keeps one order per kernel.
    c.flags = "-O3 -march=native -mprefer-vector-width=256 -fopenmp -ffp-contract=off -fno-math-errno";
    // No shared fallback (Note [cache trust]): without a home directory there is no disk cache.
    std::string home = env("HOME", home_dir());
    c.cache_dir = env("NPC_CACHE_DIR", home.empty() ? "" : home + "/.cache/npc");
    c.output_code = env("NPC_LOGS").find("output_code") != std::string::npos;
    c.debug = env("NPC_COMPILE_DEBUG") == "1";
    c.debug_dir = env("NPC_DEBUG_DIR", "npc_debug");
    c.lowering_cache = env("NPC_LOWERING_CACHE") != "0";
    if (!env("NPC_COMPILE_TIMEOUT").empty()) c.compile_timeout = std::atof(env("NPC_COMPILE_TIMEOUT").c_str());
    return c;
  }();
  return c;
}

namespace {
std::atomic<void (*)(Config&)> g_refresh{nullptr};
}
void set_config_refresh(void (*refresh)(Config&)) { g_refresh = refresh; }
Config current_config() {
  if (auto f = g_refresh.load()) f(config());
  return config();
}

Stats stats() {
  std::lock_guard<std::mutex> l(g_mu);
  return g_stats;
}
void reset_stats() {
  std::lock_guard<std::mutex> l(g_mu);
  g_stats = Stats{};
}
// Counter updates from other files of the backend.
void bump_stat(int64_t Stats::*field, int64_t by) {
  std::lock_guard<std::mutex> l(g_mu);
  g_stats.*field += by;
}

Module::~Module() = default;  // never dlclose: function pointers may outlive the module object

void* Module::symbol(const std::string& name) const {
  void* p = ::dlsym(handle_, name.c_str());
  if (!p) throw CodegenError("generated symbol " + name + " missing from " + path_);
  return p;
}

// The GNU build-id of the loaded object that contains this function, as hex ("" if the
// linker wrote none): read from the PT_NOTE segments already mapped in memory.
std::string npc_build_id() {
  static const std::string id = [] {
    struct Search {
      uintptr_t addr;
      std::string out;
    } s{reinterpret_cast<uintptr_t>(&npc_build_id), {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
          auto* q = static_cast<Search*>(data);
          bool mine = false;
          for (int i = 0; i < info->dlpi_phnum && !mine; ++i) {
            const auto& ph = info->dlpi_phdr[i];
            const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
            mine = ph.p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph.p_memsz;
          }
          if (!mine) return 0;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const auto& ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_NOTE) continue;
            auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
            const unsigned char* end = p + ph.p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
              auto* nh = reinterpret_cast<const ElfW(Nhdr)*>(p);
              const unsigned char* name = p + sizeof(ElfW(Nhdr));
              const unsigned char* desc = name + ((nh->n_namesz + 3) & ~3u);
              if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                for (unsigned k = 0; k < nh->n_descsz; ++k) {
                  char b[3];
                  std::snprintf(b, sizeof b, "%02x", desc[k]);
                  q->out += b;
                }
                return 1;
              }
              p = desc + ((nh->n_descsz + 3) & ~3u);
            }
          }
          return 1;
        },
        &s);
    return s.out;
  }();
  return id;
}

namespace {
std::string key_of(const std::string& source, const Config& c) {
  std::string id = compiler_identity(c.cxx);
  std::string all = source + "\n--\n" + id + "\n" + c.flags + "\n" + cpu_features() + "\n" NPC_VERSION "\n" +
                    npc_build_id();
  const Hash128 h = hash128(all.data(), all.size());
  return hex(h.lo) + hex(h.hi);
}
}  // namespace

namespace disk {
Dirs resolve_dirs(const std::string& configured) { return fusion::resolve_dirs(configured); }

std::string build_identity() { return std::string(NPC_VERSION "\n") + npc_build_id() + "\n" + cpu_features(); }

int open_entry(const std::string& path, const std::string& key, std::string& bytes, bool& bad) {
  return fusion::open_entry(path, key, bytes, bad);
}

int open_entry_into(const std::string& path, const std::string& key, const std::function<char*(size_t)>& buffer,
                    size_t& size, bool& bad) {
  return fusion::open_entry_into(path, key, buffer, size, bad);
}

bool install_entry(const std::string& dir, const std::string& name, const std::string& payload, const std::string& key,
                   int64_t limit) {
  const std::string tmp = dir + "/tmp-" + name + "-" + unique_suffix();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const std::string t = trailer(payload, key);
  bool ok = write_all(fd, payload.data(), payload.size()) && write_all(fd, t.data(), t.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  trim_cache(dir, limit);
  return true;
}
}  // namespace disk

std::string cache_key(const std::string& source) { return key_of(source, current_config()); }

std::shared_ptr<Module> jit(const std::string& source) {
  auto t0 = std::chrono::steady_clock::now();
  const Config cfg = current_config();
  std::string id = compiler_identity(cfg.cxx);
  if (id.empty()) throw CodegenError("no C++ compiler found (CXX=" + cfg.cxx + "); the fused backend needs one");
  std::string key = key_of(source, cfg);
  {
    std::lock_guard<std::mutex> l(g_mu);
    auto it = loaded().find(key);
    if (it != loaded().end()) { ++g_stats.memory_hits; return it->second; }
  }
  const Dirs dirs = cfg.cache_dir.empty() ? Dirs{} : resolve_dirs(cfg.cache_dir);
  auto finish = [&](void* h, const std::string& path, bool from_disk) {
    auto m = std::shared_ptr<Module>(new Module());
    m->handle_ = h;
    m->path_ = path;
    std::lock_guard<std::mutex> l(g_mu);
    if (from_disk) ++g_stats.disk_hits;
    g_stats.last_load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto [it, inserted] = loaded().emplace(key, m);
    return it->second;
  };
  if (!dirs.lookup.empty()) {
    std::string path = dirs.lookup + "/" + key + ".so";
    bool bad = false;
    if (void* h = load_entry(path, key, bad)) return finish(h, path, true);
    if (bad) bump_stat(&Stats::corrupt_entries, 1);  // replaced by the rename below
  }
  // Compile into unique temporaries, append the trailer, rename into place (Note [disk cache]).
  const std::string dir = dirs.writable ? dirs.lookup : private_dir();
  const std::string path = dir + "/" + key + ".so";
  const std::string tmp = dir + "/tmp-" + key + "-" + unique_suffix();
  const std::string src_path = tmp + ".cpp", so_path = tmp + ".so", log_path = tmp + ".log";
  Temps temps;
  temps.paths = {src_path, so_path, log_path};
  {
    int fd = ::open(src_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw CodegenError("cannot create " + src_path + ": " + std::strerror(errno));
    bool ok = write_all(fd, source.data(), source.size());
    int err = errno;
    ::close(fd);
    if (!ok) throw CodegenError("cannot write " + src_path + ": " + std::strerror(err));
  }
  std::string cmd = cfg.cxx + " " + cfg.flags + " -std=c++17 -shared -fPIC -o " + shell_quote(so_path) + " " +
                    shell_quote(src_path);
  // Kernels that call the vector-math blocks need libmvec (Note [vector math in kernels]);
  // --as-needed keeps it out of the others.
  if (*ops::simd::vector_math_name(OpId::sin) != '\0') cmd += " -Wl,--as-needed -lmvec";
  auto c0 = std::chrono::steady_clock::now();
  int status = run_compiler(cmd, log_path, cfg.compile_timeout);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  {
    std::lock_guard<std::mutex> l(g_mu);
    ++g_stats.compiles;
    g_stats.compile_seconds += secs;
  }
  if (status == -1) {
    bump_stat(&Stats::compile_timeouts, 1);
    char b[32];
    std::snprintf(b, sizeof b, "%g", cfg.compile_timeout);
    throw CompileTimeout(std::string("the C++ compiler did not finish within npc.config.compile_timeout = ") + b +
                         " s and was stopped: " + cmd);
  }
  std::string log;
  {
    int fd = ::open(log_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      read_fd(fd, log, 1 << 20);
      ::close(fd);
    }
  }
  if (status != 0) {
    std::string keep = dir + "/failed-" + key + ".cpp";
    if (std::rename(src_path.c_str(), keep.c_str()) != 0) keep = "(not kept)";
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
    throw CodegenError("C++ compilation failed (" + describe_status(status) + ", source kept at " + keep + "): " +
                       cmd + "\n" + log);
  }
  // The compiler's output: opened once, checked, the trailer appended, renamed into place and
  // loaded from the same open file.
  int fd = ::open(so_path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw CodegenError("the C++ compiler produced no output " + so_path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  std::string so;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !read_fd(fd, so, kMaxEntryBytes))
    throw CodegenError("the C++ compiler produced no usable output " + so_path);
  ::fchmod(fd, 0600);
  std::string t = trailer(so, key);
  std::string installed = path;
  if (!write_all(fd, t.data(), t.size()) || std::rename(so_path.c_str(), path.c_str()) != 0) {
    installed = so_path;  // not installed (a full disk, an unwritable name): load this copy once
  } else {
    trim_cache(dir, cfg.cache_size_limit);
  }
  void* h = dlopen_fd(fd);
  if (!h) {
    const char* err = ::dlerror();
    throw CodegenError(std::string("dlopen failed: ") + (err ? err : std::strerror(errno)));
  }
  return finish(h, installed, false);
}

void forget_kernels();  // backend.cpp (Note [kernels across graphs])

int64_t clear_cache() {
  forget_kernels();
  int64_t n = 0;
  const Config cfg = current_config();
  if (!cfg.cache_dir.empty()) {
    Dirs d = resolve_dirs(cfg.cache_dir);
    if (d.writable) n += remove_files(d.lookup, {"tmp-", "failed-"}, false) + [&] {
      int64_t k = 0;
      if (DIR* dd = ::opendir(d.lookup.c_str())) {
        while (dirent* e = ::readdir(dd)) {
          std::string name = e->d_name;
          if (is_entry_name(name) && ::unlink((d.lookup + "/" + name).c_str()) == 0) ++k;
        }
        ::closedir(dd);
      }
      return k;
    }();
  }
  {
    std::lock_guard<std::mutex> l(g_private_mu);
    if (!g_private_dir.empty() && g_private_owner == ::getpid()) n += remove_files(g_private_dir, {}, false);
  }
  std::lock_guard<std::mutex> l(g_mu);
  loaded().clear();  // modules stay mapped (never dlclose); later jit() calls look up again
  return n;
}

void set_wait_hooks(const WaitHooks& hooks) {
  std::lock_guard<std::mutex> l(g_hooks_mu);
  g_hooks = hooks;
}

}  // namespace npc::fusion
