// Coordinate joiners over n >= 2 (crd, ref) inputs: intersect and union (the C++ twin of
// sim/prims_join.py; the semantics are documented there).
//
// Inputs are wired as [crd0, ref0, crd1, ref1, ...], outputs as [crd, ref0, ref1, ...]. A firing
// looks at every input's head pair; it pops the pairs with the smallest coordinate and emits
// when the join condition holds. Python's two-input path (_run2) and its n-input path (_run_n)
// differ in one detail the timing sees: with N on both inputs, _run2 drops one pair per firing
// (input 0 first) and _run_n every N pair in one firing. Both are kept. Python's bulk skipping
// of unmatched runs equals its per-token path (tests/sim/test_sim_bulk.py): per token here.
#include <algorithm>
#include <memory>
#include <vector>

#include "registry.hpp"

namespace fastsim {

namespace join {

class Joiner : public Node {
 public:
  explicit Joiner(Build& b)
      : Node(b.name(), b.kind(), b.ii(), b.lat()), n_(b.attr<int>("n")),
        union_(b.kind() == "union") {
    required_.assign(size_t(n_), false);
    for (py::handle r : b.node.attr("required")) {
      int i = r.cast<int>();
      if (i < 0 || i >= n_) throw Unsupported("a union's required input out of range");
      required_[size_t(i)] = true;
    }
  }

  void wired() override {
    if (ins.size() != size_t(2 * n_) || outs.size() != size_t(n_ + 1))
      throw Unsupported("a joiner wired with the wrong number of streams");
  }

  bool run() override { return n_ == 2 ? run2() : run_n(); }

 private:
  // The two-input case (Python: _Joiner._run2).
  bool run2() {
    Reader c0(*ins[0]);
    Reader r0(*ins[1]);
    Reader c1(*ins[2]);
    Reader r1(*ins[3]);
    Appender oc(*outs[0]);
    Appender o0(*outs[1]);
    Appender o1(*outs[2]);
    Clock clock(*this);
    const bool keep_a = !required_[1];   // a union may emit a coordinate only input 0 has
    const bool keep_b = !required_[0];
    const Token none = Token::of_int(N);
    while (!c0.empty() && !r0.empty() && !c1.empty() && !r1.empty()) {
      Firing fire(clock);
      fire.after(c0).after(c1).after(r0).after(r1);
      i64 a = c0.head().as_int();
      i64 b = c1.head().as_int();
      if (!union_ && a != b && (a >= 0 || b >= 0) && (a >= 0 || a <= -3) &&
          (b >= 0 || b <= -3)) {
        // An intersection skips, without emitting, every coordinate below the other side's
        // head coordinate and every coordinate facing the other side's stop (the tail of a
        // fiber): the per-token firings of such a run, without looking at the other side again
        // (its heads arrived before the run's first firing). Python's bulk path does the same.
        bool side_a = b < 0 || (a >= 0 && a < b);
        if (side_a)   // (two calls, not one on a ?: of references: keeps each reader in registers)
          skip(fire, c0, r0, b, clock);
        else
          skip(fire, c1, r1, a, clock);
        continue;
      }
      bool pa, pb, emit = false;
      Token c, x, y;
      if (a >= 0 && b >= 0) {
        if (a == b) {
          pa = pb = true;
          emit = true;
          c = Token::of_int(a), x = r0.head(), y = r1.head();
        } else if (a < b) {
          pa = true, pb = false;
          if (union_ && keep_a) emit = true, c = Token::of_int(a), x = r0.head(), y = none;
        } else {
          pa = false, pb = true;
          if (union_ && keep_b) emit = true, c = Token::of_int(b), x = none, y = r1.head();
        }
      } else if (a == N) {
        pa = true, pb = false;
      } else if (b == N) {
        pa = false, pb = true;
      } else if (a >= 0) {
        if (b == D) mismatch("stream ends (D) of the joined streams", {c0.head(), c1.head()});
        pa = true, pb = false;
        if (union_ && keep_a) emit = true, c = Token::of_int(a), x = r0.head(), y = none;
      } else if (b >= 0) {
        if (a == D) mismatch("stream ends (D) of the joined streams", {c0.head(), c1.head()});
        pa = false, pb = true;
        if (union_ && keep_b) emit = true, c = Token::of_int(b), x = none, y = r1.head();
      } else {
        i64 s = a;
        if (a != b) {
          if (a > -3 || b > -3 || ((a - b) & MASK))
            mismatch("stop tokens of the joined streams", {c0.head(), c1.head()});
          // same level, different emptiness: a union has a fiber if any input has one, an
          // intersection only if all have
          s = union_ ? std::max(a, b) : std::min(a, b);
        }
        pa = pb = true;
        emit = true;
        c = x = y = Token::of_int(s);
      }
      if (emit) {
        if (!oc.room() || !o0.room() || !o1.room()) return true;
        fire.slot(oc).slot(o0).slot(o1);
        fire.emit(oc, c);
        fire.emit(o0, x);
        fire.emit(o1, y);
      }
      if (pa) {
        fire.pop(c0);
        fire.pop(r0);
      }
      if (pb) {
        fire.pop(c1);
        fire.pop(r1);
      }
      fire.commit();
      if (emit && c.is(D)) {
        done = true;
        break;
      }
    }
    return false;
  }

