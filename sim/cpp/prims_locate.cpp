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
  explicit Locate(Build& b)
      : Node(b.name(), b.kind(), b.ii(), b.lat()), size_(b.attr<i64>("size")) {}

  bool run() override {
    Reader c(*ins[0]);
    Reader r(*ins[1]);
    Channel& p = *ins[2];
    Appender oc(*outs[0]);
    Appender o0(*outs[1]);
    Appender o1(*outs[2]);
    Clock clock(*this);
    for (;;) {
      if (infib_ && base_ >= 0) {
        // inside a dense fiber: a run of coordinates (the hot loop), through cursors where
        // every ring runs consecutively
        size_t k = std::min({c.run(), r.run(), oc.run(), o0.run(), o1.run()});
        if (k > 1) {
          Tokens cs = c.tokens(), rs = r.tokens();
          Slots sc = oc.slots(), s0 = o0.slots(), s1 = o1.slots();
          k = in_fiber(clock, cs, rs, sc, s0, s1, k);
          c.popped(k);
          r.popped(k);
          oc.pushed(k);
          o0.pushed(k);
          o1.pushed(k);
          if (k) continue;
        }
      }
      if (c.empty() || r.empty()) break;
      i64 a = c.head().as_int();
      Firing fire(clock);
      fire.after(c).after(r);
      // The dense side's head (peeked: nothing is taken before the firing is certain).
      size_t npar = 0;
      i64 nbase = base_;
      i64 dense;
      if (infib_) {
        dense = FIBER;
      } else if (has_dstop_) {
        dense = dstop_;
      } else {
        if (p.empty()) break;
        i64 x = p.head().as_int();
        fire.after(p);
        npar = 1;
        if (x >= 0) {
          dense = FIBER;
          if (size_ && x > Token::INT_MAX_ / size_) error("a position beyond 2**47");
          nbase = x * size_;
        } else if (x == N) {               // a dense scanner gives N then a stop
          dense = FIBER;
          nbase = -1;
        } else if (x == D) {
          dense = D;
        } else {                           // no fiber before it: a bare S(k+1)
          dense = x - 1 - EB;
        }
      }
      if (dense == FIBER && a < 0 && a != N) {
        // the crd fiber ends: the dense fiber's closing stop is next on the dense side
        if (a == D) error("the crd stream ends (D) inside a fiber of the dense level");
        if (p.size() <= npar) break;
        Token y = p.toks[npar];
        fire.after_cycle(p.times[npar]);
        if (y.is_int() && y.as_int() <= -3) {   // merges with the parent's stop
          dense = -4 - level(y.as_int());
          ++npar;
        } else {
          dense = S0;
        }
      }
      bool emit = false, nfib = false, has_ndstop = false;
      i64 ndstop = 0;
      Token x0, x1;
      if (dense == FIBER) {
        nfib = true;
        if (a >= 0 && nbase >= 0 && a < size_) {
          emit = true;
          x0 = r.head();
          x1 = Token::of_int(nbase + a);
        }
      } else if (a >= 0 || a == N) {       // a crd element facing a dense stop: dropped
        has_ndstop = true;
        ndstop = dense;
      } else {
        if (a != dense) {
          if (a > -3 || dense > -3 || ((a - dense) & MASK))
            mismatch("stop tokens of the joined streams", {Token::of_int(a), Token::of_int(dense)});
          a = a < dense ? a : dense;       // a fiber only if both sides have one
        }
        emit = true;
        x0 = x1 = Token::of_int(a);
      }
      if (emit) {   // the emit rule of the joiner (prims_join.cpp)
        if (!oc.room() || !o0.room() || !o1.room()) return true;
        fire.slot(oc).slot(o0).slot(o1);
        fire.emit(oc, Token::of_int(a));
        fire.emit(o0, x0);
        fire.emit(o1, x1);
      }
      fire.pop(c);
      fire.pop(r);
      for (size_t k = 0; k < npar; ++k) fire.pop(p);   // 0, 1 or 2 parent tokens
      base_ = nbase;
      infib_ = nfib;
      has_dstop_ = has_ndstop;
      dstop_ = ndstop;
      fire.commit();
      if (emit && a == D) {
        done = true;
        break;
      }
    }
    return false;
  }

 private:
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

void register_locate(Registry& r) { r.add("Locate", built<locate::Locate>()); }

}  // namespace fastsim
