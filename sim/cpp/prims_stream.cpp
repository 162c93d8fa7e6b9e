// Primitives that walk tensor storage: root, level scanners, repeat and its signal generator,
// value arrays (the C++ twins of sim/prims_stream.py; the semantics are documented there).
#include <algorithm>
#include <memory>
#include <vector>

#include "registry.hpp"

namespace fastsim {

namespace stream {

/// The root reference of a tensor: emits `0, D`.
class Root : public Node {
 public:
  using Node::Node;
  bool run() override {
    Port& out = *outs[0];
    while (left_ < 2) {
      if (!out.room()) return true;
      Firing fire(*this);
      fire.slot(out);
      fire.emit(out, Token::of_int(left_ == 0 ? 0 : D));
      fire.commit();
      ++left_;
    }
    done = true;
    return false;
  }

 private:
  int left_ = 0;   // tokens emitted so far (0, then D)
};

/// A level scanner: ref in; crd and ref out. For each input ref it emits that fiber's
/// coordinates and positions, then closes the fiber with S0; an input stop Sk becomes S(k+1),
/// merged with the closing stop of the fiber before it (so the S0 is held back until the next
/// input token is known); N gives N then a stop; D passes. Dense levels enumerate 0..size-1
/// with refs `ref * size + crd`; compressed ones read seg and crd through the memory calendar.
/// The other sparse levels (sim/levels.py) come as per-ref fiber bounds `lo`/`hi`, lookup bytes
/// `look` (counted as crd bytes) and optionally the ref of each position `refs`.
class Scan : public Node {
 public:
  /// The level a scanner walks (prims_stream.py Scan's attributes).
  struct Attrs {
    bool dense;
    i64 size, eb;
    std::vector<i64> seg, crd;                      // a compressed level
    bool bounds = false, has_refs = false;          // a fixed, non-unique or singleton level
    std::vector<i64> lo, hi, look, refs;
    Memory* mem = nullptr;
    static Attrs read(Build& b) {
      Attrs a{b.attr<bool>("dense"), b.attr<i64>("size"), b.attr<i64>("eb")};
      if (a.dense) return a;
      a.bounds = !b.is_none("lo");
      if (a.bounds) {
        a.lo = b.ints("lo");
        a.hi = b.ints("hi");
        a.look = b.ints("look");
      } else {
        a.seg = b.ints("seg");
      }
      a.has_refs = !b.is_none("refs");
      if (a.has_refs) a.refs = b.ints("refs");
      a.crd = b.ints("crd");
      // one firing: a fiber's lookup and its first element's coordinate
      i64 look = a.bounds ? (a.look.empty() ? 0 : *std::max_element(a.look.begin(), a.look.end()))
                          : 2 * a.eb;
      a.mem = b.memory("mem", double(look + a.eb));
      return a;
    }
  };
  Scan(const Common& c, Attrs a)
      : Node(c), dense_(a.dense), size_(a.size), eb_(a.eb), seg_(std::move(a.seg)),
        crd_(std::move(a.crd)), bounds_(a.bounds), has_refs_(a.has_refs),
        lo_(std::move(a.lo)), hi_(std::move(a.hi)), look_(std::move(a.look)),
        refs_(std::move(a.refs)), mem_(a.mem) {}

  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> in(*ins[0]);
    BasicAppender<L> oc(*outs[0]);
    BasicAppender<L> orf(*outs[1]);
    Clock clock(*this);
    for (;;) {
      if (pos_ < end_ && !emit_fiber(clock, oc, orf)) return true;
      if (!oc.room() || !orf.room()) return true;
      if (in.empty()) return false;
      // the open fiber is done: the next input token
      Firing fire(clock);
      i64 x = in.head().as_int();
      fire.after(in);
      double nb = 0;                      // bytes this firing reads (0 when dense)
      Token c, r;
      bool popped = true;
      if (pending_ && !is_stop(x)) {
        c = r = Token::of_int(S0);        // close the previous fiber, keep the input
        pending_ = false;
        popped = false;
      } else if (x >= 0) {                // look the fiber up
        nb = lookup(x);
        pending_ = true;
        if (pos_ >= end_) {               // empty fiber: nothing to emit this cycle
          if (nb) fire.memory(*mem_, nb);
          fire.pop(in);
          fire.commit();
          continue;
        }
        nb += element(c, r);              // its first element in the same firing
      } else if (x == N) {
        c = r = Token::of_int(N);
        pending_ = true;
      } else if (x == D) {
        c = r = Token::of_int(D);
        done = true;
      } else if (pending_) {              // Sk -> S(k+1), merged with the held S0
        c = r = Token::of_int(stop_above(x));
        pending_ = false;
      } else {                            // no fiber before it: a bare S(k+1)
        c = r = Token::of_int(bare_stop_above(x));
      }
      fire.slot(oc).slot(orf);
      if (nb) fire.memory(*mem_, nb);
      if (popped) fire.pop(in);
      fire.emit(oc, c);
      fire.emit(orf, r);
      fire.commit();
      if (c.is(D)) return false;
    }
  }

