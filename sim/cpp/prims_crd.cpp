// Coordinate-stream primitives: coordinate drop and hold, fork and join for parallel lanes (the
// C++ twin of sim/prims_crd.py; the semantics are documented there). They derive from
// compute::Queued (prims_compute.cpp, compiled before this file: all.cpp), as the Python ones
// derive from prims_compute._Queued.
#include <memory>
#include <vector>

#include "registry.hpp"

namespace fastsim {

namespace crd {

using compute::Queued;

/// (outer crd, inner crd) -> (outer crd, inner crd): an outer coordinate goes out only if its
/// inner fiber is non-empty; a kept fiber's closing stop is held back until the next kept fiber
/// (then S0) or the outer fiber's end (then S(k+1), merged) is known.
class CrdDrop : public Queued {
 public:
  explicit CrdDrop(const Common& c) : Queued(c) {
    queues(2);
  }

  bool run() override {
    Channel& oin = *ins[0];
    Channel& iin = *ins[1];
    Ring<Token>& qo = *q[0];
    Ring<Token>& qi = *q[1];
    for (;;) {
      if (drain()) return true;
      if (done) return false;
      i64 f = t + ii;
      if (mode_ == 1) {                            // inside a kept inner fiber
        if (iin.empty()) return false;
        f = std::max(f, iin.head_time());
        Token x = iin.head();
        if (is_element(x.as_int())) {
          if (!outs[1]->room()) return true;
          Firing fire(*this);
          fire.after_cycle(f).slot(*outs[1]);
          fire.pop(iin);
          fire.emit(*outs[1], x);
          fire.commit();
        } else {
          fire_pops(f, {&iin});
          mode_ = 0;
          held_ = true;
          after_crd_ = true;
        }
        continue;
      }
      if (oin.empty()) return false;
      f = std::max(f, oin.head_time());
      Token ot = oin.head();
      i64 o = ot.as_int();
      if (is_element(o)) {
        if (iin.empty()) return false;
        f = std::max(f, iin.head_time());
        i64 x = iin.head().as_int();
        if (x < 0 && x != N) {                     // empty inner fiber: drop o
          if (x == D) mismatch("outer and inner streams", {ot, iin.head()});
          fire_pops(f, {&oin, &iin});
          after_crd_ = true;
          continue;
        }
        if (held_) {
          qi.push(Token::of_int(S0));
          held_ = false;
        }
        qo.push(ot);
        fire_pops(f, {&oin});
        mode_ = 1;
        continue;
      }
      // an outer stop Sk or D
      bool pop_inner = false;
      if (!after_crd_ || o == D) {                 // the inner stream has its own token
        if (iin.empty()) return false;
        f = std::max(f, iin.head_time());
        i64 x = iin.head().as_int();
        if (!(o == D ? x == D : (is_stop(x) && level(x) == level(o) + 1)))
          mismatch("outer and inner stops", {ot, iin.head()});
        pop_inner = true;
      }
      if (pop_inner)
        fire_pops(f, {&oin, &iin});
      else
        fire_pops(f, {&oin});
      qo.push(ot);
      if (o == D)
        qi.push(Token::of_int(D));
      else if (held_)                              // merged with the last kept fiber
        qi.push(Token::of_int(stop(level(o) + 1)));
      else                                         // no kept fiber: bare
        qi.push(Token::of_int(stop(level(o) + 1, empt(o) + 1)));
      held_ = false;
      after_crd_ = false;
    }
  }

 private:
  int mode_ = 0;             // 0: at an outer token; 1: streaming a kept inner fiber
  bool held_ = false;        // a kept fiber's closing stop is owed
  bool after_crd_ = false;   // the last outer token of the current outer fiber was a crd
};

/// (outer crd, inner crd) -> (outer crd, inner crd): the outer coordinate is repeated once per
/// inner coordinate; stops of the inner stream go to both outputs.
class CrdHold : public Queued {
 public:
  explicit CrdHold(const Common& c) : Queued(c) {
    queues(2);
  }

