// The Python binding: fuseflowc.sim._fast (used by sim/engine_fast.py only).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "graph.hpp"

namespace py = pybind11;
using namespace fastsim;

namespace fastsim {

std::vector<Token>* writer_stream(Node& n);   // prims_write.cpp

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_stream(reg);
    register_join(reg);
    register_locate(reg);
    register_compute(reg);
    register_spacc(reg);
    register_crd(reg);
    register_write(reg);
    return reg;
  }();
  return r;
}

}  // namespace fastsim

static py::list tokens_to_list(Graph& g, const std::vector<Token>& toks) {
  py::list out(toks.size());
  for (size_t k = 0; k < toks.size(); ++k)
    PyList_SET_ITEM(out.ptr(), Py_ssize_t(k), g.blocks().new_reference(toks[k]));
  return out;
}

// A writer's recorded stream as one 8-byte word per token (the encoding above, tokens.hpp),
// moved out of the node into the array (no copy, no Python object per token), and the block
// values it names: a block token's payload becomes its index in that list (sim/recorded.py).
static py::tuple take_stream(Graph& g, std::vector<Token>& got) {
  static_assert(sizeof(Token) == sizeof(u64), "a token is one 64-bit word");
  py::list blocks;
  for (Token& t : got) {
    if (t.is_block()) {
      u64 index = u64(py::len(blocks));
      blocks.append(g.blocks().get(t));
      t = Token::of_block(index);
    }
  }
  auto* owned = new std::vector<Token>(std::move(got));
  got = std::vector<Token>();
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<Token>*>(p); });
  py::array_t<u64> bits({py::ssize_t(owned->size())}, {py::ssize_t(sizeof(u64))},
                        reinterpret_cast<const u64*>(owned->data()), free_it);
  return py::make_tuple(bits, blocks);
}

PYBIND11_MODULE(_fast, m) {
  m.doc() = "The compiled core of the SAMML simulator (sim/cpp; see sim/README.md).";
  py::register_exception<Unsupported>(m, "Unsupported");
  static py::object sim_error = py::reinterpret_borrow<py::object>(
      PyErr_NewException("fuseflowc.sim._fast.SimError", PyExc_RuntimeError, nullptr));
  m.attr("SimError") = sim_error;

  // The token encoding (tokens.hpp) for sim/recorded.py, which decodes take_stream's words.
  m.attr("TOKEN_TAGS") = py::make_tuple(Token::TAG_SHIFT, Token::INT_TAG, Token::BLOCK_TAG);

  m.def("kinds", [] { return registry().kinds(); },
        "The SAMML kind names of the primitives the compiled engine implements, sorted.");

  py::class_<Graph>(m, "Graph")
      .def(py::init<py::handle>(), py::arg("memory"))
      .def("add_channel", &Graph::add_channel)
      .def("feed", &Graph::feed)
      .def("add_node", &Graph::add_node)
      .def("wire", &Graph::wire)
      .def("set_writers", &Graph::set_writers)
      .def("run",
           [](Graph& g, i64 max_cycles, py::object progress, i64 progress_every,
              py::object trace) {
             try {
               return g.run(max_cycles, progress, progress_every, trace);
             } catch (const SimError& e) {
               // SimError(node index, message, what, tokens): sim/engine_fast.py raises the
               // Python node's error(message) or mismatch(what, tokens) from it.
               py::object err = sim_error(e.node, std::string(e.what()), e.what_,
                                          tokens_to_list(g, e.tokens));
               PyErr_SetObject(sim_error.ptr(), err.ptr());
               throw py::error_already_set();
             }
           },
           py::arg("max_cycles"), py::arg("progress"), py::arg("progress_every") = 1024,
           py::arg("trace") = py::none())
      .def("counters",
           [](Graph& g) {
             py::list out;
             for (size_t i = 0; i < g.n_nodes(); ++i) {
               Node& n = g.node(int(i));
               out.append(py::make_tuple(n.t, n.fires, n.stall, n.flops, n.rd_seg, n.rd_crd,
                                         n.rd_vals, n.wr_seg, n.wr_crd, n.wr_vals, n.done));
             }
             return out;
           },
           "Per node: (t, fires, stall, flops, rd_seg, rd_crd, rd_vals, wr_seg, wr_crd, "
           "wr_vals, done).")
      .def("pushed",
           [](Graph& g) {
             std::vector<i64> out;
             for (size_t i = 0; i < g.n_channels(); ++i) out.push_back(g.channel(int(i)).pushed);
             return out;
           })
      .def("take_stream",
           [](Graph& g, int n) {
             std::vector<Token>* s = writer_stream(g.node(n));
             if (!s) throw std::invalid_argument("not a writer");
             return take_stream(g, *s);
           },
           "(bits, blocks): writer node n's recorded stream, moved out of the graph (a second "
           "call gives an empty one): a uint64 array of tokens (the encoding of TOKEN_TAGS) and "
           "the block values its block tokens index.")
      .def("channel_tokens",
           [](Graph& g, int c) {
             Channel& ch = g.channel(c);
             std::vector<Token> toks;
             py::list times;
             ch.q.for_each([&](Token x, i64 at) {
               toks.push_back(x);
               times.append(at);
             });
             return py::make_tuple(tokens_to_list(g, toks), times);
           },
           "A channel's tokens and their arrival cycles (deadlock reports).");

  m.def("segments",
        [](bool reset) {
          Chain::Stats& st = Chain::stats();
          auto out = py::make_tuple(st.live, st.peak);
          if (reset) st.peak = st.live;
          return out;
        },
        py::arg("reset") = false,
        "(live, peak): the 2048-entry segments unbounded channels hold now and at most "
        "(since the last reset=True, which sets peak to live).");
}
