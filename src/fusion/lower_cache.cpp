// The lowered-program cache: lowerings of graphs persisted next to the kernel cache.
//
// Note [lowered-program cache]
// Why: the first call of a compiled loop, and a plan loaded from bytes (_plan_load), build a
// Variant for each distinct graph. With every kernel's object code in the disk cache (Note
// [disk cache] in jit.cpp), most of that time went into lower() (grouping, emitting the
// kernel IR, its passes, printing the C++) for graphs an earlier process had lowered already.
// So build_variant (backend.cpp) looks a persisted lowering up first, and on a miss lowers and
// stores the result.
//
// Key: the graph, as the 128-bit hash64 of its exact bytes (ir::serialize: every node and
// interface field, Scalars bit for bit; a graph read back from bytes, as a loaded plan's are,
// brings the hash of the bytes it came from: Note [digest of a graph's bytes] in
// src/tracer/graph_io.cpp), the contiguity of each input, and what else lowering reads: npc's
// version, build id (npc_build_id(): an entry of another build is never used) and the CPU
// features, and NPC_VECTOR_MATH (the vector-math policy is part of the kernel text). The file
// is named by a 128-bit hash of the key ("<32 hex>.low", digest()) and the entry holds the
// key, compared on a hit: entries of other builds, machines, settings or contiguity are never
// used; two graphs whose bytes hash alike (a chance of about 2^-128 a pair: Note [hashing
// bytes] in src/core/hash.hpp) would share an entry. (The key held the whole serialized graph
// until the key of a loaded plan's graphs had to be had without serializing them again: it
// was most of each entry, and hashing and comparing it most of a hit's time.) Graphs that
// cannot be serialized (host calls) are not cached.
//
// Layout (little-endian, byte_io.hpp's Writer): magic "NPCLOW01", format version, the key,
// the graph's node count, the kernel texts (function name "@NAME@"), the buffers (kind,
// index, dtype, shape, contiguity, stride base, scalar slot, node), the launches (kernel
// index or -1, buffers, roots, parameters), buffer_of and input_buffer_of, scalar_buffer,
// num_strides, the grouping passes, and per launch the buffer its root takes over (Note
// [in-place epilogues] in backend.cpp: derived from the kernel IR, which is not stored). Nodes
// are stored as positions in g.nodes(): the key names the exact graph, so position i is the
// same node in the graph being compiled. Then the kernel cache's 32-byte trailer (payload
// size, checksum, hash of the entry's name).
//
// Checks: the entry is opened as the kernel cache's are (Note [cache trust] in jit.cpp:
// O_NOFOLLOW, a regular file owned by this user, not writable by others, size bounded) and
// its trailer verified; then every count is bounded by the bytes left, every kernel index,
// buffer, node position, symbol, dtype and enum is range-checked, library-call launches must
// root a library node with one buffer per operand, every root, output and write-back must
// have a buffer, and the reader must end exactly at the trailer. Any failure counts as a
// refused entry (Stats::corrupt_entries) and the graph is lowered as before (and stored
// again). The kernels' object code still comes through jit(): the texts are compiled as
// before when the kernel cache lacks them. Entries live in the kernel cache's directory and
// are trimmed and cleared with the kernels (Note [cache size]). npc.config.lowering_cache =
// False (or NPC_LOWERING_CACHE=0) turns the cache off; NPC_COMPILE_DEBUG needs the kernel IR,
// so it lowers always.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

#include "core/hash.hpp"
#include "fusion/disk_cache.hpp"
#include "fusion/lower.hpp"
#include "tracer/byte_io.hpp"