  bool run() override {
    for (;;) {
      if (drain()) return true;
      if (done) return false;
      Step r = has_cur_ ? inner() : outer();
      if (r != Step::FIRED) return r == Step::BLOCKED;
    }
  }

 private:
  // No current outer coordinate: the next one goes into the register (a firing), or an outer
  // stop or D meets the inner stream's (Python: CrdHold.step and _outer_stop).
  Step outer() {
    Channel& oin = *ins[0];
    Channel& iin = *ins[1];
    if (oin.empty()) return Step::WAITING;
    i64 f = std::max(t + ii, oin.head_time());
    Token ot = oin.head();
    i64 o = ot.as_int();
    if (is_element(o)) {
      cur_ = ot;
      has_cur_ = true;
      fire_pops(f, {&oin});
      return Step::FIRED;
    }
    if (iin.empty()) return Step::WAITING;
    f = std::max(f, iin.head_time());
    Token x = iin.head();
    i64 xi = x.as_int();
    if (!(o == D ? xi == D : (is_stop(xi) && level(xi) == level(o) + 1)))
      mismatch("outer and inner stops", {ot, x});
    if (!outs[0]->room() || !outs[1]->room()) return Step::BLOCKED;
    emit2(f, {&oin, &iin}, x, x);
    if (xi == D) done = true;
    return Step::FIRED;
  }

  // Inside an outer fiber: each inner coordinate goes out with the held outer one; an inner
  // stop goes to both outputs and ends the held coordinate (S(k) with k >= 1: the outer
  // fiber's stop too).
  Step inner() {
    Channel& oin = *ins[0];
    Channel& iin = *ins[1];
    if (iin.empty()) return Step::WAITING;
    i64 f = std::max(t + ii, iin.head_time());
    Token x = iin.head();
    i64 xi = x.as_int();
    if (is_element(xi)) {
      if (!outs[0]->room() || !outs[1]->room()) return Step::BLOCKED;
      emit2(f, {&iin}, cur_, x);
      return Step::FIRED;
    }
    if (xi == D) error("inner stream ended (D) inside an outer fiber");
    bool pop_outer = false;
    if (level(xi)) {                             // the outer fiber ends too
      if (oin.empty()) return Step::WAITING;
      f = std::max(f, oin.head_time());
      i64 o = oin.head().as_int();
      if (!(is_stop(o) && level(o) == level(xi) - 1))
        mismatch("outer and inner stops", {oin.head(), x});
      pop_outer = true;
    }
    if (!outs[0]->room() || !outs[1]->room()) return Step::BLOCKED;
    if (pop_outer)
      emit2(f, {&iin, &oin}, x, x);
    else
      emit2(f, {&iin}, x, x);
    has_cur_ = false;
    return Step::FIRED;
  }

  // One firing at >= f popping `pops` and emitting a on the outer output, b on the inner one.
  void emit2(i64 f, std::initializer_list<Channel*> pops, Token a, Token b) {
    Firing fire(*this);
    fire.after_cycle(f).slot(*outs[0]).slot(*outs[1]);
    for (Channel* c : pops) fire.pop(*c);
    fire.emit(*outs[0], a);
    fire.emit(*outs[1], b);
    fire.commit();
  }

  Token cur_;
  bool has_cur_ = false;
};

/// Scatter a stream round-robin across lanes by units at stop depth `level` (see
/// sim/prims_crd.py Fork: enclosing stops and D go to every lane, merged with a lane's held
/// unit close, or bare for a lane that got no unit).
class Fork : public Queued {
 public:
  /// The lanes and the unit's level (prims_crd.py Fork's and Join's attributes).
  struct Attrs {
    i64 lanes, lvl;
    static Attrs read(Build& b) { return {b.attr<i64>("lanes"), b.attr<i64>("lvl")}; }
  };
  Fork(const Common& c, const Attrs& a) : Queued(c), lanes_(a.lanes), lvl_(a.lvl) {
    if (lanes_ < 1) throw Unsupported("a fork with no lanes");
    queues(size_t(lanes_));
    held_.assign(size_t(lanes_), NONE);
  }

