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
  explicit Writer(Build& b)
      : Node(b.name(), b.kind(), b.ii(), b.lat()), mem_(b.memory("mem")),
        bpt_(double(b.attr<i64>("bpt"))), seg_(b.kind() == "write_level"),
        all_(b.kind() == "spill") {}

  bool run() override {
    Reader in(*ins[0]);
    Clock clock(*this);
    while (!in.empty()) {
      Firing fire(clock);
      fire.after(in);
      Token x = in.head();
      // bytes: a coordinate, a value (float or block) or a level's stop; D is never charged
      if (mem_ && !x.is(D) &&
          (all_ || x.is_value() || x.as_int() >= 0 || (x.as_int() <= S0 && seg_)))
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
  r.add("Writer", built<write::Writer>());
  r.add("Spill", built<write::Writer>());
}

/// The recorded stream of a writer node (module.cpp reads it back).
const std::vector<Token>* writer_stream(Node& n) {
  auto* w = dynamic_cast<write::Writer*>(&n);
  return w ? &w->got : nullptr;
}

}  // namespace fastsim
