// The sparse accumulator of order n >= 2 (SAMML spacc3 is order 3): the C++ twin of
// sim/prims_spacc.py, token for token and cycle for cycle. Ports: crd(n-1), ..., crd0, val in
// and out, outermost level first. The n-1 outer coordinates are held in registers taken without
// a firing of their own; a stop at depth d closes that fiber and its level more, and every
// stream it closes is taken in one firing; a stop reaching the reduced index (level >= n in
// crd0) flushes the points sorted.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "registry.hpp"

namespace fastsim {

namespace spacc {

/// The accumulated points: a tree of n levels (outer coordinates -> ... -> crd0 -> value).
struct Tree {
  std::map<i64, Tree> kids;
  std::map<i64, Token> vals;   // at the innermost level only
  bool empty() const { return kids.empty() && vals.empty(); }
  void clear() {
    kids.clear();
    vals.clear();
  }
};

class SpaccN : public compute::Queued {
 public:
  /// The order n and what it folds with.
  struct Attrs {
    i64 n;
    compute::FoldAttrs fold;
    bool emit_empty;   // every outer coordinate received is emitted
    static Attrs read(Build& b) {
      return {b.attr<i64>("n"), compute::FoldAttrs::read(b), b.attr<bool>("emit_empty")};
    }
  };
  SpaccN(const Common& c, const Attrs& a)
      : compute::Queued(c), n_(a.n), fn_(a.fold.fn), pre_(a.fold.pre), fl_(a.fold.fl),
        emit_empty_(a.emit_empty) {
    queues(size_t(n_ + 1));
  }

  bool run() override {
    const size_t n = size_t(n_);
    Channel& cin = *ins[n - 1];
    Channel& vin = *ins[n];
    for (;;) {
      if (drain()) return true;
      if (done || cin.empty() || vin.empty()) return false;
      i64 f = std::max(t + ii, ready_);
      f = std::max(f, cin.head_time());
      f = std::max(f, vin.head_time());
      size_t d = cur_.size();
      if (d < n - 1) {
        Channel& src = *ins[d];
        if (src.empty()) return false;
        f = std::max(f, src.head_time());
        i64 c = src.head().as_int();
        if (is_element(c)) {            // the next outer coordinate: into its register
          src.pop(f);
          cur_.push_back(c);
          ready_ = f;
          if (emit_empty_ && !held_n()) {   // emitted even if nothing is accumulated
            Tree* node = &acc_;
            for (i64 x : cur_) node = &node->kids[x];
          }
          continue;
        }
        if (!stop_at(d, src.head())) return false;
        continue;
      }
      Token ct = cin.head(), v = vin.head();
      i64 c = ct.as_int();
      if (c >= 0) {
        if (v.is_value() && !held_n()) add(c, v);
        fire_pops(f, {&cin, &vin});
        continue;
      }
      if (c == N) {
        fire_pops(f, {&cin, &vin});
        continue;
      }
      if (!same_stop(ct, v) || c == D) mismatch("crd0 and val streams", {ct, v});
      if (!stop_at(d, ct)) return false;
    }
  }

  void visit_tokens(const TokenVisitor& v) override {
    compute::Queued::visit_tokens(v);
    visit(acc_, v);
  }

 private:
  static void visit(const Tree& t, const TokenVisitor& v) {
    for (auto& kv : t.vals) v(kv.second);
    for (auto& kv : t.kids) visit(kv.second, v);
  }

  bool held_n() const {
    for (i64 x : cur_)
      if (x == N) return true;
    return false;
  }

  void add(i64 c, Token v) {
    if (!pre_.is_none()) v = pre_(*this, v);
    Tree* node = &acc_;
    for (i64 x : cur_) node = &node->kids[x];
    auto it = node->vals.find(c);
    if (it == node->vals.end())
      node->vals.emplace(c, v);
    else
      it->second = fn_(*this, it->second, v);
    flops += fl_;
  }

