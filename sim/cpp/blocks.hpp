// Dense b x b block values: Python objects (numpy arrays) held by the engine, named in tokens by
// an index (tokens.hpp). Block arithmetic calls the very functions of sim/ops.py, so block
// results are numpy's, bit for bit; their cost (b^2 or b^3 work per token) dwarfs the call.
//
// Blocks are immutable once made. Pinned blocks (an array's stored values, zero blocks) live for
// the whole run; blocks made during the run are freed by `collect`, a mark-and-sweep the engine
// runs between activations once the table has doubled: every token still in a channel, held by
// a node (Node::visit_tokens) or recorded by a writer is marked, the rest released.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "tokens.hpp"

namespace fastsim {

namespace py = pybind11;

class BlockTable {
 public:
  BlockTable() = default;
  BlockTable(const BlockTable&) = delete;
  BlockTable& operator=(const BlockTable&) = delete;
  ~BlockTable() { release_all(); }

  /// A block that lives for the whole run (array values, zero blocks).
  Token pin(py::handle o) {
    Token t = make(o);
    pinned_ = slots_.size();
    return t;
  }
  /// A block made during the run (takes a new reference to `o`).
  Token make(py::handle o) {
    u64 id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = slots_.size();
      slots_.push_back(nullptr);
      mark_.push_back(0);
    }
    slots_[id] = o.inc_ref().ptr();
    ++live_;
    return Token::of_block(id);
  }
  /// The Python object of a block token (borrowed).
  py::handle get(Token t) const { return py::handle(slots_[t.block_id()]); }
  /// The Python object of any token: int, float or block (a new reference).
  py::object to_python(Token t) const {
    return py::reinterpret_steal<py::object>(new_reference(t));
  }
  /// The same as a raw new reference (building lists fast).
  PyObject* new_reference(Token t) const {
    PyObject* o;
    if (t.is_int()) {
      o = PyLong_FromLongLong(t.as_int());
    } else if (t.is_block()) {
      o = slots_[t.block_id()];
      Py_INCREF(o);
    } else {
      o = PyFloat_FromDouble(t.as_float());
    }
    if (!o) throw py::error_already_set();
    return o;
  }

  /// Whether enough blocks were made since the last collection to sweep again.
  bool due() const { return live_ > next_; }
  /// Mark-and-sweep: `roots(mark)` must call mark(token) for every live token.
  template <class Roots>
  void collect(Roots&& roots) {
    std::fill(mark_.begin(), mark_.end(), 0);
    roots([this](Token t) {
      if (t.is_block()) mark_[t.block_id()] = 1;
    });
    for (size_t id = pinned_; id < slots_.size(); ++id) {
      if (slots_[id] && !mark_[id]) {
        py::handle(slots_[id]).dec_ref();
        slots_[id] = nullptr;
        free_.push_back(id);
        --live_;
      }
    }
    next_ = std::max<size_t>(2 * live_, MIN_COLLECT);
  }
  void release_all() {
    for (PyObject*& p : slots_) {
      if (p) py::handle(p).dec_ref();
      p = nullptr;
    }
    slots_.clear();
    mark_.clear();
    free_.clear();
    live_ = pinned_ = 0;
  }

 private:
  static constexpr size_t MIN_COLLECT = 1 << 16;
  std::vector<PyObject*> slots_;
  std::vector<char> mark_;
  std::vector<u64> free_;
  size_t pinned_ = 0, live_ = 0, next_ = MIN_COLLECT;
};

}  // namespace fastsim
