// Coordinate joiners over n >= 2 (crd, ref) inputs: intersect and union (the C++ twin of
// sim/prims_join.py; the semantics are documented there).
//
// Inputs are wired as [crd0, ref0, crd1, ref1, ...], outputs as [crd, ref0, ref1, ...]. A firing
// looks at every input's head pair; it pops the pairs with the smallest coordinate and emits
// when the join condition holds (Python: _Joiner.step and _decide). With N on several inputs,
// two inputs drop one pair per firing (input 0 first), more inputs every N pair in one firing,
// as _decide says. The two-input case is the hot one: run2, with the heads in registers and
// an intersection's runs of skipped coordinates through cursors (the same per-token firings).
#include <algorithm>
#include <memory>
#include <vector>

#include "registry.hpp"

namespace fastsim {

namespace join {

class Joiner : public Node {
 public:
  /// The joined inputs (prims_join.py _Joiner's attributes).
  struct Attrs {
    int n;
    std::vector<int> required;   // union: the inputs that must hold a coordinate
    static Attrs read(Build& b) {
      return {b.attr<int>("n"), b.attr<std::vector<int>>("required")};
    }
  };
  Joiner(const Common& c, const Attrs& a) : Node(c), n_(a.n), union_(c.kind == "union") {
    required_.assign(size_t(n_), false);
    for (int i : a.required) {
      if (i < 0 || i >= n_) throw Unsupported("a union's required input out of range");
      required_[size_t(i)] = true;
    }
  }

  void wired() override {
    if (ins.size() != size_t(2 * n_) || outs.size() != size_t(n_ + 1))
      throw Unsupported("a joiner wired with the wrong number of streams");
  }

  bool run() override {
    if (n_ != 2) return run_n();
    return by_layout(*this, [this](auto at) { return run2<decltype(at)::value>(); });
  }

 private:
  // What one firing of the two-input join does (Python: _Joiner._decide): which inputs it
  // pops and what it emits.
  struct Decision {
    bool pa = false, pb = false, emit = false;
    Token c, x, y;   // the coordinate (or stop) and the two refs emitted
  };

  // The two-input case, on channels of layout L.
  template <Layout L>
  bool run2() {
    BasicReader<L> c0(*ins[0]);
    BasicReader<L> r0(*ins[1]);
    BasicReader<L> c1(*ins[2]);
    BasicReader<L> r1(*ins[3]);
    BasicAppender<L> oc(*outs[0]);
    BasicAppender<L> o0(*outs[1]);
    BasicAppender<L> o1(*outs[2]);
    Clock clock(*this);
    while (!c0.empty() && !r0.empty() && !c1.empty() && !r1.empty()) {
      if constexpr (L != Layout::MIXED) {
        // A run of equal coordinates on both sides (dense against dense, a k-loop's
        // intersection): through cursors where all seven rings run consecutively.
        i64 a = c0.head().as_int();
        if (a >= 0 && a == c1.head().as_int()) {
          size_t k = std::min({c0.run(), r0.run(), c1.run(), r1.run(), oc.run(), o0.run(),
                               o1.run()});
          if (k > 1) {
            At<L> at;
            auto i0 = c0.tokens(at), j0 = r0.tokens(at), i1 = c1.tokens(at),
                 j1 = r1.tokens(at);
            auto sc = oc.slots(at), s0 = o0.slots(at), s1 = o1.slots(at);
            size_t j = match_some(clock, i0, j0, i1, j1, sc, s0, s1, k);
            c0.popped(j);
            r0.popped(j);
            c1.popped(j);
            r1.popped(j);
            oc.pushed(j);
            o0.pushed(j);
            o1.pushed(j);
            continue;
          }
        }
      }
      Firing fire(clock);
      fire.after(c0).after(c1).after(r0).after(r1);
      i64 a = c0.head().as_int();
      i64 b = c1.head().as_int();
      if (skips(a, b)) {
        // An intersection skips, without emitting, every coordinate below the other side's
        // head coordinate and every coordinate facing the other side's stop (the tail of a
        // fiber): the per-token firings of such a run, without looking at the other side again
        // (its heads arrived before the run's first firing).
        // (two calls, not one on a ?: of references: keeps each reader in registers)
        if (b < 0 || (a >= 0 && a < b))
          skip(fire, c0, r0, b, clock);
        else
          skip(fire, c1, r1, a, clock);
        continue;
      }
      Decision d = decide2(a, b, c0.head(), c1.head(), r0.head(), r1.head());
      if (d.emit) {
        if (!oc.room() || !o0.room() || !o1.room()) return true;
        fire.slot(oc).slot(o0).slot(o1);
        fire.emit(oc, d.c);
        fire.emit(o0, d.x);
        fire.emit(o1, d.y);
      }
      if (d.pa) {
        fire.pop(c0);
        fire.pop(r0);
      }
      if (d.pb) {
        fire.pop(c1);
        fire.pop(r1);
      }
      fire.commit();
      if (d.emit && d.c.is(D)) {
        done = true;
        break;
      }
    }
    return false;
  }