  // A stop (or D) `tt` at the head of the depth-d stream with d registers held: false when a
  // stream it closes has not delivered its stop yet.
  bool stop_at(size_t d, Token tt) {
    const size_t n = size_t(n_);
    i64 tk = tt.as_int();
    std::vector<Channel*> pops;
    i64 f = std::max(t + ii, ready_);
    for (size_t j = 0; j <= n; ++j) {
      size_t m = std::min(j, n - 1);     // val lines up with crd0
      i64 want;
      if (m >= d) {
        want = tk == D ? D : stop(level(tk) + i64(m - d));
      } else if (tk != D && level(tk) >= i64(d - m)) {
        want = stop(level(tk) - i64(d - m));
      } else {
        continue;
      }
      if (ins[j]->empty()) return false;
      Token h = ins[j]->head();
      if (!same_stop(h, Token::of_int(want)) || (tk == D && d))
        mismatch("the streams of depth " + std::to_string(m) + " and " + std::to_string(d) +
                     " (of " + std::to_string(n) + ")",
                 {h, tt});
      f = std::max(f, ins[j]->head_time());
      pops.push_back(ins[j]);
    }
    i64 e = empt(ins[n - 1]->head().as_int());   // the flush's emptiness is crd0's stop's
    fire_pops(f, {}, &pops);
    if (tk == D) {
      for (auto& qi : q) qi->push(Token::of_int(D));
      return true;
    }
    i64 l = level(tk);
    size_t keep = i64(d) - l - 1 > 0 ? size_t(i64(d) - l - 1) : 0;
    cur_.resize(keep);
    i64 k = l + i64(n - 1 - d);                   // the stop level it is in crd0
    if (k >= n_) {
      flush(k, e);
      acc_.clear();
    }
    return true;
  }

  // sim/prims_spacc.py serialize: the streams of the tree, closed by the flush stop (built in
  // vectors, whose last stops a closing fiber bumps keeping their emptiness, then queued); an
  // empty fiber at depth m gives the deeper streams bare stops S(d-m) of emptiness d-m.
  using Streams = std::vector<std::vector<Token>>;
  void close(Streams& o, size_t m, bool empty) const {
    const size_t n = size_t(n_);
    for (size_t j = m; j <= n; ++j) {
      size_t d = std::min(j, n - 1);
      if (d == m) {
        o[j].push_back(Token::of_int(S0));
      } else if (empty) {
        o[j].push_back(Token::of_int(stop(i64(d - m), i64(d - m))));
      } else {
        i64 last = o[j].back().as_int();
        o[j].back() = Token::of_int(stop(level(last) + 1, empt(last)));
      }
    }
  }
  void emit(Streams& o, const Tree& node, size_t m) const {
    const size_t n = size_t(n_);
    if (m == n - 1) {
      for (auto& kv : node.vals) {
        o[m].push_back(Token::of_int(kv.first));
        o[n].push_back(kv.second);
      }
      return;
    }
    for (auto& kv : node.kids) {
      o[m].push_back(Token::of_int(kv.first));
      emit(o, kv.second, m + 1);
      close(o, m + 1, kv.second.empty());
    }
  }
  void flush(i64 k, i64 e) {
    const size_t n = size_t(n_);
    i64 e_top = std::max<i64>(e - n_, 0);
    Streams o(n + 1);
    if (!acc_.empty()) {
      emit(o, acc_, 0);
      o[0].push_back(Token::of_int(stop(k - n_, e_top)));
      for (size_t j = 1; j <= n; ++j)
        o[j].back() =
            Token::of_int(stop(k - n_ + i64(std::min(j, n - 1)), empt(o[j].back().as_int())));
    } else {
      for (size_t j = 0; j <= n; ++j) {
        i64 m = i64(std::min(j, n - 1));
        o[j].push_back(Token::of_int(stop(k - n_ + m, e_top + m)));
      }
    }
    for (size_t j = 0; j <= n; ++j)
      for (const Token& x : o[j]) q[j]->push(x);
  }

  i64 n_;
  compute::ValueFn fn_, pre_;
  i64 fl_;
  Tree acc_;
  std::vector<i64> cur_;   // the held outer coordinates, outermost first
  i64 ready_ = 0;          // the cycle the last register was taken
  bool emit_empty_;        // every outer coordinate received is emitted
};

}  // namespace spacc

void register_spacc(Registry& r) { r.add<spacc::SpaccN>("spacc3"); }

}  // namespace fastsim
