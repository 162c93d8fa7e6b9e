#include "graph.hpp"

#include <cmath>

namespace fastsim {

static std::unique_ptr<Memory> memory_of(py::handle pymem) {
  return std::make_unique<Memory>(pymem.attr("bandwidth").cast<double>(),
                                  pymem.attr("window").cast<i64>());
}

Graph::Graph(py::handle memory) : pymem_(py::reinterpret_borrow<py::object>(memory)) {
  if (!memory.is_none()) memory_ = memory_of(memory);
}

Memory* Graph::memory_for(py::handle pymem) {
  if (pymem.is_none()) return nullptr;
  if (pymem.is(pymem_)) return memory_.get();
  auto& m = other_memories_[pymem.ptr()];   // a node's own calendar (e.g. sim.memory.unlimited)
  if (!m) m = memory_of(pymem);
  return m.get();
}

int Graph::add_channel(const std::string& name, const std::string& kind, i64 depth) {
  channels_.push_back(std::make_unique<Channel>(name, kind, depth));
  channels_.back()->index = int(channels_.size() - 1);
  return channels_.back()->index;
}

void Graph::feed(int c, py::handle toks, const std::vector<i64>& times, i64 pushed) {
  Channel& ch = *channels_.at(size_t(c));
  // Python's fed channel keeps its `depth` free slots beside the tokens; a bounded Fifo's
  // entries are either (it has no room for tokens beyond the depth)
  if (ch.bounded && py::len(toks) > 0) throw Unsupported("a preloaded bounded channel");
  Build b(py::none(), *this);
  size_t k = 0;
  for (py::handle v : toks) ch.push(b.value(v), times.at(k++));
  ch.pushed = pushed;
}

int Graph::add_node(py::handle pynode) {
  std::string kind = pynode.attr("kind").cast<std::string>();
  const Factory* f = registry().find(kind);
  if (!f) throw Unsupported("primitive " + kind + " is not implemented in the compiled engine");
  Build b(pynode, *this);
  nodes_.push_back((*f)(b));
  nodes_.back()->index = int(nodes_.size() - 1);
  return nodes_.back()->index;
}

void Graph::wire(int n, const std::vector<int>& ins, const std::vector<std::vector<int>>& outs) {
  Node& node = *nodes_.at(size_t(n));
  for (int i : ins) {
    Channel* c = channels_.at(size_t(i)).get();
    c->dst = &node;
    node.ins.push_back(c);
  }
  for (const auto& cs : outs) {
    std::vector<Channel*> chans;
    for (int i : cs) {
      Channel* c = channels_.at(size_t(i)).get();
      c->src = &node;
      chans.push_back(c);
      node.ochans.push_back(c);
    }
    if (chans.size() == 1) {
      node.outs.push_back(chans[0]);
    } else {   // several consumers (a fan-out), or none (a null port: pushes vanish)
      fanouts_.push_back(std::make_unique<FanOut>(chans));
      node.outs.push_back(fanouts_.back().get());
      node.stages.push_back(fanouts_.back().get());
    }
  }
  node.wired();
}

void Graph::set_writers(const std::vector<int>& writers) {
  writers_.clear();
  for (int i : writers) {
    writers_.push_back(nodes_.at(size_t(i)).get());
    writers_.back()->is_writer = true;
  }
}

py::tuple Graph::run(i64 max_cycles, py::object progress, i64 progress_every,
                     py::object trace) {
  std::vector<Node*> nodes;
  for (auto& n : nodes_) nodes.push_back(n.get());
  std::vector<Channel*> chans;
  for (auto& c : channels_) chans.push_back(c.get());
  Engine engine(nodes, writers_, memory_.get(), &blocks_, chans);
  engine.max_cycles = max_cycles;
  engine.progress_every = progress_every < 1 ? 1 : progress_every;
  if (!progress.is_none())
    engine.progress = [progress](i64 cycle, i64 flops) { progress(cycle, flops); };
  engine.interrupt = [] {   // Ctrl-C (KeyboardInterrupt) stops a long run
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
  if (!trace.is_none())   // trace(list of ints): a batch of activation records (sim/trace.py)
    engine.trace = [trace](std::vector<i64>& buf) { trace(py::cast(buf)); };
  Engine::Status st = engine.run();
  const char* status = st == Engine::Status::Done ? "done"
                       : st == Engine::Status::Deadlock ? "deadlock" : "budget";
  return py::make_tuple(status, engine.cycles, engine.activations,
                        engine.over_budget ? engine.over_budget->index : -1);
}

// ---- Build (registry.hpp) -----------------------------------------------------------------

Memory* Build::memory(const char* attr_name, double bytes_per_firing) {
  Memory* m = graph_.memory_for(node.attr(attr_name));
  if (m) m->user(bytes_per_firing, attr<i64>("ii"));
  return m;
}

BlockTable& Build::blocks() { return graph_.blocks(); }

Token Build::value(py::handle v) {
  PyObject* o = v.ptr();
  if (PyFloat_CheckExact(o)) {
    double d = PyFloat_AS_DOUBLE(o);
    if (Token::collides(d)) throw Unsupported("a NaN value with a reserved payload");
    return Token::of_float(d);
  }
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || x > Token::INT_MAX_ || x < -Token::INT_MAX_)
      throw Unsupported("an int beyond 2**47");
    return Token::of_int(x);
  }
  if (PyFloat_Check(o) || PyLong_Check(o) || PyBool_Check(o))
    throw Unsupported("a value of type " + py::str(py::type::of(v)).cast<std::string>());
  return graph_.blocks().pin(v);
}

