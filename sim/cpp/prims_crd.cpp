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

inline bool is_crd(i64 x) { return x >= 0 || x == N; }

/// (outer crd, inner crd) -> (outer crd, inner crd): an outer coordinate goes out only if its
/// inner fiber is non-empty; a kept fiber's closing stop is held back until the next kept fiber
/// (then S0) or the outer fiber's end (then S(k+1), merged) is known.
class CrdDrop : public Queued {
 public:
  CrdDrop(std::string name, std::string kind, i64 ii, i64 lat)
      : Queued(std::move(name), std::move(kind), ii, lat) {
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
        if (is_crd(x.as_int())) {
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
      if (is_crd(o)) {
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
        if (!(o == D ? x == D : (x <= -3 && level(x) == level(o) + 1)))
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
  CrdHold(std::string name, std::string kind, i64 ii, i64 lat)
      : Queued(std::move(name), std::move(kind), ii, lat) {
    queues(2);
  }

  bool run() override {
    Channel& oin = *ins[0];
    Channel& iin = *ins[1];
    Port& oo = *outs[0];
    Port& io = *outs[1];
    for (;;) {
      if (drain()) return true;
      if (done) return false;
      i64 f = t + ii;
      if (!has_cur_) {
        if (oin.empty()) return false;
        f = std::max(f, oin.head_time());
        Token ot = oin.head();
        i64 o = ot.as_int();
        if (is_crd(o)) {
          cur_ = ot;
          has_cur_ = true;
          fire_pops(f, {&oin});
          continue;
        }
        if (iin.empty()) return false;
        f = std::max(f, iin.head_time());
        Token x = iin.head();
        i64 xi = x.as_int();
        if (!(o == D ? xi == D : (xi <= -3 && level(xi) == level(o) + 1)))
          mismatch("outer and inner stops", {ot, x});
        if (!oo.room() || !io.room()) return true;
        emit2(f, {&oin, &iin}, x, x);
        if (xi == D) done = true;
        continue;
      }
      if (iin.empty()) return false;
      f = std::max(f, iin.head_time());
      Token x = iin.head();
      i64 xi = x.as_int();
      if (is_crd(xi)) {
        if (!oo.room() || !io.room()) return true;
        emit2(f, {&iin}, cur_, x);
        continue;
      }
      if (xi == D) error("inner stream ended (D) inside an outer fiber");
      bool pop_outer = false;
      if (level(xi)) {                             // the outer fiber ends too
        if (oin.empty()) return false;
        f = std::max(f, oin.head_time());
        i64 o = oin.head().as_int();
        if (!(o <= -3 && level(o) == level(xi) - 1))
          mismatch("outer and inner stops", {oin.head(), x});
        pop_outer = true;
      }
      if (!oo.room() || !io.room()) return true;
      if (pop_outer)
        emit2(f, {&iin, &oin}, x, x);
      else
        emit2(f, {&iin}, x, x);
      has_cur_ = false;
    }
  }

 private:
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
  explicit Fork(Build& b)
      : Queued(b.name(), b.kind(), b.ii(), b.lat()), lanes_(b.attr<i64>("lanes")),
        lvl_(b.attr<i64>("lvl")) {
    if (lanes_ < 1) throw Unsupported("a fork with no lanes");
    queues(size_t(lanes_));
    held_.assign(size_t(lanes_), NONE);
  }

  void wired() override {
    if (outs.size() != size_t(lanes_)) throw Unsupported("a fork wired with the wrong lanes");
  }

  bool run() override {
    Channel& ch = *ins[0];
    const i64 L = lvl_;
    for (;;) {
      if (drain()) return true;
      if (done || ch.empty()) return false;
      i64 f = std::max(t + ii, ch.head_time());
      Token xt = ch.head();
      i64 x = xt.is_int() ? xt.as_int() : 0;
      bool ctl = xt.is_int() && x < 0 && x != N;
      size_t lane = lane_;
      if (ctl && (x == D || level(x) >= L)) {     // enclosing stop or D: every lane
        if (L >= 1 && !inside_ && x != D && empt(x) < L) {
          // not bare: it also closes an empty unit, which goes to this lane
          if (held_[lane] != NONE) {
            q[lane]->push(Token::of_int(held_[lane]));
            held_[lane] = NONE;
          }
          inside_ = true;
          any_ = true;
        }
        for (size_t i = 0; i < q.size(); ++i) {
          Ring<Token>& qi = *q[i];
          if (x == D || L == 0 || (i == lane && inside_))
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
        fire_through(f, {&ch});
        continue;
      }
      if (!inside_) {                             // a unit starts
        if (held_[lane] != NONE) {
          q[lane]->push(Token::of_int(held_[lane]));
          held_[lane] = NONE;
        }
        inside_ = true;
        any_ = true;
      }
      if (L == 0) {                               // the unit is this one token
        q[lane]->push(xt);
        inside_ = false;
        lane_ = (lane + 1) % size_t(lanes_);
      } else if (ctl && level(x) == L - 1) {      // the unit's close: held back
        held_[lane] = x;
        inside_ = false;
        lane_ = (lane + 1) % size_t(lanes_);
      } else {
        q[lane]->push(xt);
      }
      fire_through(f, {&ch});
    }
  }

 private:
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
  explicit Join(Build& b)
      : Queued(b.name(), b.kind(), b.ii(), b.lat()), lanes_(b.attr<i64>("lanes")),
        lvl_(b.attr<i64>("lvl")) {
    if (lanes_ < 1) throw Unsupported("a join with no lanes");
    queues(1);
    closed_.assign(size_t(lanes_), false);
  }

  void wired() override {
    if (ins.size() != size_t(lanes_)) throw Unsupported("a join wired with the wrong lanes");
  }

  bool run() override {
    const i64 L = lvl_;
    Ring<Token>& out = *q[0];
    for (;;) {
      if (drain()) return true;
      if (done) return false;
      size_t lane = lane_;
      Channel& ch = *ins[lane];
      if (!closed_[lane]) {
        if (ch.empty()) return false;
        Token xt = ch.head();
        i64 x = xt.is_int() ? xt.as_int() : 0;
        i64 f = std::max(t + ii, ch.head_time());
        bool ctl = xt.is_int() && x < 0 && x != N;
        bool enclosing = ctl && (x == D || level(x) >= L);
        // an enclosing stop at a unit boundary that is not bare closes an empty unit
        bool empty_unit = enclosing && L >= 1 && !inside_ && x != D && empt(x) < L;
        if (!enclosing || empty_unit) {
          if (!inside_) {                         // a unit starts
            if (has_held_) {
              out.push(held_);
              has_held_ = false;
            }
            inside_ = true;
          }
          if (empty_unit) {
            // handled as a merged close below
          } else if (L == 0) {
            out.push(xt);
            inside_ = false;
            lane_ = (lane + 1) % size_t(lanes_);
            fire_through(f, {&ch});
            continue;
          } else if (ctl && level(x) == L - 1) {  // the unit's close: next lane
            held_ = xt;
            has_held_ = true;
            inside_ = false;
            lane_ = (lane + 1) % size_t(lanes_);
            fire_through(f, {&ch});
            continue;
          } else {
            out.push(xt);
            fire_through(f, {&ch});
            continue;
          }
        }
        if (inside_) {                            // merged close: this lane's fiber ended
          inside_ = false;
          held_ = Token::of_int(stop(L - 1, empt(x)));
          has_held_ = true;
          closed_[lane] = true;
          endk_ = xt;
          has_endk_ = true;
          lane_ = (lane + 1) % size_t(lanes_);
          fire_through(f, {&ch});
          continue;
        }
      }
      // this lane has no more units: the enclosing fiber ends on every lane
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
        out.push(Token::of_int(stop(level(endk.as_int()), empt(held_.as_int()))));
      else
        out.push(endk);
      fire_through(f, {}, &pops_);
      has_held_ = false;
      inside_ = false;
      closed_.assign(size_t(lanes_), false);
      has_endk_ = false;
      lane_ = 0;
    }
  }
  void visit_tokens(const TokenVisitor& v) override {
    Queued::visit_tokens(v);
    if (has_held_) v(held_);
    if (has_endk_) v(endk_);
  }

 private:
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
  r.add("CrdDrop", plain<crd::CrdDrop>());
  r.add("CrdHold", plain<crd::CrdHold>());
  r.add("Fork", built<crd::Fork>());
  r.add("Join", built<crd::Join>());
}

}  // namespace fastsim
