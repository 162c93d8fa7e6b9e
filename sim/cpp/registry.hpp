// How primitives are made from the Python builder's nodes (sim/build.py makes the Python node;
// the compiled engine makes its twin from the node's attributes).
//
// Each prims_*.cpp defines `void register_<family>(Registry&)`, which maps the SAMML kind name
// of each primitive it implements (`scan`, `intersect`, `write_level`, ...: the Python node's
// `kind`, samml/ir.py's names) to its class: `r.add<Scan>("scan")`. A class is made from the
// attributes every node has (`Common`: name, kind, ii, latency) and, when it has parameters,
// from its own typed `Attrs`, a small struct whose `read(Build&)` is the one place that reads
// the Python node's attributes by name: `T(common, T::Attrs::read(b))`, else `T(common)`.
// `Build` gives the Python node, the graph's memory calendar and block table, and helpers to
// turn Python values into tokens. A constructor throws Unsupported (node.hpp) for a
// configuration it cannot run.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
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
  /// What every node is made with (the Python node's name, kind, ii, lat).
  Common common() const {
    return Common{attr<std::string>("name"), attr<std::string>("kind"), attr<i64>("ii"),
                  attr<i64>("lat")};
  }
  /// The memory calendar a Python `sim.memory.Memory` (an attribute of the node) stands for:
  /// the graph's own for the graph's, nullptr for None; the node takes at most
  /// `bytes_per_firing` in one firing (memory.hpp: Memory::user).
  Memory* memory(const char* attr_name, double bytes_per_firing);
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

/// Whether primitive class T has typed attributes of its own (a nested `Attrs`).
template <class T, class = void>
struct has_attrs : std::false_type {};
template <class T>
struct has_attrs<T, std::void_t<typename T::Attrs>> : std::true_type {};

/// Makes a T from a Python node: T(common) or T(common, T::Attrs::read(b)).
template <class T>
Factory factory() {
  return [](Build& b) -> std::unique_ptr<Node> {
    if constexpr (has_attrs<T>::value)
      return std::make_unique<T>(b.common(), T::Attrs::read(b));
    else
      return std::make_unique<T>(b.common());
  };
}

/// SAMML kind name -> factory.
class Registry {
 public:
  template <class T>
  void add(const std::string& kind) { factories_[kind] = factory<T>(); }
  const Factory* find(const std::string& kind) const {
    auto it = factories_.find(kind);
    return it == factories_.end() ? nullptr : &it->second;
  }
  /// The kind names, sorted.
  std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (auto& kv : factories_) out.push_back(kv.first);
    return out;
  }

 private:
  std::map<std::string, Factory> factories_;
};

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
