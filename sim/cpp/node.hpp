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
// A primitive's run() reads as its algorithm; the timing is a `Firing`:
//
//     Firing fire(*this);          // f = t + ii
//     fire.after(in);              // wait for the input head it looks at
//     fire.slot(out);              // take an output slot (the wait counts as stall)
//     fire.memory(mem, bytes);     // wait for the bytes in the bandwidth calendar
//     Token x = fire.pop(in);      // pops free their slot at f + 1: after every wait above
//     fire.emit(out, y);           // visible at f + lat
//     fire.commit();               // t = f, one more firing
//
// run() processes as many firings as inputs and output room allow and returns true when it
// stopped for lack of output room (the engine then wakes it when a slot frees).
#pragma once

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

  Node(std::string name_, std::string kind_, i64 ii_, i64 lat_)
      : name(std::move(name_)), kind(std::move(kind_)), t(-ii_), ii(ii_), lat(lat_) {}
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

/// One firing of a node: the cycle it happens at, built up from what it waits for, then the
/// pops and emits at that cycle (see the top of this file for the order).
class Firing {
 public:
  explicit Firing(Node& n) : n_(n), f_(n.t + n.ii) {}
  /// The firing's cycle so far.
  i64 at() const { return f_; }
  /// Wait for the head of input `c` to arrive.
  Firing& after(const Channel& c) {
    if (c.head_time() > f_) f_ = c.head_time();
    return *this;
  }
  /// Wait until cycle `c`.
  Firing& after_cycle(i64 c) {
    if (c > f_) f_ = c;
    return *this;
  }
  /// Take a free slot of output `p` (a bounded port must have one: check Port::room first).
  Firing& slot(Port& p) {
    if (p.bounded) {
      i64 s = p.free.pop();
      if (s > f_) {
        n_.stall += s - f_;
        f_ = s;
      }
    }
    return *this;
  }
  /// Wait for `bytes` of off-chip traffic in the bandwidth calendar.
  Firing& memory(Memory& m, double bytes) {
    f_ = m.take(f_, bytes);
    return *this;
  }
  /// Pop the head of input `c` (its slot frees at f + 1).
  Token pop(Channel& c) { return c.pop(f_); }
  /// Emit `x` on output `p` (visible at f + lat).
  void emit(Port& p, Token x) { p.push(x, f_ + n_.lat); }
  /// The firing happened: the node's clock moves to it.
  void commit() {
    n_.t = f_;
    ++n_.fires;
  }

 private:
  Node& n_;
  i64 f_;
};

}  // namespace fastsim