 private:
  // The rest of the open fiber, one element per firing, while both outputs have room (the hot
  // loop); false when it stopped for lack of room. Where both outputs have a run of
  // consecutive free slots (Appender::run), the elements go into them through Slots cursors,
  // without the per-token checks of an Appender: the same firings.
  template <class Out>
  FASTSIM_INLINE bool emit_fiber(Clock& clock, Out& oc, Out& orf) {
    while (pos_ < end_) {
      size_t k = std::min({oc.run(), orf.run(), size_t(end_ - pos_)});
      Layout l = common_layout(oc, orf);
      if (k > 1 && l != Layout::MIXED) {
        on_layout(l, [&](auto at) {
          auto c = oc.slots(at), r = orf.slots(at);
          emit_elements(clock, c, r, k);
        });
        oc.pushed(k);
        orf.pushed(k);
        continue;
      }
      if (!oc.room() || !orf.room()) return false;
      emit_elements(clock, oc, orf, 1);
    }
    return true;
  }
  // The next k elements of the open fiber, one per firing (the outputs have room for them).
  // The level's kind is fixed for the run: the loop is compiled per kind (dense, compressed
  // with or without refs), so its body tests neither per element.
  template <class Out>
  FASTSIM_INLINE void emit_elements(Clock& clock, Out& oc, Out& orf, size_t k) {
    if (dense_) emit_elements_as<true, false>(clock, oc, orf, k);
    else if (has_refs_) emit_elements_as<false, true>(clock, oc, orf, k);
    else emit_elements_as<false, false>(clock, oc, orf, k);
  }
  template <bool Dense, bool Refs, class Out>
  FASTSIM_INLINE void emit_elements_as(Clock& clock, Out& oc, Out& orf, size_t k) {
    i64 pos = pos_, base = base_;
    const i64* crd = crd_.data();
    const i64* refs = refs_.data();
    Memory* mem = mem_;
    const double eb = double(eb_);
    for (const i64 end = pos + i64(k); pos < end; ++pos) {
      Firing fire(clock);
      fire.slot(oc).slot(orf);
      Token c;
      if constexpr (Dense) {
        c = Token::of_int(pos - base);
      } else {
        c = Token::of_int(crd[pos]);
        fire.memory(*mem, eb);
      }
      fire.emit(oc, c);
      fire.emit(orf, Token::of_int(Refs ? refs[size_t(pos)] : pos));
      fire.commit();
    }
    pos_ = pos;
    if (!Dense) rd_crd += eb_ * i64(k);
  }
  // Open the fiber of ref x; returns the seg bytes read.
  double lookup(i64 x) {
    if (dense_) {
      if (size_ && x > Token::INT_MAX_ / size_) error("a position beyond 2**47");
      base_ = x * size_;
      pos_ = base_;
      end_ = base_ + size_;
      return 0;
    }
    if (bounds_) {
      pos_ = lo_.at(size_t(x));
      end_ = hi_.at(size_t(x));
      rd_crd += look_[size_t(x)];
      return double(look_[size_t(x)]);
    }
    pos_ = seg_.at(size_t(x));
    end_ = seg_.at(size_t(x) + 1);
    rd_seg += 2 * eb_;
    return double(2 * eb_);
  }
  // The next element of the open fiber as (crd, ref); returns the crd bytes read.
  double element(Token& c, Token& r) {
    r = Token::of_int(has_refs_ ? refs_[size_t(pos_)] : pos_);
    if (dense_) {
      c = Token::of_int(pos_ - base_);
      ++pos_;
      return 0;
    }
    c = Token::of_int(crd_[size_t(pos_)]);
    ++pos_;
    rd_crd += eb_;
    return double(eb_);
  }