namespace npc::fusion {
namespace {

constexpr char kMagic[8] = {'N', 'P', 'C', 'L', 'O', 'W', '0', '1'};
constexpr uint32_t kVersion = 2;  // 2: the key names the graph by a hash of its bytes

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Bad {};  // an entry that fails a check
void check(bool ok) {
  if (!ok) throw Bad{};
}

std::string hex128(uint64_t a, uint64_t b) {
  char t[33];
  std::snprintf(t, sizeof t, "%016llx%016llx", static_cast<unsigned long long>(a), static_cast<unsigned long long>(b));
  return t;
}

}  // namespace

std::string lowering_key(const ir::Graph& g, const std::vector<bool>& contiguous) {
  uint64_t d[2];
  if (!g.serialized_digest(d)) {
    std::string bytes;
    try {
      bytes = ir::serialize(g);
    } catch (const std::exception&) {
      return "";  // host calls: not serializable, not cached
    }
    const Hash128 h = hash128(bytes.data(), bytes.size());
    d[0] = h.lo;
    d[1] = h.hi;
    g.remember_serialized_digest(d);  // the same graph lowered for other contiguity
  }
  std::string key = "npc lowered program\n" + disk::build_identity() + "\nNPC_VECTOR_MATH=" +
                    env_or_empty("NPC_VECTOR_MATH") + "\n";
  for (bool c : contiguous) key += c ? '1' : '0';
  key += '\n' + hex128(d[0], d[1]) + '\n' + std::to_string(g.nodes().size());
  return key;
}

namespace {

// The entry's name: 128 bits of hash of the key.
std::string digest(const std::string& key) {
  const Hash128 h = hash128(key.data(), key.size(), 2);
  return hex128(h.lo, h.hi);
}

std::string encode(const ir::Graph& g, const std::string& key, const Lowered& l, const std::vector<int>& in_place) {
  std::unordered_map<NodeRef, uint32_t> pos;
  pos.reserve(g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) pos.emplace(g.nodes()[i], static_cast<uint32_t>(i));
  auto node = [&](NodeRef n) -> int64_t { return n ? static_cast<int64_t>(pos.at(n)) : -1; };
  ir::io::Writer w("lowered program");
  w.out.append(kMagic, 8);
  w.u32(kVersion);
  w.count(key.size());
  w.out += key;
  w.count(g.nodes().size());
  w.count(l.kernel_text.size());
  for (const std::string& t : l.kernel_text) {
    w.count(t.size());
    w.out += t;
  }
  w.count(l.bufs.size());
  for (const BufInfo& b : l.bufs) {
    w.u8(static_cast<uint8_t>(b.kind));
    w.i32(b.index);
    w.u8(static_cast<uint8_t>(b.dtype));
    w.count(b.shape.size());
    for (const ir::Dim& d : b.shape) w.i64(d.raw());
    w.u8(b.contiguous ? 1 : 0);
    w.i32(b.stride_base);
    w.i32(b.scalar_slot);
    w.i64(node(b.node));
  }
  w.count(l.launches.size());
  for (const Launch& la : l.launches) {
    w.i32(la.fn);
    w.count(la.bufs.size());
    for (int b : la.bufs) w.i32(b);
    w.count(la.roots.size());
    for (NodeRef r : la.roots) w.i64(node(r));
    w.count(la.params.size());
    for (int64_t p : la.params) w.i64(p);
  }
  for (const auto* m : {&l.buffer_of, &l.input_buffer_of}) {
    w.count(m->size());
    for (auto& [n, b] : *m) {
      w.i64(node(n));
      w.i32(b);
    }
  }
  w.i32(l.scalar_buffer);
  w.i32(l.num_strides);
  w.i32(l.passes);
  w.count(in_place.size());
  for (int b : in_place) w.i32(b);
  return w.out;
}

// Reads and checks `bytes` (Note [lowered-program cache]); throws Bad or ValueError.
void decode(const ir::Graph& g, const std::string& key, std::string_view bytes, Lowered& l, std::vector<int>& in_place) {
  ir::io::Reader r(bytes, bytes.size(), "lowered program");
  check(r.bytes(8) == std::string_view(kMagic, 8));
  check(r.u32() == kVersion);
  const uint32_t key_size = r.count(1, "key bytes");
  check(r.bytes(key_size) == key);  // the exact key: Note [lowered-program cache]
  const std::vector<NodeRef>& nodes = g.nodes();
  check(r.u32() == nodes.size());
  auto node = [&](bool nullable) -> NodeRef {
    const int64_t p = r.i64();
    if (p == -1 && nullable) return nullptr;
    check(p >= 0 && static_cast<uint64_t>(p) < nodes.size());
    return nodes[static_cast<size_t>(p)];
  };
  const uint32_t nk = r.count(4, "kernels");
  for (uint32_t i = 0; i < nk; ++i) {
    const uint32_t n = r.count(1, "kernel text");
    l.kernel_text.emplace_back(r.bytes(n));
    check(l.kernel_text.back().find("@NAME@") != std::string::npos);
  }
  const uint32_t nb = r.count(27, "buffers");  // the fixed fields of one buffer
  const int64_t nsym = static_cast<int64_t>(g.symbols().size());
  for (uint32_t i = 0; i < nb; ++i) {
    BufInfo b;
    const uint8_t kind = r.u8();
    check(kind <= BufInfo::Temp);
    b.kind = static_cast<BufInfo::Kind>(kind);
    b.index = r.i32();
    const uint8_t t = r.u8();
    check(t < kNumDTypes);
    b.dtype = static_cast<DType>(t);
    const uint32_t nd = r.count(8, "dims");
    for (uint32_t d = 0; d < nd; ++d) {
      const int64_t raw = r.i64();
      check(raw >= 0 || -1 - raw < nsym);
      b.shape.push_back(raw >= 0 ? ir::Dim::fixed(raw) : ir::Dim::sym(static_cast<int32_t>(-1 - raw)));
    }
    const uint8_t c = r.u8();
    check(c <= 1);
    b.contiguous = c != 0;
    b.stride_base = r.i32();
    b.scalar_slot = r.i32();
    b.node = node(true);
    check(b.kind != BufInfo::Input || (b.index >= 0 && b.index < g.num_inputs()));
    check(b.scalar_slot >= -1 && b.scalar_slot < g.num_scalars());
    check(b.stride_base >= 0);
    l.bufs.push_back(std::move(b));
  }
  auto buffer = [&](int b, bool nullable) {
    check((nullable && b == -1) || (b >= 0 && static_cast<uint32_t>(b) < nb));
    return b;
  };
  const uint32_t nl = r.count(16, "launches");
  for (uint32_t i = 0; i < nl; ++i) {
    Launch la;
    la.fn = r.i32();
    check(la.fn >= -1 && la.fn < static_cast<int>(nk));
    const uint32_t n = r.count(4, "launch buffers");
    for (uint32_t k = 0; k < n; ++k) la.bufs.push_back(buffer(r.i32(), false));
    const uint32_t nr = r.count(8, "roots");
    check(nr >= 1);
    for (uint32_t k = 0; k < nr; ++k) la.roots.push_back(node(false));
    const uint32_t np = r.count(8, "parameters");
    for (uint32_t k = 0; k < np; ++k) la.params.push_back(r.i64());
    // A library call: its node and one buffer for the result and each operand (backend.cpp).
    if (la.fn < 0) check(nr == 1 && is_library_call(la.roots[0]) && n == 1 + la.roots[0]->args.size());
    l.launches.push_back(std::move(la));
  }
  for (auto* m : {&l.buffer_of, &l.input_buffer_of}) {
    const uint32_t n = r.count(12, "buffer map");
    for (uint32_t k = 0; k < n; ++k) {
      NodeRef x = node(false);
      const int b = buffer(r.i32(), false);
      check(m->emplace(x, b).second);
    }
  }
  l.scalar_buffer = buffer(r.i32(), true);
  l.num_strides = r.i32();
  l.passes = r.i32();
  check(l.num_strides >= 0 && l.passes >= 1);
  for (const BufInfo& b : l.bufs)
    check(b.kind != BufInfo::Input || b.contiguous || b.shape.empty() ||
          static_cast<int64_t>(b.stride_base) + static_cast<int64_t>(b.shape.size()) <= l.num_strides);
  const uint32_t ni = r.count(4, "in-place buffers");
  check(ni == nl);
  for (uint32_t i = 0; i < ni; ++i) in_place.push_back(buffer(r.i32(), true));
  check(r.left() == 0);
  // What the run looks up by node: every root's, output's and write-back's buffer.
  for (const Launch& la : l.launches)
    for (NodeRef x : la.roots) check(l.buffer_of.count(x) == 1);
  for (NodeRef o : g.outputs) check(l.buffer_of.count(output_root(o)) == 1);
  for (auto& [i, n] : g.writebacks) check(l.buffer_of.count(n) == 1);
}

}  // namespace

bool load_lowering(const ir::Graph& g, const std::string& key, const Config& cfg, Lowered& low,
                   std::vector<int>& in_place) {
  if (key.empty() || cfg.cache_dir.empty()) return false;
  const disk::Dirs dirs = disk::resolve_dirs(cfg.cache_dir);
  if (dirs.lookup.empty()) return false;
  // Read into storage that is not zeroed first (Note [entries read in place] in jit.cpp).
  std::unique_ptr<char[]> storage;
  size_t size = 0;
  bool bad = false;
  const std::string name = digest(key);
  const int fd = disk::open_entry_into(dirs.lookup + "/" + name + ".low", name, [&](size_t n) {
    storage.reset(new char[std::max<size_t>(n, 1)]);
    return storage.get();
  }, size, bad);
  const std::string_view bytes(storage.get(), fd < 0 ? 0 : size);
  if (fd < 0) {
    if (bad) bump_stat(&Stats::corrupt_entries, 1);
    return false;
  }
  Lowered l;
  std::vector<int> ip;
  bool ok = false;
  try {
    decode(g, key, bytes, l, ip);
    ok = true;
  } catch (...) {
  }
  if (ok) ::futimens(fd, nullptr);  // recently used (Note [cache size]); fails harmlessly read-only
  ::close(fd);
  if (!ok) {
    bump_stat(&Stats::corrupt_entries, 1);
    return false;
  }
  low = std::move(l);
  in_place = std::move(ip);
  bump_stat(&Stats::lowering_cache_hits, 1);
  return true;
}

void store_lowering(const ir::Graph& g, const std::string& key, const Config& cfg, const Lowered& low,
                    const std::vector<int>& in_place) {
  if (key.empty() || cfg.cache_dir.empty()) return;
  const disk::Dirs dirs = disk::resolve_dirs(cfg.cache_dir);
  if (dirs.lookup.empty() || !dirs.writable) return;
  std::string payload;
  try {
    payload = encode(g, key, low, in_place);
  } catch (...) {
    return;  // a node outside the graph (it should not happen): nothing stored
  }
  const std::string name = digest(key);
  if (disk::install_entry(dirs.lookup, name + ".low", payload, name, cfg.cache_size_limit))
    bump_stat(&Stats::lowering_cache_stores, 1);
}

}  // namespace npc::fusion
