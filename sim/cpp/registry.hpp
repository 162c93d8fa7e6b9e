// How primitives are made from the Python builder's nodes (sim/build.py makes the Python node;
// the compiled engine makes its twin from the node's attributes).
//
// Each prims_*.cpp defines `void register_<family>(Registry&)`, which maps the Python class name
// of each primitive it implements (Scan, Intersect, ...) to a factory. A factory gets a `Build`:
// the Python node (read its attributes with `b.attr<T>("name")`), the graph's memory calendar
// and block table, and helpers to turn Python values into tokens. It returns the node, or throws
// Unsupported (node.hpp) for a configuration it cannot run.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blocks.hpp"
#include "memory.hpp"
#include "node.hpp"

namespace fastsim {

namespace py = pybind11;

class Graph;

/// What a factory gets to make one node.
class Build {
 public:
  Build(py::handle pynode, Graph& graph) : node(pynode), graph_(graph) {}
  py::handle node;   // the Python node (sim/prims_*.py)

  template <class T>
  T attr(const char* name) const { return node.attr(name).cast<T>(); }
  bool is_none(const char* name) const { return node.attr(name).is_none(); }
  std::string name() const { return attr<std::string>("name"); }
  std::string kind() const { return attr<std::string>("kind"); }
  i64 ii() const { return attr<i64>("ii"); }
  i64 lat() const { return attr<i64>("lat"); }
  /// The memory calendar a Python `sim.memory.Memory` (an attribute of the node) stands for:
  /// the graph's own for the graph's, nullptr for None.
  Memory* memory(const char* attr_name);
  /// A Python value (int, float or numpy block) as a token; blocks are pinned for the run.
  Token value(py::handle v);
  /// A list of Python values as tokens.
  std::vector<Token> values(py::handle list);
  /// A list of Python ints (an attribute of the node), e.g. a level's seg or crd array.
  std::vector<i64> ints(const char* attr_name);
  BlockTable& blocks();

 private:
  Graph& graph_;
};

using Factory = std::function<std::unique_ptr<Node>(Build&)>;

/// Python class name -> factory.
class Registry {
 public:
  void add(const std::string& py_class, Factory f) { factories_[py_class] = std::move(f); }
  const Factory* find(const std::string& py_class) const {
    auto it = factories_.find(py_class);
    return it == factories_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (auto& kv : factories_) out.push_back(kv.first);
    return out;
  }

 private:
  std::map<std::string, Factory> factories_;
};

/// A factory for a node that needs only name, kind, ii and latency: T(name, kind, ii, lat).
template <class T>
Factory plain() {
  return [](Build& b) -> std::unique_ptr<Node> {
    return std::make_unique<T>(b.name(), b.kind(), b.ii(), b.lat());
  };
}

/// A factory for a node that reads its parameters from the Python node: T(Build&).
template <class T>
Factory built() {
  return [](Build& b) -> std::unique_ptr<Node> { return std::make_unique<T>(b); };
}

/// The registry with every family's primitives (module.cpp).
const Registry& registry();

// One per primitive family, in prims_<family>.cpp.
void register_stream(Registry&);
void register_join(Registry&);
void register_locate(Registry&);
void register_compute(Registry&);
void register_spacc(Registry&);
void register_crd(Registry&);
void register_write(Registry&);

}  // namespace fastsim