  // Whether an intersection facing heads a and b skips input a's or b's head without emitting:
  // different heads, at least one a coordinate, neither N nor D.
  FASTSIM_INLINE bool skips(i64 a, i64 b) const {
    return !union_ && a != b && (is_crd(a) || is_crd(b)) && (is_crd(a) || is_stop(a)) &&
           (is_crd(b) || is_stop(b));
  }

  // The two-input decision for crd heads a and b (tokens ta, tb) and ref heads x, y.
  FASTSIM_INLINE Decision decide2(i64 a, i64 b, Token ta, Token tb, Token x, Token y) const {
    if (a == N) return pop_one(true);
    if (b == N) return pop_one(false);
    if (is_crd(a) && is_crd(b)) {
      if (a == b) return both(Token::of_int(a), x, y);
      return a < b ? only(true, a, x) : only(false, b, y);
    }
    if (is_crd(a)) {
      if (b == D) mismatch("stream ends (D) of the joined streams", {ta, tb});
      return only(true, a, x);
    }
    if (is_crd(b)) {
      if (a == D) mismatch("stream ends (D) of the joined streams", {ta, tb});
      return only(false, b, y);
    }
    Token s = Token::of_int(line_up(a, b, ta, tb));
    return both(s, s, s);
  }
  // Pop one input (a or b) without emitting (an N: an empty fiber).
  static Decision pop_one(bool a) {
    Decision d;
    d.pa = a;
    d.pb = !a;
    return d;
  }
  // Pop both inputs, emitting c with refs x and y.
  static Decision both(Token c, Token x, Token y) {
    Decision d;
    d.pa = d.pb = d.emit = true;
    d.c = c;
    d.x = x;
    d.y = y;
    return d;
  }
  // Pop input a (or b), the one holding the smaller coordinate m: a union emits it (with N for
  // the other input's ref) unless the other input is required.
  Decision only(bool a, i64 m, Token ref) const {
    Decision d = pop_one(a);
    if (union_ && !required_[a ? 1 : 0]) {
      d.emit = true;
      d.c = Token::of_int(m);
      d.x = a ? ref : Token::of_int(N);
      d.y = a ? Token::of_int(N) : ref;
    }
    return d;
  }
  // Stops (or D) on every input must line up; of stops of one level with different emptiness
  // a union keeps the lesser (a fiber if any input has one), an intersection the greater.
  i64 line_up(i64 a, i64 b, Token ta, Token tb) const {
    if (a == b) return a;
    if (!is_stop(a) || !is_stop(b) || !same_level(a, b))
      mismatch("stop tokens of the joined streams", {ta, tb});
    return union_ ? std::max(a, b) : std::min(a, b);
  }