  bool dense_;
  i64 size_, eb_;
  std::vector<i64> seg_, crd_;
  bool bounds_, has_refs_;   // a fixed, non-unique or singleton level
  std::vector<i64> lo_, hi_, look_, refs_;
  Memory* mem_;
  i64 pos_ = 0, end_ = 0, base_ = 0;
  bool pending_ = false;   // a fiber was emitted whose closing stop is not yet out
};

/// Repeat-signal generator: crd in; R per coordinate, S per stop (any level), D.
class RepSig : public Node {
 public:
  using Node::Node;
  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> in(*ins[0]);
    BasicAppender<L> out(*outs[0]);
    Clock clock(*this);
    return cursor_loop<true>(*this, out, [&](auto&& o, size_t k, auto&& x) {
      return signal(clock, x, o, k);
    }, in);
  }

 private:
  // Up to k firings (the input holds k tokens, the output has room for them); returns the
  // firings done (fewer after D).
  template <class In, class Out>
  FASTSIM_INLINE size_t signal(Clock& clock, In& in, Out& out, size_t k) {
    for (size_t j = 0; j < k; ++j) {
      Firing fire(clock);
      fire.after(in).slot(out);
      i64 x = fire.pop(in).as_int();
      i64 y;
      if (is_element(x)) {
        y = R;
      } else if (is_stop(x)) {
        y = S0;
      } else {
        y = D;
        done = true;
      }
      fire.emit(out, Token::of_int(y));
      fire.commit();
      if (y == D) return j + 1;
    }
    return k;
  }
};

/// Repeat a ref (or value) stream along a repeat-signal stream. For the current input element
/// it emits one copy per R; at S it moves on: if the next input token is a stop Sk it emits
/// S(k+1) (merged), else S0. An input stop met with no current element (an empty outer fiber)
/// takes one S and emits S(k+1). D ends both.
class Repeat : public Node {
 public:
  using Node::Node;
  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> a(*ins[0]);
    BasicReader<L> g(*ins[1]);
    BasicAppender<L> out(*outs[0]);
    Clock clock(*this);
    for (;;) {
      if (!out.room()) return true;
      Firing fire(clock);
      Token y;
      if (!has_) {
        if (a.empty()) return false;
        Token x = a.head();
        if (x.is_value() || is_element(x.as_int())) {   // a new element
          // Taking the element costs no cycle of its own: it moves into the held register
          // (its slot frees the next cycle) and the firing that uses it first may be in the
          // same cycle.
          fire.after(a);
          cur_ = fire.pop(a);
          has_ = true;
          ready_ = fire.at();
          continue;
        }
        // a stop or D with no current element: needs the matching signal
        if (g.empty()) return false;
        i64 sig = g.head().as_int();
        fire.after(a).after(g);
        if (x.is(D)) {
          if (sig != D) mismatch("input and repeat signal (end)", {x, g.head()});
          y = Token::of_int(D);
          done = true;
        } else {
          if (sig != S0) mismatch("input stop and repeat signal", {x, g.head()});
          y = Token::of_int(bare_stop_above(x.as_int()));   // bare: no element, no fiber
        }
        fire.slot(out);
        fire.pop(a);
        fire.pop(g);
      } else {
        // a run of R signals (the hot loop): through cursors where the rings run consecutively
        size_t k = std::min(g.run(), out.run());
        Layout l = common_layout(g, out);
        if (k > 1 && l != Layout::MIXED) {
          k = on_layout(l, [&](auto at) {
            auto gs = g.tokens(at);
            auto o = out.slots(at);
            return copies(clock, gs, o, k);
          });
          g.popped(k);
          out.pushed(k);
          if (k) continue;
        }
        if (g.empty()) return false;
        i64 sig = g.head().as_int();
        fire.after_cycle(ready_).after(g);
        if (sig == R) {                             // R: one more copy
          y = cur_;
          fire.slot(out);
          fire.pop(g);
        } else if (sig == S0) {                     // S: close, merging a following input stop
          if (a.empty()) return false;
          Token x = a.head();
          fire.after(a);
          bool merged = x.is_stop();
          y = Token::of_int(merged ? stop_above(x.as_int()) : S0);
          fire.slot(out);
          fire.pop(g);
          if (merged) fire.pop(a);
          has_ = false;
          cur_ = Token();
        } else {
          error("repeat signal ended (D) inside an element");
        }
      }
      fire.emit(out, y);
      fire.commit();
      if (y.is(D)) return false;
    }
  }
  void visit_tokens(const TokenVisitor& v) override {
    if (has_) v(cur_);
  }

 private:
  // Up to k firings that each emit a copy of the held element for an R signal (the signal
  // input holds k tokens, the output has room for k); stops before any other signal.
  // Returns the firings.
  template <class In, class Out>
  FASTSIM_INLINE size_t copies(Clock& clock, In& g, Out& out, size_t k) {
    size_t j = 0;
    for (; j < k && g.head().is(R); ++j) {
      Firing fire(clock);
      fire.after_cycle(ready_).after(g).slot(out);
      fire.pop(g);
      fire.emit(out, cur_);
      fire.commit();
    }
    return j;
  }

  Token cur_;
  bool has_ = false;
  i64 ready_ = 0;   // the cycle the held element was taken: its first use is not earlier
};

