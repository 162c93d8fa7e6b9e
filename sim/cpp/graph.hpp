// One graph to run: nodes, channels, output ports, its memory calendar and block table, built
// from the Python builder's objects by sim/engine_fast.py through the binding (module.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blocks.hpp"
#include "channel.hpp"
#include "engine.hpp"
#include "memory.hpp"
#include "node.hpp"
#include "registry.hpp"

namespace fastsim {

namespace py = pybind11;

class Graph {
 public:
  Graph(py::handle memory);   // the graph's sim.memory.Memory (or None)

  /// A channel (depth < 0: unbounded); returns its index.
  int add_channel(const std::string& name, const std::string& kind, i64 depth);
  /// Preload channel `c` with tokens visible at `times` (a hand-written input stream, as
  /// sim.channel.Channel.feed leaves it: no slot taken) and its token-hop count so far. Only an
  /// unbounded channel holds tokens before the run (Unsupported otherwise).
  void feed(int c, py::handle toks, const std::vector<i64>& times, i64 pushed);
  /// The compiled twin of a Python node (by its class name); returns its index. Throws
  /// Unsupported when no factory knows it.
  int add_node(py::handle pynode);
  /// Wire node `n`: input channel indices, and per output the consumer channel indices.
  void wire(int n, const std::vector<int>& ins, const std::vector<std::vector<int>>& outs);
  void set_writers(const std::vector<int>& writers);
  /// Run; returns (status, cycles, activations, node past the budget or -1). `progress`
  /// (None or a callable(cycle, flops)) is called every `progress_every` activations.
  /// `trace` (None or a callable(list of ints)) receives the activation records in batches
  /// (engine.hpp, Engine::trace).
  py::tuple run(i64 max_cycles, py::object progress, i64 progress_every = 1024,
                py::object trace = py::none());

  Memory* memory_for(py::handle pymem);
  BlockTable& blocks() { return blocks_; }
  Node& node(int i) { return *nodes_.at(size_t(i)); }
  Channel& channel(int i) { return *channels_.at(size_t(i)); }
  size_t n_nodes() const { return nodes_.size(); }
  size_t n_channels() const { return channels_.size(); }

 private:
  py::object pymem_;                       // the Python Memory the graph's nodes share
  std::unique_ptr<Memory> memory_;
  std::map<PyObject*, std::unique_ptr<Memory>> other_memories_;
  BlockTable blocks_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::unique_ptr<FanOut>> fanouts_;
  std::vector<Node*> writers_;
};

}  // namespace fastsim