// A one-dimensional numpy array of int64 ('i') or float64 ('f') read in place (sim/build.py
// `bulk`): the builder's arrays reach the compiled graph without a Python object per entry.
// Returns false (and reads nothing) for anything else.
// Each entry goes through conv into out.
template <class Out, class F>
static bool read_array(py::handle obj, char kind, Out& out, F&& conv) {
  if (!PyObject_CheckBuffer(obj.ptr())) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    return false;
  }
  std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> release(&view, PyBuffer_Release);
  const char* f = view.format ? view.format : "B";
  if (*f == '@' || *f == '=' || *f == '<') ++f;
  bool ok = view.ndim == 1 && view.itemsize == 8 && f[1] == '\0' &&
            (kind == 'i' ? (*f == 'l' || *f == 'q') : *f == 'd');
  if (!ok) return false;
  size_t n = size_t(view.len / 8);
  out.reserve(n);
  if (kind == 'i') {
    const auto* p = static_cast<const int64_t*>(view.buf);
    for (size_t k = 0; k < n; ++k) out.push_back(conv(i64(p[k])));
  } else {
    const auto* p = static_cast<const double*>(view.buf);
    for (size_t k = 0; k < n; ++k) out.push_back(conv(p[k]));
  }
  return true;
}

std::vector<Token> Build::values(py::handle list) {
  std::vector<Token> out;
  auto as_float = [](double d) {
    if (Token::collides(d)) throw Unsupported("a NaN value with a reserved payload");
    return Token::of_float(d);
  };
  auto as_int = [](i64 x) {
    if (x > Token::INT_MAX_ || x < -Token::INT_MAX_) throw Unsupported("an int beyond 2**47");
    return Token::of_int(x);
  };
  if (read_array(list, 'f', out, as_float) || read_array(list, 'i', out, as_int)) return out;
  py::sequence seq = py::reinterpret_borrow<py::sequence>(list);
  out.reserve(seq.size());
  for (py::handle v : seq) out.push_back(value(v));
  return out;
}

std::vector<i64> Build::ints(const char* attr_name) {
  py::object seq = node.attr(attr_name);
  std::vector<i64> arr;
  if (read_array(seq, 'i', arr, [](i64 x) { return x; })) return arr;
  PyObject* fast = PySequence_Fast(seq.ptr(), "a sequence of ints");
  if (!fast) throw py::error_already_set();
  py::object keep = py::reinterpret_steal<py::object>(fast);
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject** items = PySequence_Fast_ITEMS(fast);
  std::vector<i64> out(static_cast<size_t>(n));
  for (Py_ssize_t k = 0; k < n; ++k) {
    long long x = PyLong_AsLongLong(items[k]);
    if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
    out[size_t(k)] = x;
  }
  return out;
}

}  // namespace fastsim
