// The exact binary form of a plan: serialize() and deserialize_plan(), Note [plan serialization].
#include <atomic>
#include <cstring>
#include <exception>
#include <map>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "npc/errors.hpp"
#include "tracer/byte_io.hpp"
#include "tracer/trace.hpp"

namespace npc::tracer {

namespace io = ir::io;

// Note [plan serialization]
// A cut loop's plan (Note [loops] in trace_segments.cpp) is what a new process would need to
// replay the loop without tracing it: its segment graphs, how the steps are wired and their
// runtime scalars. Like graphs (Note [graph serialization] in graph_io.cpp), the bytes are read
// back only by the same build of npc, and everything in them is checked on the way in.
//
// Layout (integers little-endian, fixed width; "count" is a u32):
//   header   "NPCPLAN\0", u32 format version (kPlanVersion), u64 build fingerprint (the graph
//            format's, io::build_fingerprint: the plan embeds graphs, whose meaning it fixes)
//   counts   u32 num_inputs (the plan's), u32 num_floats (the float arguments each step's
//            scalars follow, below)
//   graphs   count, then per distinct step graph, in the order of first use by a step: u64
//            length + the bytes ir::serialize wrote. Steps that share a graph object (the
//            segment cache hands the same one to every structurally equal segment, Note
//            [segment cache] in python/npc/csrc/bind_tracer.cpp) name one entry, so a loop of
//            a thousand equal segments stores its graph once.
//   steps    count, then per step: u32 graph index; count + (u8 kind, i32 index, i32 step) per
//            input source; count + scalar (io::Writer::scalar, every field bit for bit) per
//            runtime scalar of the step's own; count + (i32 step, i32 output) per release
//   trailer  u64 hash64 of every byte before it (the graphs carry their own as well).
// A graph with host calls cannot be stored: serialize() raises graph serialize's ValueError.
//
// What deserialize_plan() checks before anything runs or compiles (each failure a ValueError
// naming the step): the header and checksum; counts against the bytes left; each graph with
// ir::deserialize's checks (a graph's errors say which one); graph indexes in range and in
// first-use order with no graph unused (so that accepted bytes are the ones serialize() would
// write); at least one step; then check() below, which serialize() runs too (a plan it would
// refuse to load is never written):
// - inputs: one source per input of the step's graph; kind 0 names input index <
//   num_inputs (step -1, as traced); kind 1 names an earlier step and an output its graph has,
//   not released by a step before this one, of the dtype and rank of the Input node that reads
//   it (and its static sizes where both are static); the graph's owned inputs (Note [owned
//   inputs] in src/fusion/lower_group.cpp: an executable may take their arrays over) are kind 1
//   sources, never the caller's arrays.
// - scalars: Plan::run passes each step the float arguments followed by the step's scalars, so
//   each step graph's num_scalars() is num_floats + its scalar count, and each Scalar node k >=
//   num_floats has the dtype of scalar k - num_floats (what tracing records: Context::
//   concrete_value). The floats themselves come with each call: their count and values are
//   the caller's (npc.compile passes those its guards matched); too few is check_run_args'
//   ValueError when the step runs, and a Scalar node reads its value cast to its dtype.
// - releases: (step, output) pairs of an earlier step's existing outputs, each released once,
//   and read by no later step (Plan::run drops the array when it releases it).
// The top inputs a call passes are checked against each graph's Input nodes when the steps
// run (check_run_args), as for any graph.
//
// The graphs are read first (on two threads when they are large: Note [graphs read on two
// threads]), then the steps; nothing compiles before all of the above has passed.
// deserialize_plan() compiles each distinct graph once through `compile`, which may hand back a
// structurally equal graph compiled earlier in the process (same_structure compares the whole
// interface, owned inputs included, so the checks above hold for it too).

namespace {
constexpr char kMagic[8] = {'N', 'P', 'C', 'P', 'L', 'A', 'N', '\0'};
constexpr uint32_t kPlanVersion = 2;  // 2: the trailer is hash64, no longer FNV-1a
constexpr size_t kHeaderSize = io::kHeaderSize;
constexpr size_t kTrailerSize = io::kTrailerSize;
// More inputs or float arguments than any call could pass (as graph_io's kMaxInterface).
constexpr uint32_t kMaxInterface = 1u << 20;

[[noreturn]] void corrupt(const std::string& why) { throw ValueError("npc plan bytes: " + why); }

// The number of float arguments before each step's own scalars (Note [plan serialization]);
// -1 when the steps disagree.
int num_floats(const Plan& p) {
  int f = -1;
  for (const Plan::Step& st : p.steps) {
    const int64_t k = static_cast<int64_t>(st.run.graph->num_scalars()) - static_cast<int64_t>(st.scalars.size());
    if (k < 0 || (f >= 0 && k != f)) return -1;
    f = static_cast<int>(k);
  }
  return f;
}

// The checks of Note [plan serialization] on a plan whose step graphs are all set; `fail`
// receives the reason.
template <class Fail>
void check(const Plan& p, int nfloats, const Fail& fail) {
  const size_t nsteps = p.steps.size();
  // released[s][k]: the step that released output k of step s (-1: none yet).
  std::vector<std::vector<int>> released(nsteps);
  for (size_t s = 0; s < nsteps; ++s) {
    const Plan::Step& st = p.steps[s];
    const ir::Graph& g = *st.run.graph;
    const std::string at = "step " + std::to_string(s) + ": ";
    released[s].assign(g.outputs.size(), -1);
    if (st.inputs.size() != static_cast<size_t>(g.num_inputs()))
      fail(at + std::to_string(st.inputs.size()) + " input sources for a graph of " + std::to_string(g.num_inputs()) +
           " inputs");
    std::vector<ir::NodeRef> input_node(st.inputs.size(), nullptr);
    for (ir::NodeRef n : g.nodes())
      if (n->kind == ir::NodeKind::Input) input_node[static_cast<size_t>(n->params[0])] = n;
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      const Plan::Source& src = st.inputs[i];
      const std::string in = at + "input " + std::to_string(i) + ": ";
      if (src.kind == 0) {
        if (src.index < 0 || src.index >= p.num_inputs || src.step != -1) fail(in + "names a missing input of the plan");
        continue;
      }
      if (src.kind != 1) fail(in + "source kind " + std::to_string(src.kind));
      if (src.step < 0 || static_cast<size_t>(src.step) >= s) fail(in + "names a step that is not an earlier one");
      const ir::Graph& from = *p.steps[static_cast<size_t>(src.step)].run.graph;
      if (src.index < 0 || static_cast<size_t>(src.index) >= from.outputs.size())
        fail(in + "names a missing output of step " + std::to_string(src.step));
      if (released[static_cast<size_t>(src.step)][static_cast<size_t>(src.index)] >= 0)
        fail(in + "reads an output released before it");
      if (ir::NodeRef n = input_node[i]) {
        ir::NodeRef o = from.outputs[static_cast<size_t>(src.index)];
        bool ok = o->dtype == n->dtype && o->shape.size() == n->shape.size();
        for (size_t d = 0; ok && d < o->shape.size(); ++d)
          ok = !o->shape[d].is_static() || !n->shape[d].is_static() || o->shape[d] == n->shape[d];
        if (!ok) fail(in + "the output it names is not of the input's dtype and shape");
      }
    }
    for (int k : g.owned_inputs)
      if (st.inputs[static_cast<size_t>(k)].kind != 1) fail(at + "the graph owns an input that is not a step's output");
    if (g.num_scalars() != nfloats + static_cast<int64_t>(st.scalars.size()))
      fail(at + std::to_string(st.scalars.size()) + " scalars after " + std::to_string(nfloats) +
           " floats for a graph of " + std::to_string(g.num_scalars()) + " scalars");
    for (ir::NodeRef n : g.nodes())
      if (n->kind == ir::NodeKind::Scalar && n->params[0] >= nfloats &&
          st.scalars[static_cast<size_t>(n->params[0] - nfloats)].dtype != n->dtype)
        fail(at + "scalar " + std::to_string(n->params[0]) + " is not of its node's dtype");
    for (auto [t, k] : st.release) {
      if (t < 0 || static_cast<size_t>(t) >= s) fail(at + "releases an output of a step that is not an earlier one");
      if (k < 0 || static_cast<size_t>(k) >= released[static_cast<size_t>(t)].size())
        fail(at + "releases a missing output");
      int& r = released[static_cast<size_t>(t)][static_cast<size_t>(k)];
      if (r >= 0) fail(at + "releases an output twice");
      r = static_cast<int>(s);
    }
  }
}

// Note [graphs read on two threads]
// Rebuilding a plan's graphs is most of loading it (seidel_2d at size M: 56 graphs, 40 MB;
// Note [reading a plan's graphs] in graph_io.cpp), and each graph is read from its own bytes
// into a graph of its own: ir::deserialize touches no shared state but the allocator and
// function-local statics. So a plan whose graphs are large enough to pay for a thread reads
// them on the calling thread and one more, each taking the next graph not yet taken. The
// thread that read a graph also computes its structural hash (the segment cache's key, which
// the compile looks up: a walk of every node, cheaper while the nodes are in that thread's
// cache). Nothing else changes: every graph is checked as before, the rest of the load
// (steps, checks, compiles, which may call into Python) runs on the calling thread after both
// are done, and the error reported is that of the first bad graph, as when they were read in
// order.
constexpr size_t kTwoThreadBytes = 1u << 20;

// The graphs of `bytes`, each rebuilt by ir::deserialize, and their structural hashes (set in
// `hashes`); the first error is raised, naming its graph.
std::vector<std::shared_ptr<ir::Graph>> read_graphs(const std::vector<std::string_view>& bytes,
                                                    std::vector<size_t>& hashes) {
  const size_t n = bytes.size();
  std::vector<std::shared_ptr<ir::Graph>> graphs(n);
  hashes.assign(n, 0);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      try {
        graphs[k] = std::make_shared<ir::Graph>(ir::deserialize(bytes[k]));
        hashes[k] = graphs[k]->structural_hash();
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  size_t total = 0;
  for (std::string_view b : bytes) total += b.size();
  std::thread helper;
  if (n >= 2 && total >= kTwoThreadBytes && std::thread::hardware_concurrency() >= 2) {
    try {
      helper = std::thread(work);
    } catch (const std::system_error&) {
      // No thread to be had: the calling thread reads them all.
    }
  }
  work();
  if (helper.joinable()) helper.join();
  for (size_t k = 0; k < n; ++k) {
    if (!errors[k]) continue;
    try {
      std::rethrow_exception(errors[k]);
    } catch (const ValueError& e) {
      corrupt("graph " + std::to_string(k) + ": " + e.what());
    }
  }
  return graphs;
}
}  // namespace

std::string serialize(const Plan& p) {
  if (p.steps.empty()) throw ValueError("plan: a plan without steps cannot be serialized");
  std::unordered_map<const ir::Graph*, uint32_t> index;
  std::vector<const ir::Graph*> graphs;
  for (const Plan::Step& st : p.steps) {
    if (!st.run.graph) throw ValueError("plan: a step without a graph cannot be serialized");
    if (index.emplace(st.run.graph.get(), static_cast<uint32_t>(graphs.size())).second) graphs.push_back(st.run.graph.get());
  }
  const int nfloats = num_floats(p);
  if (nfloats < 0) throw ValueError("plan: the steps disagree on the number of float arguments");
  check(p, nfloats, [](const std::string& why) { throw ValueError("plan: " + why); });

  io::Writer w("plan");
  w.out.append(kMagic, sizeof(kMagic));
  w.u32(kPlanVersion);
  w.u64(io::build_fingerprint());
  w.u32(static_cast<uint32_t>(p.num_inputs));
  w.u32(static_cast<uint32_t>(nfloats));
  w.count(graphs.size());
  for (const ir::Graph* g : graphs) {
    const std::string bytes = ir::serialize(*g);  // ValueError for host calls
    w.u64(bytes.size());
    w.out += bytes;
  }
  w.count(p.steps.size());
  for (const Plan::Step& st : p.steps) {
    w.u32(index.at(st.run.graph.get()));
    w.count(st.inputs.size());
    for (const Plan::Source& src : st.inputs) {
      w.u8(static_cast<uint8_t>(src.kind));
      w.i32(src.index);
      w.i32(src.step);
    }
    w.count(st.scalars.size());
    for (const Scalar& v : st.scalars) w.scalar(v);
    w.count(st.release.size());
    for (auto [t, k] : st.release) {
      w.i32(t);
      w.i32(k);
    }
  }
  w.u64(0);
  io::seal(w.out);  // the trailer
  return std::move(w.out);
}

Plan deserialize_plan(std::string_view bytes, const PlanCompiler& compile) {
  io::Reader r = io::open_body(bytes, kMagic, kPlanVersion, "npc plan bytes", "plan");

  Plan p;
  const uint32_t ninputs = r.u32(), nfloats = r.u32();
  if (ninputs > kMaxInterface || nfloats > kMaxInterface) corrupt("input or float count out of range");
  p.num_inputs = static_cast<int>(ninputs);

  // A graph's bytes are at least a header and a trailer.
  const uint32_t ngraphs = r.count(8 + kHeaderSize + kTrailerSize, "graphs");
  std::vector<std::string_view> graph_bytes;
  graph_bytes.reserve(ngraphs);
  bool truncated = false;  // graph graph_bytes.size() runs past the bytes
  for (uint32_t k = 0; k < ngraphs && !truncated; ++k) {
    const uint64_t n = r.u64();
    if (n > r.left()) truncated = true;
    else graph_bytes.push_back(r.bytes(static_cast<size_t>(n)));
  }
  std::vector<size_t> hashes;
  std::vector<std::shared_ptr<ir::Graph>> graphs = read_graphs(graph_bytes, hashes);
  if (truncated) corrupt("graph " + std::to_string(graph_bytes.size()) + ": truncated");

  // A step is at least a graph index and three counts.
  const uint32_t nsteps = r.count(16, "steps");
  if (nsteps == 0) corrupt("a plan without steps");
  p.steps.resize(nsteps);
  uint32_t used = 0;  // graphs named so far: the next new one must be `used` (first-use order)
  for (uint32_t s = 0; s < nsteps; ++s) {
    Plan::Step& st = p.steps[s];
    const std::string at = "step " + std::to_string(s) + ": ";
    const uint32_t gi = r.u32();
    if (gi > used || gi >= ngraphs) corrupt(at + "graph index " + std::to_string(gi) + " out of range or order");
    if (gi == used) ++used;
    st.run.graph = graphs[gi];
    const uint32_t nin = r.count(9, "input sources");
    st.inputs.reserve(nin);
    for (uint32_t i = 0; i < nin; ++i) {
      const uint8_t kind = r.u8();
      const int32_t index = r.i32(), step = r.i32();
      st.inputs.push_back({static_cast<int>(kind), index, step});
    }
    const uint32_t nsc = r.count(io::Writer::kScalarSize, "scalars");
    st.scalars.reserve(nsc);
    for (uint32_t k = 0; k < nsc; ++k) st.scalars.push_back(r.scalar());
    const uint32_t nrel = r.count(8, "releases");
    st.release.reserve(nrel);
    for (uint32_t k = 0; k < nrel; ++k) {
      const int32_t t = r.i32(), o = r.i32();
      st.release.emplace_back(t, o);
    }
  }
  if (used != ngraphs) corrupt("a graph no step runs");
  if (r.pos() != bytes.size() - kTrailerSize) corrupt("trailing bytes");
  check(p, static_cast<int>(nfloats), [](const std::string& why) { corrupt(why); });

  // Each distinct graph compiled once; steps share the result.
  std::vector<SegmentRun> runs;
  runs.reserve(graphs.size());
  for (size_t k = 0; k < graphs.size(); ++k) {
    const std::shared_ptr<ir::Graph>& g = graphs[k];
    runs.push_back(compile(g, hashes[k]));
    const SegmentRun& run = runs.back();
    // The graph itself needs no comparison (Note [reading a plan's graphs] in graph_io.cpp).
    if (!run.graph || !run.exe ||
        (run.graph != g && (run.graph->num_inputs() != g->num_inputs() ||
                            run.graph->num_scalars() != g->num_scalars() || !run.graph->same_structure(*g))))
      throw ValueError("npc plan: compiling a graph gave no executable of its structure");
  }
  std::unordered_map<const ir::Graph*, const SegmentRun*> by_graph;
  for (size_t k = 0; k < graphs.size(); ++k) by_graph[graphs[k].get()] = &runs[k];
  for (Plan::Step& st : p.steps) st.run = *by_graph.at(st.run.graph.get());
  return p;
}

}  // namespace npc::tracer