  // Pop the run of coordinates of (crd, ref) below `lim` (any coordinate when lim is a stop),
  // one firing each; `first` is the run's first firing (it waited for every head). Where both
  // rings hold consecutive tokens (Reader::run), the firings read them through Tokens
  // cursors, without the per-token checks of a Reader.
  FASTSIM_INLINE void skip(Firing& first, Reader& crd, Reader& ref, i64 lim, Clock& clock) {
    first.pop(crd);
    first.pop(ref);
    first.commit();
    for (;;) {
      size_t k = std::min(crd.run(), ref.run());
      if (k > 1) {
        Tokens c = crd.tokens(), r = ref.tokens();
        size_t j = skip_some(c, r, lim, clock, k);
        crd.popped(j);
        ref.popped(j);
        if (j < k) return;
      } else if (crd.empty() || ref.empty() || !skip_some(crd, ref, lim, clock, 1)) {
        return;
      }
    }
  }
  // Up to k firings of the run (both inputs hold k tokens); returns how many it popped.
  template <class In>
  FASTSIM_INLINE size_t skip_some(In& crd, In& ref, i64 lim, Clock& clock, size_t k) {
    size_t j = 0;
    for (; j < k; ++j) {
      i64 x = crd.head().as_int();
      if (x < 0 || (lim >= 0 && x >= lim)) break;
      Firing fire(clock);
      fire.after(crd).after(ref);
      fire.pop(crd);
      fire.pop(ref);
      fire.commit();
    }
    return j;
  }

  // Any number of inputs (Python: _Joiner._run_n).
  bool run_n() {
    const size_t n = size_t(n_);
    std::vector<i64>& heads = heads_;
    heads.resize(n);
    for (;;) {
      Firing fire(*this);
      for (size_t i = 0; i < n; ++i) {
        Channel& c = *ins[2 * i];
        Channel& r = *ins[2 * i + 1];
        if (c.empty() || r.empty()) return false;
        fire.after(c).after(r);
        heads[i] = c.head().as_int();
      }
      // N coordinates: an empty fiber; drop the pair without emitting.
      bool skip = false;
      for (size_t i = 0; i < n; ++i) skip = skip || heads[i] == N;
      if (skip) {
        for (size_t i = 0; i < n; ++i)
          if (heads[i] == N) pop_pair(fire, i);
        fire.commit();
        continue;
      }
      bool data = false;
      i64 m = 0;
      for (size_t i = 0; i < n; ++i)
        if (heads[i] >= 0) {
          if (!data || heads[i] < m) m = heads[i];
          data = true;
        }
      if (!data) {   // all stops / D
        for (size_t i = 0; i < n; ++i)
          if (!same_stop(Token::of_int(heads[i]), Token::of_int(heads[0])))
            mismatch_heads("stop tokens of the joined streams");
        i64 h0 = heads[0];
        for (size_t i = 1; i < n; ++i) h0 = union_ ? std::max(h0, heads[i]) : std::min(h0, heads[i]);
        if (!all_room()) return true;
        for (Port* p : outs) fire.slot(*p);
        for (Channel* c : ins) fire.pop(*c);
        for (Port* p : outs) fire.emit(*p, Token::of_int(h0));
        fire.commit();
        if (h0 == D) {
          done = true;
          return false;
        }
        continue;
      }
      for (size_t i = 0; i < n; ++i)
        if (heads[i] == D) mismatch_heads("stream ends (D) of the joined streams");
      bool emit = true;
      if (union_) {
        for (size_t i = 0; i < n; ++i)
          if (required_[i] && heads[i] != m) emit = false;
      } else {
        for (size_t i = 0; i < n; ++i)
          if (heads[i] != m) emit = false;
      }
      if (emit) {
        if (!all_room()) return true;
        for (Port* p : outs) fire.slot(*p);
        fire.emit(*outs[0], Token::of_int(m));
        for (size_t i = 0; i < n; ++i)
          fire.emit(*outs[i + 1], heads[i] == m ? ins[2 * i + 1]->head() : Token::of_int(N));
      }
      for (size_t i = 0; i < n; ++i)
        if (heads[i] == m) pop_pair(fire, i);
      fire.commit();
    }
  }

  void pop_pair(Firing& fire, size_t i) {
    fire.pop(*ins[2 * i]);
    fire.pop(*ins[2 * i + 1]);
  }
  bool all_room() const {
    for (Port* p : outs)
      if (!p->room()) return false;
    return true;
  }
  [[noreturn]] void mismatch_heads(const std::string& what) const {
    std::vector<Token> toks;
    for (i64 h : heads_) toks.push_back(Token::of_int(h));
    throw SimError(index, "", what, toks);
  }

  int n_;
  bool union_;
  std::vector<bool> required_;   // union: inputs that must hold the coordinate
  std::vector<i64> heads_;       // run_n's head coordinates (kept to avoid reallocating)
};

}  // namespace join

void register_join(Registry& r) {
  r.add("Intersect", built<join::Joiner>());
  r.add("Union", built<join::Joiner>());
}

}  // namespace fastsim
