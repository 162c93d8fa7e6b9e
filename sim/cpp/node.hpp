// The base class of simulated primitives and the timing arithmetic they share (the C++ twin of
// sim/node.py).
//
// A node keeps its own clock `t` (the cycle of its last firing). One firing takes at most one
// token from each input it pops and emits at most one token on each output; its cycle is the
// maximum of t + ii, the arrival cycle of every input head it looks at and the free cycle of
// every output slot it fills. Outputs become visible at firing + lat; a popped slot frees at
// firing + 1. The cycles a firing waits for an output slot beyond what its inputs allowed are
// `stall` cycles.
//
// A primitive's run() reads as its algorithm; the timing is a `Firing` (of the node, or of the
// activation's Clock: see below):
//
//     Firing fire(*this);          // f = t + ii
//     fire.after(in);              // wait for the input head it looks at
//     fire.slot(out);              // take an output slot (the wait counts as stall)
//     fire.memory(mem, bytes);     // wait for the bytes in the bandwidth calendar
//     Token x = fire.pop(in);      // pops free their slot at f + 1: after every wait above
//     fire.emit(out, y);           // visible at f + lat
//     fire.commit();               // t = f, one more firing
//
// In a hot loop, read inputs through a Reader and write outputs through an Appender
// (channel.hpp: the FIFO positions stay in registers); Firing takes them like channels/ports.
//
// run() processes as many firings as inputs and output room allow and returns true when it
// stopped for lack of output room (the engine then wakes it when a slot frees).
#pragma once

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "channel.hpp"
#include "memory.hpp"
#include "tokens.hpp"

namespace fastsim {

using TokenVisitor = std::function<void(Token)>;

/// A simulation error of one node (sim/node.py: Node.error and Node.mismatch). The binding
/// turns it into the same UserError text the Python engine raises: `what` empty for error(msg),
/// else mismatch(what, tokens).
struct SimError : std::runtime_error {
  int node;
  std::string what_;
  std::vector<Token> tokens;
  SimError(int node_, std::string msg, std::string what, std::vector<Token> toks)
      : std::runtime_error(std::move(msg)), node(node_), what_(std::move(what)),
        tokens(std::move(toks)) {}
};

/// A primitive the compiled engine cannot run (the builder falls back or refuses).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What every node is made with: its name, kind (the SAMML kind name), ii and latency.
struct Common {
  std::string name, kind;
  i64 ii, lat;
};

class Node {
 public:
  std::string name;
  std::string kind;
  std::vector<Channel*> ins;
  std::vector<Port*> outs;
  std::vector<Channel*> ochans;   // every consumer channel of every output
  std::vector<FanOut*> stages;    // outputs that are fan-outs (or null ports)
  i64 t, ii, lat;
  i64 fires = 0, stall = 0, flops = 0;
  i64 rd_seg = 0, rd_crd = 0, rd_vals = 0, wr_seg = 0, wr_crd = 0, wr_vals = 0;
  bool done = false, queued = false, wants_out = false, is_writer = false;
  int index = 0;

  explicit Node(const Common& c) : name(c.name), kind(c.kind), t(-c.ii), ii(c.ii), lat(c.lat) {}
  virtual ~Node() = default;

  /// Fire as far as inputs and output room allow; true when stopped for lack of output room.
  virtual bool run() = 0;
  /// Visit every token this node keeps across activations (block collection: blocks.hpp).
  virtual void visit_tokens(const TokenVisitor&) {}
  /// Called once after wiring (check the ports, cache references).
  virtual void wired() {}

  /// The cycle this node's last output became visible (its last firing + latency).
  i64 finish() const { return fires ? t + lat : 0; }

