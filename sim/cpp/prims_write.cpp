// Level and value writers (the C++ twin of sim/prims_write.py): they record their streams; the
// Python side assembles the tensor after the run (sim/assemble.py).
#include <memory>
#include <vector>

#include "registry.hpp"

namespace fastsim {

namespace write {

/// write_level (a crd stream) or write_vals (a val stream): records every token until D.
/// A spill (sim/prims_write.py Spill) is a writer of any stream that stores every token but D.
class Writer : public Node {
 public:
  /// Where a writer's bytes go (prims_write.py Writer's attributes).
  struct Attrs {
    Memory* mem;
    i64 bpt;
    static Attrs read(Build& b) {
      return {b.memory("mem", double(b.attr<i64>("bpt"))), b.attr<i64>("bpt")};
    }
  };
  Writer(const Common& c, const Attrs& a)
      : Node(c), mem_(a.mem), bpt_(double(a.bpt)), seg_(c.kind == "write_level"),
        all_(c.kind == "spill") {}

  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> in(*ins[0]);
    Clock clock(*this);
    while (!in.empty()) {
      Firing fire(clock);
      fire.after(in);
      Token x = in.head();
      // bytes: a coordinate, a value (float or block) or a level's stop (a spill: every
      // token); D is never charged
      if (mem_ && (all_ ? !x.is(D)
                        : x.is_value() || x.as_int() >= 0 || (is_stop(x.as_int()) && seg_)))
        fire.memory(*mem_, bpt_);
      fire.pop(in);
      fire.commit();
      if (x.is(D)) {
        done = true;
        break;
      }
      got.push_back(x);
    }
    return false;
  }
  void visit_tokens(const TokenVisitor& v) override {
    for (Token x : got) v(x);
  }

  std::vector<Token> got;   // the stream, D excluded

 private:
  Memory* mem_;
  double bpt_;   // bytes stored per data token
  bool seg_;     // a compressed level stores a segment entry per fiber: a stop closes one
  bool all_;     // a spill stores every token but D
};

}  // namespace write

void register_write(Registry& r) {
  r.add<write::Writer>("write_level");
  r.add<write::Writer>("write_vals");
  r.add<write::Writer>("spill");
}

/// The recorded stream of a writer node (module.cpp moves it out after the run).
std::vector<Token>* writer_stream(Node& n) {
  auto* w = dynamic_cast<write::Writer*>(&n);
  return w ? &w->got : nullptr;
}

}  // namespace fastsim
