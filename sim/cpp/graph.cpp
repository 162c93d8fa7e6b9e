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
  Build b(py::none(), *this);
  size_t k = 0;
  for (py::handle v : toks) ch.push(b.value(v), times.at(k++));
  ch.pushed = pushed;
}

int Graph::add_node(py::handle pynode) {
  std::string cls = py::type::of(pynode).attr("__name__").cast<std::string>();
  const Factory* f = registry().find(cls);
  if (!f) throw Unsupported("primitive " + cls + " is not implemented in the compiled engine");
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

py::tuple Graph::run(i64 max_cycles, py::object progress) {
  std::vector<Node*> nodes;
  for (auto& n : nodes_) nodes.push_back(n.get());
  std::vector<Channel*> chans;
  for (auto& c : channels_) chans.push_back(c.get());
  Engine engine(nodes, writers_, memory_.get(), &blocks_, chans);
  engine.max_cycles = max_cycles;
  if (!progress.is_none())
    engine.progress = [progress](i64 cycle) { progress(cycle); };
  Engine::Status st = engine.run();
  const char* status = st == Engine::Status::Done ? "done"
                       : st == Engine::Status::Deadlock ? "deadlock" : "budget";
  return py::make_tuple(status, engine.cycles, engine.activations,
                        engine.over_budget ? engine.over_budget->index : -1);
}

// ---- Build (registry.hpp) -----------------------------------------------------------------

Memory* Build::memory(const char* attr_name) { return graph_.memory_for(node.attr(attr_name)); }

BlockTable& Build::blocks() { return graph_.blocks(); }

Token Build::value(py::handle v) {
  if (py::isinstance<py::bool_>(v))
    throw Unsupported("a bool token");
  if (py::isinstance<py::int_>(v)) {
    i64 x = v.cast<i64>();
    if (x > Token::INT_MAX_ || x < -Token::INT_MAX_) throw Unsupported("an int beyond 2**47");
    return Token::of_int(x);
  }
  if (py::isinstance<py::float_>(v)) {
    double d = v.cast<double>();
    if (Token::collides(d)) throw Unsupported("a NaN value with a reserved payload");
    return Token::of_float(d);
  }
  return graph_.blocks().pin(v);
}

std::vector<Token> Build::values(py::handle list) {
  std::vector<Token> out;
  for (py::handle v : list) out.push_back(value(v));
  return out;
}

}  // namespace fastsim