  void wired() override {
    if (outs.size() != size_t(lanes_)) throw Unsupported("a fork wired with the wrong lanes");
  }

  bool run() override {
    Channel& ch = *ins[0];
    for (;;) {
      if (drain()) return true;
      if (done || ch.empty()) return false;
      i64 f = std::max(t + ii, ch.head_time());
      Token xt = ch.head();
      i64 x = xt.is_int() ? xt.as_int() : 0;
      bool ctl = xt.is_int() && x < 0 && x != N;
      if (ctl && (x == D || level(x) >= lvl_))   // enclosing stop or D: every lane
        enclosing(xt, x);
      else
        unit_token(xt, x, ctl);
      fire_through(f, {&ch});
    }
  }

 private:
  // A unit starts on the current lane: its last unit's held close goes out first.
  void start_unit() {
    size_t lane = lane_;
    if (held_[lane] != NONE) {
      q[lane]->push(Token::of_int(held_[lane]));
      held_[lane] = NONE;
    }
    inside_ = true;
    any_ = true;
  }

  // An enclosing stop (or D) goes to every lane; the lane counter restarts.
  void enclosing(Token xt, i64 x) {
    const i64 L = lvl_;
    if (L >= 1 && !inside_ && x != D && empt(x) < L)
      start_unit();   // not bare: it also closes an empty unit, which goes to this lane
    for (size_t i = 0; i < q.size(); ++i) {
      Ring<Token>& qi = *q[i];
      if (x == D || L == 0 || (i == lane_ && inside_))
        qi.push(xt);
      else if (held_[i] != NONE)              // merged with the lane's last unit close
        qi.push(Token::of_int(stop(level(x), empt(held_[i]))));
      else if (any_)                          // this lane got no unit: bare
        qi.push(Token::of_int(stop(level(x), L)));
      else
        qi.push(xt);
      held_[i] = NONE;
    }
    inside_ = false;
    any_ = false;
    lane_ = 0;
  }

  // A token of the current unit goes to the current lane.
  void unit_token(Token xt, i64 x, bool ctl) {
    if (!inside_) start_unit();
    size_t lane = lane_;
    if (lvl_ == 0) {                            // the unit is this one token
      q[lane]->push(xt);
      inside_ = false;
      lane_ = (lane + 1) % size_t(lanes_);
    } else if (ctl && level(x) == lvl_ - 1) {   // the unit's close: held back
      held_[lane] = x;
      inside_ = false;
      lane_ = (lane + 1) % size_t(lanes_);
    } else {
      q[lane]->push(xt);
    }
  }

  static constexpr i64 NONE = 1;   // no held close (held closes are stops: negative)
  i64 lanes_, lvl_;
  size_t lane_ = 0;
  bool inside_ = false;            // inside a unit (level >= 1)
  std::vector<i64> held_;          // lane owes this close S(L-1) of its last unit
  bool any_ = false;               // some unit went out in the current enclosing fiber
};

/// Gather lanes back in the original order: the inverse of Fork at the same level.
class Join : public Queued {
 public:
  using Attrs = Fork::Attrs;
  Join(const Common& c, const Attrs& a) : Queued(c), lanes_(a.lanes), lvl_(a.lvl) {
    if (lanes_ < 1) throw Unsupported("a join with no lanes");
    queues(1);
    closed_.assign(size_t(lanes_), false);
  }

  void wired() override {
    if (ins.size() != size_t(lanes_)) throw Unsupported("a join wired with the wrong lanes");
  }

