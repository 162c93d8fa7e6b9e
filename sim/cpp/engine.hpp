// The discrete-event engine: one heap of node activations (the C++ twin of sim/engine.py).
//
// The heap holds (cycle, sequence, node); the sequence makes the order of equal cycles, and so
// the whole run, deterministic, and it is numbered exactly as the Python engine numbers it: the
// order of activations decides who gets a memory window first, so it must be the same. A node
// is put on the heap when a token it may use arrives or an output slot it waits for frees; an
// activation runs it as far as it can. The run ends when every writer has seen D; if the heap
// empties first, that is a deadlock (the binding builds the report from the channels).
#pragma once

#include <functional>
#include <vector>

#include "blocks.hpp"
#include "channel.hpp"
#include "memory.hpp"
#include "node.hpp"

namespace fastsim {

class Engine {
 public:
  enum class Status { Done, Deadlock, Budget };

  Engine(std::vector<Node*> nodes, std::vector<Node*> writers, Memory* memory,
         BlockTable* blocks, std::vector<Channel*> channels)
      : nodes_(std::move(nodes)), writers_(std::move(writers)), memory_(memory),
        blocks_(blocks), channels_(std::move(channels)) {}

  i64 max_cycles = -1;                      // -1: no budget
  std::function<void(i64, i64)> progress;   // every progress_every activations: (clock(), flops())
  i64 progress_every = 1024;                // sim/engine.py Engine.PROGRESS_EVERY
  std::function<void()> interrupt;          // also: may throw to stop the run (Ctrl-C)
  /// Tracing (sim/trace.py): when set, every activation appends its record to trace_buf
  /// (node, clock after, firings, stall cycles and bytes it added, then the token count of each
  /// input and output channel), handed to `trace` whenever the buffer fills and at the end.
  /// Unset: one predictable branch per activation, nothing else.
  std::function<void(std::vector<i64>&)> trace;
  std::vector<i64> trace_buf;
  i64 activations = 0;
  i64 cycles = 0;                           // the total (largest finish) when Done
  Node* over_budget = nullptr;              // the node past the budget when Budget

  /// Run to completion (Done), to a deadlock, or past the cycle budget.
  Status run();
  /// A cycle no node can fire before any more (see sim/engine.py earliest_firing).
  i64 earliest_firing() const;
  /// How far the run has got: the latest firing of any node so far (sim/engine.py clock).
  i64 clock() const;
  /// FLOPs done so far (sim/engine.py flops).
  i64 flops() const;

 private:
  void hooks(i64& to_tick);
  void wake_after(Node* node, const std::vector<size_t>& pre_in,
                  const std::vector<size_t>& pre_out);
  void collect_blocks();
  void trace_activation(const Node* node, i64 fires0, i64 stall0, i64 bytes0);

  struct Entry {
    i64 cycle, seq;
    Node* node;
    bool operator>(const Entry& o) const { return cycle != o.cycle ? cycle > o.cycle : seq > o.seq; }
  };
  void push(i64 cycle, Node* n);

  std::vector<Node*> nodes_, writers_;
  Memory* memory_;
  BlockTable* blocks_;
  std::vector<Channel*> channels_;
  std::vector<Entry> heap_;
  i64 seq_ = 0;
};

}  // namespace fastsim
