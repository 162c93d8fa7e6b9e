// The locator: a coordinate stream intersected with a dense level, without scanning the level
// (the C++ twin of sim/prims_locate.py; the semantics are documented there).
//
// `locate crd, ref, parent` emits what `intersect crd, ref, scan(parent)` would with a dense
// scanner: the dense side is simulated from the parent stream (a parent ref opens a full fiber,
// N an empty one, a stop is a bare stop, a fiber's closing stop merges with a following parent
// stop). One firing per crd token; the parent tokens it needs (at most two) are taken in it.
#include <algorithm>
#include <limits>
#include <memory>

#include "registry.hpp"

namespace fastsim {

namespace locate {

class Locate : public Node {
 public:
  /// The dense level located into (prims_locate.py Locate's attributes).
  struct Attrs {
    i64 size;
    static Attrs read(Build& b) { return {b.attr<i64>("size")}; }
  };
  Locate(const Common& c, const Attrs& a) : Node(c), size_(a.size) {}

  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> c(*ins[0]);
    BasicReader<L> r(*ins[1]);
    Channel& p = *ins[2];
    BasicAppender<L> oc(*outs[0]);
    BasicAppender<L> o0(*outs[1]);
    BasicAppender<L> o1(*outs[2]);
    Clock clock(*this);
    for (;;) {
      if (infib_ && base_ >= 0) {
        // inside a dense fiber: a run of coordinates (the hot loop), through cursors where
        // every ring runs consecutively
        size_t k = std::min({c.run(), r.run(), oc.run(), o0.run(), o1.run()});
        Layout l = common_layout(c, r, oc, o0, o1);
        if (k > 1 && l != Layout::MIXED) {
          k = on_layout(l, [&](auto at) {
            auto cs = c.tokens(at), rs = r.tokens(at);
            auto sc = oc.slots(at), s0 = o0.slots(at), s1 = o1.slots(at);
            return in_fiber(clock, cs, rs, sc, s0, s1, k);
          });
          c.popped(k);
          r.popped(k);
          oc.pushed(k);
          o0.pushed(k);
          o1.pushed(k);
          if (k) continue;
        }
      }
      if (c.empty() || r.empty()) break;
      Firing fire(clock);
      fire.after(c).after(r);
      Dense head;
      if (!dense_head(p, fire, head)) break;
      i64 a = c.head().as_int();
      if (head.dense == FIBER && !is_element(a) && !fiber_close(a, p, fire, head)) break;
      Match m = match(a, head, r.head());
      if (m.emit) {   // the emit rule of the joiner (prims_join.cpp)
        if (!oc.room() || !o0.room() || !o1.room()) return true;
        fire.slot(oc).slot(o0).slot(o1);
        fire.emit(oc, Token::of_int(m.a));
        fire.emit(o0, m.x0);
        fire.emit(o1, m.x1);
      }
      fire.pop(c);
      fire.pop(r);
      for (size_t k = 0; k < head.npar; ++k) fire.pop(p);   // 0, 1 or 2 parent tokens
      base_ = head.base;
      infib_ = m.infib;
      has_dstop_ = m.has_dstop;
      dstop_ = m.dstop;
      fire.commit();
      if (m.emit && m.a == D) {
        done = true;
        break;
      }
    }
    return false;
  }

 private:
  // The dense side's head: a fiber (FIBER) or a stop or D, the open fiber's base, and the
  // parent tokens the firing takes (peeked: nothing is taken before the firing is certain).
  struct Dense {
    i64 dense = FIBER;
    i64 base = -1;
    size_t npar = 0;
  };
  // What a firing emits (crd a, ref x0, located ref x1) and the dense side's state after it.
  struct Match {
    bool emit = false, infib = false, has_dstop = false;
    i64 a = 0, dstop = 0;
    Token x0, x1;
  };

