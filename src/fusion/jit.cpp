// JIT: compile one translation unit with the system C++ compiler, cache the shared object
// on disk, load it with dlopen.
//
// Note [disk cache]
// An entry is <cache_dir>/<key>.so, key = hash(source, compiler identity, flags, CPU
// features, npc version, build id of the binary that holds npc). The build id (the linker's
// GNU build-id note) changes with every rebuild of npc, so a kernel compiled against another
// build's calling convention is never loaded, even when its source text is the same. The file is the shared object followed by a 24-byte trailer
// ("NPCSO001", payload size, payload hash), so a truncated or corrupt entry is detected
// before dlopen (the dynamic loader ignores bytes after the ELF image). Writers compile to a
// unique temporary name and rename() it into place, so concurrent processes never see a
// partial file; two writers racing both install a valid entry.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "npc/fusion.hpp"

#ifndef NPC_VERSION
#define NPC_VERSION "0"
#endif

namespace npc::fusion {
namespace {

std::mutex g_mu;
Stats g_stats;

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) { h ^= p[i]; h *= 1099511628211ull; }
  return h;
}
uint64_t mix64(const void* data, size_t n) {
  auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ p[i]) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  return h;
}
std::string hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

std::string env(const char* name, const std::string& def = "") {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : def;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
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

constexpr char kMagic[8] = {'N', 'P', 'C', 'S', 'O', '0', '0', '1'};

bool verify_entry(const std::string& bytes) {
  if (bytes.size() < 24) return false;
  size_t n = bytes.size() - 24;
  if (std::memcmp(bytes.data() + n, kMagic, 8) != 0) return false;
  uint64_t size, h;
  std::memcpy(&size, bytes.data() + n + 8, 8);
  std::memcpy(&h, bytes.data() + n + 16, 8);
  return size == n && h == fnv1a(bytes.data(), n);
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

bool ensure_dir(const std::string& dir) {
  std::string cur;
  size_t s = 0;
  while (s < dir.size()) {
    size_t e = dir.find('/', s + 1);
    if (e == std::string::npos) e = dir.size();
    cur = dir.substr(0, e);
    ::mkdir(cur.c_str(), 0755);
    s = e;
  }
  struct stat st{};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(dir.c_str(), W_OK) == 0;
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

}  // namespace

Config& config() {
  static Config c = [] {
    Config c;
    c.cxx = env("CXX", "c++");
    c.flags = "-O3 -march=native -fopenmp -ffp-contract=off";
    std::string home = env("HOME", "/tmp");
    c.cache_dir = env("NPC_CACHE_DIR", home + "/.cache/npc");
    c.output_code = env("NPC_LOGS").find("output_code") != std::string::npos;
    c.debug = env("NPC_COMPILE_DEBUG") == "1";
    c.debug_dir = env("NPC_DEBUG_DIR", "npc_debug");
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

std::string cache_key(const std::string& source) {
  const Config& c = config();
  std::string id = compiler_identity(c.cxx);
  std::string all = source + "\n--\n" + id + "\n" + c.flags + "\n" + cpu_features() + "\n" NPC_VERSION "\n" +
                    npc_build_id();
  return hex(fnv1a(all.data(), all.size())) + hex(mix64(all.data(), all.size()));
}

std::shared_ptr<Module> jit(const std::string& source) {
  auto t0 = std::chrono::steady_clock::now();
  const Config cfg = current_config();
  std::string id = compiler_identity(cfg.cxx);
  if (id.empty()) throw CodegenError("no C++ compiler found (CXX=" + cfg.cxx + "); the fused backend needs one");
  std::string key = cache_key(source);
  {
    std::lock_guard<std::mutex> l(g_mu);
    auto it = loaded().find(key);
    if (it != loaded().end()) { ++g_stats.memory_hits; return it->second; }
  }
  std::string dir = cfg.cache_dir;
  if (!ensure_dir(dir)) {
    dir = "/tmp/npc-cache-" + std::to_string(::getuid());
    if (!ensure_dir(dir)) throw CodegenError("cannot create a cache directory (" + cfg.cache_dir + ")");
  }
  std::string path = dir + "/" + key + ".so";
  auto finish = [&](void* h, bool from_disk) {
    auto m = std::shared_ptr<Module>(new Module());
    m->handle_ = h;
    m->path_ = path;
    std::lock_guard<std::mutex> l(g_mu);
    if (from_disk) ++g_stats.disk_hits;
    g_stats.last_load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto [it, inserted] = loaded().emplace(key, m);
    return it->second;
  };
  std::string bytes;
  if (read_file(path, bytes)) {
    if (verify_entry(bytes)) {
      if (void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return finish(h, true);
    }
    bump_stat(&Stats::corrupt_entries, 1);
    ::unlink(path.c_str());
  }
  // Compile into a unique temporary, append the trailer, rename into place.
  std::string tmp = dir + "/tmp-" + key + "-" + unique_suffix();
  std::string src_path = tmp + ".cpp", so_path = tmp + ".so", log_path = tmp + ".log";
  {
    std::ofstream f(src_path, std::ios::binary);
    f << source;
    if (!f) throw CodegenError("cannot write " + src_path);
  }
  std::string cmd = cfg.cxx + " " + cfg.flags + " -std=c++17 -shared -fPIC -o " + shell_quote(so_path) + " " +
                    shell_quote(src_path) + " > " + shell_quote(log_path) + " 2>&1";
  auto c0 = std::chrono::steady_clock::now();
  int rc = std::system(cmd.c_str());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  {
    std::lock_guard<std::mutex> l(g_mu);
    ++g_stats.compiles;
    g_stats.compile_seconds += secs;
  }
  std::string log;
  read_file(log_path, log);
  ::unlink(log_path.c_str());
  if (rc != 0) {
    ::unlink(so_path.c_str());
    std::string keep = dir + "/failed-" + key + ".cpp";
    std::rename(src_path.c_str(), keep.c_str());
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
    throw CodegenError("C++ compilation failed (exit " + std::to_string(rc) + ", source kept at " + keep + "): " +
                       cmd + "\n" + log);
  }
  ::unlink(src_path.c_str());
  std::string so;
  if (!read_file(so_path, so)) throw CodegenError("compiler produced no output " + so_path);
  {
    uint64_t size = so.size(), h = fnv1a(so.data(), so.size());
    std::ofstream f(so_path, std::ios::binary | std::ios::app);
    f.write(kMagic, 8);
    f.write(reinterpret_cast<const char*>(&size), 8);
    f.write(reinterpret_cast<const char*>(&h), 8);
    if (!f) throw CodegenError("cannot write " + so_path);
  }
  if (std::rename(so_path.c_str(), path.c_str()) != 0) {
    path = so_path;  // could not install; load the private copy
  }
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) throw CodegenError(std::string("dlopen failed: ") + ::dlerror());
  return finish(h, false);
}

}  // namespace npc::fusion