/// Value array: ref in, value out; N loads 0 (a zero block); stops and D pass.
class Array : public Node {
 public:
  /// The values an array loads (prims_stream.py Array's attributes).
  struct Attrs {
    std::vector<Token> vals;
    Token zero;
    i64 vbytes;
    Memory* mem;
    static Attrs read(Build& b) {
      return {b.values(b.node.attr("vals")), b.value(b.node.attr("zero")),
              b.attr<i64>("vbytes"), b.memory("mem", double(b.attr<i64>("vbytes")))};
    }
  };
  Array(const Common& c, Attrs a)
      : Node(c), vals_(std::move(a.vals)), zero_(a.zero), vbytes_(a.vbytes), mem_(a.mem) {}

  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> in(*ins[0]);
    BasicAppender<L> out(*outs[0]);
    Clock clock(*this);
    return cursor_loop<true>(*this, out, [&](auto&& o, size_t k, auto&& x) {
      return load(clock, x, o, k);
    }, in);
  }

 private:
  // Up to k firings, one ref in and its value out each (the input holds k tokens, the output
  // has room for them); returns the firings done (fewer after a D).
  template <class In, class Out>
  FASTSIM_INLINE size_t load(Clock& clock, In& in, Out& out, size_t k) {
    const Token* vals = vals_.data();
    const size_t nvals = vals_.size();
    Memory& mem = *mem_;
    const double vbytes = double(vbytes_);
    i64 loads = 0;
    bool more = true;
    size_t j = 0;
    while (more && j < k) {
      Firing fire(clock);
      fire.after(in).slot(out);
      Token x = in.head();
      i64 ref = x.as_int();
      if (ref >= 0) {
        fire.memory(mem, vbytes);
        if (size_t(ref) >= nvals) error("a reference beyond the array's values");
        x = vals[ref];
        ++loads;
      } else if (ref == N) {
        x = zero_;
      } else if (ref == D) {
        done = true;
      }
      fire.pop(in);
      fire.emit(out, x);
      fire.commit();
      ++j;
      more = !x.is(D);
    }
    rd_vals += loads * vbytes_;
    return j;
  }

 private:
  std::vector<Token> vals_;
  Token zero_;
  i64 vbytes_;
  Memory* mem_;
};

/// replay (sim/prims_stream.py Replay): emits a spilled stream's tokens, then D; every token
/// but D moves `bpt` bytes through the memory calendar (value bytes on a val stream, else
/// coordinate bytes).
class Replay : public Node {
 public:
  /// The recorded stream a replay emits (prims_stream.py Replay's attributes).
  struct Attrs {
    std::vector<Token> toks;
    i64 bpt;
    bool val;
    Memory* mem;
    static Attrs read(Build& b) {
      return {b.values(b.node.attr("toks")), b.attr<i64>("bpt"), b.attr<bool>("val"),
              b.memory("mem", double(b.attr<i64>("bpt")))};
    }
  };
  Replay(const Common& c, Attrs a)
      : Node(c), toks_(std::move(a.toks)), bpt_(a.bpt), val_(a.val), mem_(a.mem) {}

  bool run() override {
    Port& out = *outs[0];
    while (pos_ <= toks_.size()) {
      if (!out.room()) return true;
      Firing fire(*this);
      fire.slot(out);
      bool end = pos_ == toks_.size();
      if (!end && mem_) fire.memory(*mem_, double(bpt_));
      fire.emit(out, end ? Token::of_int(D) : toks_[pos_]);
      fire.commit();
      if (!end) (val_ ? rd_vals : rd_crd) += bpt_;
      ++pos_;
    }
    done = true;
    return false;
  }

 private:
  std::vector<Token> toks_;
  i64 bpt_;
  bool val_;
  Memory* mem_;
  size_t pos_ = 0;   // tokens emitted so far
};

}  // namespace stream

void register_stream(Registry& r) {
  r.add<stream::Root>("root");
  r.add<stream::Scan>("scan");
  r.add<stream::RepSig>("repsig");
  r.add<stream::Repeat>("repeat");
  r.add<stream::Array>("array");
  r.add<stream::Replay>("replay");
}

}  // namespace fastsim