  // The dense side's head (Python: _dense_head); false while the parent token it needs has
  // not come. A parent token it looks at delays the firing to its arrival.
  FASTSIM_INLINE bool dense_head(Channel& p, Firing& fire, Dense& h) const {
    h.base = base_;
    if (infib_) return true;
    if (has_dstop_) {
      h.dense = dstop_;
      return true;
    }
    if (p.empty()) return false;
    i64 x = p.head().as_int();
    fire.after(p);
    h.npar = 1;
    if (is_crd(x)) {
      if (size_ && x > Token::INT_MAX_ / size_) error("a position beyond 2**47");
      h.base = x * size_;
    } else if (x == N) {               // a dense scanner gives N then a stop
      h.base = -1;
    } else if (x == D) {
      h.dense = D;
    } else {                           // no fiber before it: a bare S(k+1)
      h.dense = bare_stop_above(x);
    }
    return true;
  }

  // The crd fiber ends (crd head a, a stop or D) inside a dense fiber: the dense fiber's
  // closing stop is next on the dense side, S0 or merged with a following parent stop. False
  // while that parent token has not come.
  FASTSIM_INLINE bool fiber_close(i64 a, Channel& p, Firing& fire, Dense& h) const {
    if (a == D) error("the crd stream ends (D) inside a fiber of the dense level");
    if (p.size() <= h.npar) return false;
    Token y = p.toks[h.npar];
    fire.after_cycle(p.times[h.npar]);
    if (y.is_stop()) {                 // merges with the parent's stop
      h.dense = stop_above(y.as_int());
      ++h.npar;
    } else {
      h.dense = S0;
    }
    return true;
  }

  // The crd head a facing the dense side's head (Python: _match); ref is the ref head.
  FASTSIM_INLINE Match match(i64 a, const Dense& h, Token ref) const {
    Match m;
    m.a = a;
    if (h.dense == FIBER) {
      m.infib = true;
      if (is_crd(a) && h.base >= 0 && a < size_) {
        m.emit = true;
        m.x0 = ref;
        m.x1 = Token::of_int(h.base + a);
      }
    } else if (is_element(a)) {        // a crd element facing a dense stop: dropped
      m.has_dstop = true;
      m.dstop = h.dense;
    } else {
      if (a != h.dense) {
        if (!is_stop(a) || !is_stop(h.dense) || !same_level(a, h.dense))
          mismatch("stop tokens of the joined streams", {Token::of_int(a), Token::of_int(h.dense)});
        m.a = std::min(a, h.dense);    // the emptier: a fiber only if both sides have one
      }
      m.emit = true;
      m.x0 = m.x1 = Token::of_int(m.a);
    }
    return m;
  }

  // Up to k firings that each locate a coordinate inside the open dense fiber (each input
  // holds k tokens, each output has room for k); stops before a coordinate outside it, N, a
  // stop or D. Returns the firings.
  template <class In, class Out>
  FASTSIM_INLINE size_t in_fiber(Clock& clock, In& c, In& r, Out& oc, Out& o0, Out& o1,
                                 size_t k) {
    size_t j = 0;
    for (; j < k; ++j) {
      i64 a = c.head().as_int();
      if (a < 0 || a >= size_) break;
      Firing fire(clock);
      fire.after(c).after(r);
      fire.slot(oc).slot(o0).slot(o1);
      fire.emit(oc, Token::of_int(a));
      fire.emit(o0, r.head());
      fire.emit(o1, Token::of_int(base_ + a));
      fire.pop(c);
      fire.pop(r);
      fire.commit();
    }
    return j;
  }

  static constexpr i64 FIBER = std::numeric_limits<i64>::min();   // the dense side is in a fiber
  i64 size_;
  i64 base_ = -1;           // parent ref * size of the open dense fiber (-1: an N fiber)
  bool infib_ = false;      // a dense fiber is open
  bool has_dstop_ = false;  // the dense side's head is a stop or D waiting to match (dstop_)
  i64 dstop_ = 0;
};

}  // namespace locate

void register_locate(Registry& r) { r.add<locate::Locate>("locate"); }

}  // namespace fastsim
