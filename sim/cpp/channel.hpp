// Channels (bounded FIFOs between two nodes) and output ports (the C++ twin of sim/channel.py).
//
// A Port holds three FIFOs: `toks` (tokens in flight), `times` (the cycle each token becomes
// visible to the consumer: push time + producer latency) and `free` (the cycle each free slot
// became free: pop time + 1; a bounded channel starts with `depth` slots free at cycle 0). A
// producer may push only while `free` is non-empty, and fires no earlier than the slot's free
// time: that is back-pressure. An unbounded port keeps no free slots and never waits.
//
// A node's output port is the Channel itself when the stream has one consumer, a FanOut when it
// has several (the node fills one staging port, copied to every consumer FIFO after its
// activation) and a FanOut with no consumers when nobody reads the stream (a NullPort: pushes
// vanish at the flush).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "ring.hpp"
#include "tokens.hpp"

namespace fastsim {

class Node;

/// The arrival (or free) cycles of a FIFO's items: a Ring<i64> in behaviour and interface,
/// stored compactly as 32-bit offsets from a base cycle (12 bytes per token in flight with its
/// 8-byte token, not 16: the BigBird runs hold ~10^8 tokens in unbounded channels). The base is
/// re-chosen whenever the FIFO is empty; an offset that does not fit (a FIFO spanning 2^32
/// cycles, or a time below the base) switches this FIFO to plain 64-bit storage for good.
class TimeRing {
 public:
  size_t size() const { return wide_ ? big_.size() : off_.size(); }
  bool empty() const { return size() == 0; }
  i64 front() const { return wide_ ? big_.front() : base_ + i64(off_.front()); }
  i64 back() const { return wide_ ? big_.back() : base_ + i64(off_.back()); }
  i64 operator[](size_t k) const { return wide_ ? big_[k] : base_ + i64(off_[k]); }
  void push(i64 at) {
    if (!wide_) {
      if (off_.empty()) base_ = at;
      u64 d = u64(at - base_);
      if (at >= base_ && d <= 0xFFFFFFFFu) {
        off_.push(uint32_t(d));
        return;
      }
      widen();
    }
    big_.push(at);
  }
  i64 pop() {
    if (wide_) return big_.pop();
    return base_ + i64(off_.pop());
  }
  void drop(size_t k) {
    if (wide_) big_.drop(k);
    else off_.drop(k);
  }
  void clear() {
    off_.clear();
    big_.clear();
  }

 private:
  [[gnu::noinline]] void widen() {
    while (!off_.empty()) big_.push(base_ + i64(off_.pop()));
    wide_ = true;
  }
  Ring<uint32_t> off_;
  Ring<i64> big_;
  i64 base_ = 0;
  bool wide_ = false;
};

/// The most tokens a fan-out producer emits per activation (sim/channel.py STAGE).
constexpr size_t STAGE = 256;

class Port {
 public:
  Ring<Token> toks;
  TimeRing times;
  Ring<i64> free;
  bool bounded = false;

  virtual ~Port() = default;
  /// True when a token can be pushed now (a free slot, or unbounded).
  bool room() const { return !bounded || !free.empty(); }
  /// Push a token visible at cycle `at` (the slot was taken by the firing: see node.hpp).
  void push(Token x, i64 at) {
    toks.push(x);
    times.push(at);
  }
};

class Channel : public Port {
 public:
  std::string name;
  std::string kind;       // crd, ref, val, repsig (only reports read it)
  i64 depth;              // -1: unbounded
  Node* src = nullptr;    // producer
  Node* dst = nullptr;    // consumer
  i64 pushed = 0;         // tokens moved over this channel (token-hops)
  int index = 0;          // position in the graph's channel list

  Channel(std::string name_, std::string kind_, i64 depth_)
      : name(std::move(name_)), kind(std::move(kind_)), depth(depth_) {
    bounded = depth >= 0;
    for (i64 k = 0; k < depth; ++k) free.push(0);
  }
  size_t size() const { return toks.size(); }
  bool empty() const { return toks.empty(); }
  Token head() const { return toks.front(); }
  i64 head_time() const { return times.front(); }
  /// Pop the head in a firing at cycle f: its slot frees at f + 1.
  Token pop(i64 f) {
    times.pop();
    if (bounded) free.push(f + 1);
    return toks.pop();
  }
};

class FanOut : public Port {
 public:
  std::vector<Channel*> chans;

  explicit FanOut(std::vector<Channel*> cs) : chans(std::move(cs)) {
    bounded = std::any_of(chans.begin(), chans.end(), [](Channel* c) { return c->bounded; });
  }
  /// Before the producer runs: slot j is free when it is free in every consumer FIFO (at most
  /// STAGE slots per activation; unbounded consumers never hold a slot back).
  void prepare() {
    if (!bounded) return;
    free.clear();
    size_t n = STAGE;
    for (Channel* c : chans)
      if (c->bounded) n = std::min(n, c->free.size());
    for (size_t j = 0; j < n; ++j) {
      i64 v = 0;
      bool first = true;
      for (Channel* c : chans) {
        i64 s = c->bounded ? c->free[j] : 0;
        if (first || s > v) v = s;
        first = false;
      }
      free.push(v);
    }
  }
  /// After the producer ran: copy the staged tokens into every consumer FIFO.
  void flush() {
    size_t m = toks.size();
    if (!m) return;
    for (Channel* c : chans) {
      for (size_t k = 0; k < m; ++k) c->push(toks[k], times[k]);
      if (c->bounded) c->free.drop(m);
    }
    toks.clear();
    times.clear();
  }
};

}  // namespace fastsim