  [[noreturn]] void error(const std::string& msg) const { throw SimError(index, msg, "", {}); }
  [[noreturn]] void mismatch(const std::string& what, std::initializer_list<Token> toks) const {
    throw SimError(index, "", what, std::vector<Token>(toks));
  }
};

/// What one step of a primitive did (Python: a step() returning None, WAITING or BLOCKED):
/// fired (and may fire again), lacks an input token, or lacks an output slot.
enum class Step { FIRED, WAITING, BLOCKED };

/// A node's clock for one activation: its t, stall and fires as locals (written back when the
/// activation ends), so the hot loops keep them in registers: the FIFO writes of a firing
/// could otherwise alias the node's fields and force a memory round trip per firing.
///
///     bool run() override {
///       Clock clock(*this);
///       while (...) { Firing fire(clock); ... fire.commit(); }
///     }
///
/// Inside the activation read the clock (clock.t), not the node's t.
class Clock {
 public:
  FASTSIM_INLINE explicit Clock(Node& n) : t(n.t), ii(n.ii), lat(n.lat), n_(n) {}
  FASTSIM_INLINE ~Clock() {
    n_.t = t;
    n_.stall += stall;
    n_.fires += fires;
  }
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  i64 t;
  const i64 ii, lat;
  i64 stall = 0, fires = 0;

 private:
  Node& n_;
};

/// One firing of a node: the cycle it happens at, built up from what it waits for, then the
/// pops and emits at that cycle (see the top of this file for the order). `Firing fire(*this)`
/// works on the node's fields directly; `Firing fire(clock)` on an activation's Clock (faster).
class Firing {
 public:
  FASTSIM_INLINE explicit Firing(Node& n)
      : t_(n.t), stall_(n.stall), fires_(n.fires), lat_(n.lat), f_(n.t + n.ii) {}
  FASTSIM_INLINE explicit Firing(Clock& c)
      : t_(c.t), stall_(c.stall), fires_(c.fires), lat_(c.lat), f_(c.t + c.ii) {}
  /// The firing's cycle so far.
  FASTSIM_INLINE i64 at() const { return f_; }
  /// Wait for the head of input `c` to arrive.
  FASTSIM_INLINE Firing& after(const Channel& c) { return after_cycle(c.head_time()); }
  template <Layout L>
  FASTSIM_INLINE Firing& after(const BasicReader<L>& c) { return after_cycle(c.head_time()); }
  template <Layout L>
  FASTSIM_INLINE Firing& after(const Tokens<L>& c) { return after_cycle(c.head_time()); }
  /// Wait until cycle `c`.
  FASTSIM_INLINE Firing& after_cycle(i64 c) {
    if (c > f_) f_ = c;
    return *this;
  }
  /// Wait for an output slot that became free at cycle `s` (the wait counts as stall).
  FASTSIM_INLINE Firing& slot_free(i64 s) {
    if (s > f_) {
      stall_ += s - f_;
      f_ = s;
    }
    return *this;
  }
  /// Wait for the free slot of output `p` the next emit on `p` fills (a bounded port must have
  /// one: check Port::room first). One emit per output per firing.
  FASTSIM_INLINE Firing& slot(Port& p) { return p.bounded ? slot_free(p.q.free_time(0)) : *this; }
  template <Layout L>
  FASTSIM_INLINE Firing& slot(BasicAppender<L>& p) {
    return p.bounded() ? slot_free(p.free_time()) : *this;
  }
  FASTSIM_INLINE Firing& slot(Slots<Layout::RING>& p) { return slot_free(p.free_time()); }
  FASTSIM_INLINE Firing& slot(Slots<Layout::SEG>&) { return *this; }   // free at cycle 0
  /// Wait for `bytes` of off-chip traffic in the bandwidth calendar.
  FASTSIM_INLINE Firing& memory(Memory& m, double bytes) {
    f_ = m.take(f_, bytes);
    return *this;
  }
  /// Pop the head of input `c` (its slot frees at f + 1).
  FASTSIM_INLINE Token pop(Channel& c) { return c.pop(f_); }
  template <Layout L>
  FASTSIM_INLINE Token pop(BasicReader<L>& c) { return c.pop(f_); }
  template <Layout L>
  FASTSIM_INLINE Token pop(Tokens<L>& c) { return c.pop(f_); }
  /// Emit `x` on output `p` (visible at f + lat).
  FASTSIM_INLINE void emit(Port& p, Token x) { p.push(x, f_ + lat_); }
  template <Layout L>
  FASTSIM_INLINE void emit(BasicAppender<L>& p, Token x) { p.push(x, f_ + lat_); }
  template <Layout L>
  FASTSIM_INLINE void emit(Slots<L>& p, Token x) { p.push(x, f_ + lat_); }
  /// The firing happened: the node's clock moves to it.
  FASTSIM_INLINE void commit() {
    t_ = f_;
    ++fires_;
  }