  // Pop the run of coordinates of (crd, ref) below `lim` (any coordinate when lim is a stop),
  // one firing each; `first` is the run's first firing (it waited for every head). Where both
  // rings hold consecutive tokens (Reader::run), the firings read them through Tokens
  // cursors, without the per-token checks of a Reader.
  template <class In>
  FASTSIM_INLINE void skip(Firing& first, In& crd, In& ref, i64 lim, Clock& clock) {
    first.pop(crd);
    first.pop(ref);
    first.commit();
    for (;;) {
      size_t k = std::min(crd.run(), ref.run());
      Layout l = common_layout(crd, ref);
      if (k > 1 && l != Layout::MIXED) {
        size_t j = on_layout(l, [&](auto at) {
          auto c = crd.tokens(at), r = ref.tokens(at);
          return skip_some(c, r, lim, clock, k);
        });
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

  // Up to k firings, each on equal coordinates at both inputs' heads: emit the coordinate
  // with both refs, pop both pairs (run2's firing of decide2's `both`, the same calls in the
  // same order); returns how many it did (at least one: the caller saw the first pair equal).
  template <class In, class Out>
  FASTSIM_INLINE size_t match_some(Clock& clock, In& c0, In& r0, In& c1, In& r1, Out& oc,
                                   Out& o0, Out& o1, size_t k) {
    size_t j = 0;
    for (; j < k; ++j) {
      i64 a = c0.head().as_int();
      if (a < 0 || a != c1.head().as_int()) break;
      Firing fire(clock);
      fire.after(c0).after(c1).after(r0).after(r1);
      fire.slot(oc).slot(o0).slot(o1);
      fire.emit(oc, Token::of_int(a));
      fire.emit(o0, r0.head());
      fire.emit(o1, r1.head());
      fire.pop(c0);
      fire.pop(r0);
      fire.pop(c1);
      fire.pop(r1);
      fire.commit();
    }
    return j;
  }

  // Any number of inputs.
  bool run_n() {
    const size_t n = size_t(n_);
    heads_.resize(n);
    for (;;) {
      Firing fire(*this);
      for (size_t i = 0; i < n; ++i) {
        Channel& c = *ins[2 * i];
        Channel& r = *ins[2 * i + 1];
        if (c.empty() || r.empty()) return false;
        fire.after(c).after(r);
        heads_[i] = c.head().as_int();
      }
      if (any_head(N)) {   // N coordinates: empty fibers; drop their pairs without emitting
        pop_heads(fire, N);
        fire.commit();
        continue;
      }
      i64 m;
      bool data = least_crd(m);
      if (!data) {         // stops or D on every input: one out on every output
        i64 s = line_up_n();
        if (!all_room()) return true;
        fire_stop(fire, s);
        if (s == D) {
          done = true;
          return false;
        }
        continue;
      }
      if (any_head(D)) mismatch_heads("stream ends (D) of the joined streams");
      if (joins_at(m)) {
        if (!all_room()) return true;
        for (Port* p : outs) fire.slot(*p);
        fire.emit(*outs[0], Token::of_int(m));
        for (size_t i = 0; i < n; ++i)
          fire.emit(*outs[i + 1], heads_[i] == m ? ins[2 * i + 1]->head() : Token::of_int(N));
      }
      pop_heads(fire, m);
      fire.commit();
    }
  }

  bool any_head(i64 h) const {
    return std::find(heads_.begin(), heads_.end(), h) != heads_.end();
  }
  // The pairs whose crd head is h.
  void pop_heads(Firing& fire, i64 h) {
    for (size_t i = 0; i < heads_.size(); ++i)
      if (heads_[i] == h) pop_pair(fire, i);
  }
  // The least coordinate among the heads into m; false when every head is a stop or D.
  bool least_crd(i64& m) const {
    bool data = false;
    for (i64 h : heads_)
      if (is_crd(h) && (!data || h < m)) {
        m = h;
        data = true;
      }
    return data;
  }
  // Stops (or D) on every input line up: the stop that goes out (see line_up).
  i64 line_up_n() const {
    i64 s = heads_[0];
    for (i64 h : heads_) {
      if (!same_stop(Token::of_int(h), Token::of_int(heads_[0])))
        mismatch_heads("stop tokens of the joined streams");
      s = union_ ? std::max(s, h) : std::min(s, h);
    }
    return s;
  }
  // Whether the least coordinate m goes out: in every input (intersect), or in every required
  // one (union).
  bool joins_at(i64 m) const {
    for (size_t i = 0; i < heads_.size(); ++i)
      if (heads_[i] != m && (!union_ || required_[i])) return false;
    return true;
  }
  // One firing popping every input and emitting s on every output.
  void fire_stop(Firing& fire, i64 s) {
    for (Port* p : outs) fire.slot(*p);
    for (Channel* c : ins) fire.pop(*c);
    for (Port* p : outs) fire.emit(*p, Token::of_int(s));
    fire.commit();
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
  r.add<join::Joiner>("intersect");
  r.add<join::Joiner>("union");
}

}  // namespace fastsim