  bool run() override {
    for (;;) {
      if (drain()) return true;
      if (done) return false;
      // this lane has no more units: the enclosing fiber ends on every lane
      if (!(closed_[lane_] ? fiber_end() : lane_token())) return false;
    }
  }
  void visit_tokens(const TokenVisitor& v) override {
    Queued::visit_tokens(v);
    if (has_held_) v(held_);
    if (has_endk_) v(endk_);
  }

 private:
  // One firing taking the current lane's head (Python: Join.consume); false while it waits.
  bool lane_token() {
    const i64 L = lvl_;
    Channel& ch = *ins[lane_];
    if (ch.empty()) return false;
    Token xt = ch.head();
    i64 x = xt.is_int() ? xt.as_int() : 0;
    i64 f = std::max(t + ii, ch.head_time());
    bool ctl = xt.is_int() && x < 0 && x != N;
    bool enclosing = ctl && (x == D || level(x) >= L);
    // an enclosing stop at a unit boundary that is not bare closes an empty unit
    bool empty_unit = enclosing && L >= 1 && !inside_ && x != D && empt(x) < L;
    if (enclosing && !empty_unit && !inside_) return fiber_end();
    if (!inside_) {                               // a unit starts
      if (has_held_) {
        q[0]->push(held_);
        has_held_ = false;
      }
      inside_ = true;
    }
    if (enclosing) {                              // merged close: this lane's fiber ended
      inside_ = false;
      held_ = Token::of_int(stop(L - 1, empt(x)));
      has_held_ = true;
      closed_[lane_] = true;
      endk_ = xt;
      has_endk_ = true;
      next_lane();
    } else {
      unit_token(xt, x, ctl);
    }
    fire_through(f, {&ch});
    return true;
  }

  // A token of the current lane's unit goes out; the unit's end moves to the next lane.
  void unit_token(Token xt, i64 x, bool ctl) {
    if (lvl_ == 0) {
      q[0]->push(xt);
      inside_ = false;
      next_lane();
    } else if (ctl && level(x) == lvl_ - 1) {     // the unit's close: next lane
      held_ = xt;
      has_held_ = true;
      inside_ = false;
      next_lane();
    } else {
      q[0]->push(xt);
    }
  }

  void next_lane() { lane_ = (lane_ + 1) % size_t(lanes_); }

  // The enclosing fiber ends on every lane: one stop out for all of them (Python:
  // Join._fiber_end); false while a lane's stop has not come.
  bool fiber_end() {
    pops_.clear();
    i64 f = t + ii;
    Token endk = endk_;
    bool has_endk = has_endk_;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (closed_[i]) continue;
      Channel& c = *ins[i];
      if (c.empty()) return false;
      f = std::max(f, c.head_time());
      Token h = c.head();
      if (!has_endk) {
        endk = h;
        has_endk = true;
      }
      if (!same_stop(h, endk)) mismatch("lane stops", {endk, h});
      pops_.push_back(&c);
    }
    if (has_held_ && !endk.is(D))               // merged with the last unit's close
      q[0]->push(Token::of_int(stop(level(endk.as_int()), empt(held_.as_int()))));
    else
      q[0]->push(endk);
    fire_through(f, {}, &pops_);
    has_held_ = false;
    inside_ = false;
    closed_.assign(size_t(lanes_), false);
    has_endk_ = false;
    lane_ = 0;
    return true;
  }

  i64 lanes_, lvl_;
  size_t lane_ = 0;
  bool inside_ = false;
  Token held_;                  // the close S(L-1) owed for the last unit out (has_held_)
  bool has_held_ = false;
  std::vector<bool> closed_;    // lane's enclosing fiber already ended (merged close)
  Token endk_;                  // the merged enclosing stop seen last (has_endk_)
  bool has_endk_ = false;
  std::vector<Channel*> pops_;  // the lanes the closing firing pops
};

}  // namespace crd

void register_crd(Registry& r) {
  r.add<crd::CrdDrop>("crddrop");
  r.add<crd::CrdHold>("crdhold");
  r.add<crd::Fork>("fork");
  r.add<crd::Join>("join");
}

}  // namespace fastsim