 private:
  i64& t_;
  i64& stall_;
  i64& fires_;
  i64 lat_;
  i64 f_;
};

/// The layout every input and output FIFO of `node` shares, or MIXED (a null port fits any).
inline Layout node_layout(const Node& node) {
  bool ring = false, seg = false;
  for (const Channel* c : node.ins) (c->q.layout() == Layout::RING ? ring : seg) = true;
  for (const Port* p : node.outs)
    if (!p->q.sink()) (p->q.layout() == Layout::RING ? ring : seg) = true;   // (a sink fits both)
  return ring && seg ? Layout::MIXED : seg ? Layout::SEG : Layout::RING;
}

/// f(At<L>{}) for the layout L of `node`'s channels (node_layout): an activation written once
/// as a template over L (BasicReader<L>, BasicAppender<L>), resolved once per activation, so
/// its per-token reads and writes test no layout (MIXED: they test it).
template <class F>
FASTSIM_INLINE bool by_layout(const Node& node, F&& f) {
  switch (node_layout(node)) {
    case Layout::RING:
      return f(At<Layout::RING>{});
    case Layout::SEG:
      return f(At<Layout::SEG>{});
    default:
      return f(At<Layout::MIXED>{});
  }
}

/// cursor_loop on channels of layout L (MIXED: no cursors).
template <bool StopAtDone, Layout L, class Out, class Firings, class... In>
FASTSIM_INLINE bool cursor_loop_in(Node& node, Out& out, Firings& firings, In&... ins) {
  for (;;) {
    if constexpr (L != Layout::MIXED) {
      size_t k = std::min({out.run(), ins.run()...});
      if (k > 1) {
        size_t j = firings(out.slots(At<L>{}), k, ins.tokens(At<L>{})...);
        (ins.popped(j), ...);
        out.pushed(j);
        if (StopAtDone && node.done) return false;
        continue;
      }
    }
    if ((ins.empty() || ...)) return false;
    if (!out.room()) return true;
    firings(out, size_t(1), ins...);
    if (StopAtDone && node.done) return false;
  }
}

/// The cursor loop of a stream map: one firing per set of input heads, one token out per firing
/// (RepSig, Array, the ALUs). `firings(out, k, in...)` does up to k firings through the given
/// output and inputs and returns how many it did; write it once as a generic lambda, since it is
/// called both ways: through cursors (`Slots<L>`, `Tokens<L>`: a pointer each, no per-token
/// check of wrap, limit or layout) where every input holds a run of consecutive tokens and the
/// output a run of consecutive free slots (more than one), else for one firing through the
/// Appender and Readers (they handle a ring's wrap, a deep ring's next chunk, an unbounded
/// channel's next segment and a fan-out's lazy staging). The same firings either way.
///
/// The channels' layout (rings, or unbounded segments) is resolved once per activation: the
/// loop is compiled for each (cursor_loop_in), and where the channels mix layouts it takes no
/// cursor (one firing at a time, still the same firings).
///
/// Returns false when an input ran out (or, with StopAtDone, once the node is done: a stream
/// that ends at D takes nothing after it), true when stopped for lack of output room.
template <bool StopAtDone, class Out, class Firings, class... In>
FASTSIM_INLINE bool cursor_loop(Node& node, Out& out, Firings&& firings, In&... ins) {
  switch (common_layout(out, ins...)) {
    case Layout::RING:
      return cursor_loop_in<StopAtDone, Layout::RING>(node, out, firings, ins...);
    case Layout::SEG:
      return cursor_loop_in<StopAtDone, Layout::SEG>(node, out, firings, ins...);
    default:
      return cursor_loop_in<StopAtDone, Layout::MIXED>(node, out, firings, ins...);
  }
}

}  // namespace fastsim
