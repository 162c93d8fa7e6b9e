// Value primitives: ALUs, the order-0 reducer and the sparse accumulators of order 1 and 2 (the
// C++ twin of sim/prims_compute.py, with the scalar operations of sim/ops.py).
//
// Scalar values are computed here exactly as sim/ops.py computes them: the same expression in
// the same order, the same libm functions (exp, tanh, erf, sqrt), the same special cases (NaN,
// infinities, signed zeros). That holds when the Python node holds one of sim/ops.py's scalar
// functions (`scalar_alu`, `scalar_reduce` recognize them); any other function (numpy on b x b blocks, the
// labelled block einsums, whose values may also be 0-d floats) is called as the Python node
// would call it, so its result is numpy's, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "registry.hpp"

namespace fastsim {

namespace compute {

// ---- sim/ops.py, scalar -------------------------------------------------------------------

const double INF = std::numeric_limits<double>::infinity();
const double NAN_ = std::numeric_limits<double>::quiet_NaN();   // Python's math.nan (+, quiet)

// Arithmetic on two NaNs gives one of them; which one the hardware picks depends on the operand
// order of the instruction, which a compiler may swap for + and *. The rule here is x86's (the
// first operand's NaN, quieted), written out so that no compiler choice can change it: it is
// numpy's, CPython's for - and /, and that of its specialized float + and * (BINARY_OP_ADD_FLOAT,
// BINARY_OP_MULTIPLY_FLOAT). CPython's generic float_add and float_mul return the second
// operand's NaN instead, so the Python engine's NaN + NaN (and NaN * NaN) depends on whether its
// interpreter specialized that bytecode (sim/cpp/README.md).
inline double quiet(double x) {
  u64 b;
  std::memcpy(&b, &x, sizeof b);
  b |= u64(1) << 51;
  std::memcpy(&x, &b, sizeof b);
  return x;
}
inline double nan2(double a, double b, double r) {
  if (r == r) return r;
  if (a != a) return quiet(a);
  if (b != b) return quiet(b);
  return r;   // an invalid operation (inf - inf, 0 * inf): the hardware's default NaN
}
inline double add(double a, double b) { return nan2(a, b, a + b); }
inline double sub(double a, double b) { return nan2(a, b, a - b); }
inline double mul(double a, double b) { return nan2(a, b, a * b); }
inline double quo(double a, double b) { return nan2(a, b, a / b); }

inline double div_(double a, double b) {   // Python's a / b, IEEE where Python would raise
  if (b == 0.0)
    return (a == 0.0 || a != a) ? NAN_ : mul(std::copysign(INF, a), std::copysign(1.0, b));
  return quo(a, b);
}
inline double max_(double a, double b) { return (a > b || a != a) ? a : b; }
inline double min_(double a, double b) { return (a < b || a != a) ? a : b; }
inline double relu_(double x) { return (x > 0.0 || x != x) ? x : 0.0; }
inline double sqrt_(double x) { return x >= 0.0 ? std::sqrt(x) : NAN_; }
inline double rsqrt_(double x) {
  if (x > 0.0) return quo(1.0, std::sqrt(x));
  return x == 0.0 ? std::copysign(INF, x) : NAN_;
}
inline double sigmoid_(double x) {
  if (x >= 0.0) return quo(1.0, add(1.0, std::exp(-x)));
  double e = std::exp(x);
  return quo(e, add(1.0, e));
}
inline double gelu_(double x) {   // 0.5 * x * (1.0 + erf(x / sqrt(2.0)))
  return mul(mul(0.5, x), add(1.0, std::erf(quo(x, std::sqrt(2.0)))));
}

/// The scalar functions of sim/ops.py (NONE: a Python function, called).
enum class Scalar {
  NONE, ADD, SUB, MUL, DIV, MAX, MIN,                       // binary (and reductions)
  RELU, EXP, NEG, SQRT, RSQRT, SIGMOID, TANH, GELU,         // unary
  ADDC, SUBC, MULC, DIVC, RSUBC, RDIVC, MAXC, MINC          // x op c
};

inline double scalar1(Scalar op, double x, double c) {
  switch (op) {
    case Scalar::RELU: return relu_(x);
    case Scalar::EXP: return std::exp(x);   // math.exp; its OverflowError is _exp's inf
    case Scalar::NEG: return -x;
    case Scalar::SQRT: return sqrt_(x);
    case Scalar::RSQRT: return rsqrt_(x);
    case Scalar::SIGMOID: return sigmoid_(x);
    case Scalar::TANH: return std::tanh(x);
    case Scalar::GELU: return gelu_(x);
    case Scalar::ADDC: return add(x, c);
    case Scalar::SUBC: return sub(x, c);
    case Scalar::MULC: return mul(x, c);
    case Scalar::DIVC: return div_(x, c);
    case Scalar::RSUBC: return sub(c, x);
    case Scalar::RDIVC: return div_(c, x);
    case Scalar::MAXC: return max_(x, c);
    case Scalar::MINC: return min_(x, c);
    default: throw std::logic_error("not a unary scalar op");
  }
}

inline double scalar2(Scalar op, double a, double b) {
  switch (op) {
    case Scalar::ADD: return add(a, b);
    case Scalar::SUB: return sub(a, b);
    case Scalar::MUL: return mul(a, b);
    case Scalar::DIV: return div_(a, b);
    case Scalar::MAX: return max_(a, b);
    case Scalar::MIN: return min_(a, b);
    default: throw std::logic_error("not a binary scalar op");
  }
}

/// Which sim/ops.py scalar function `fn` is, for ALU op `op` (`c`: the constant of an `x op c`
/// op, read from its closure as sim.ops.alu_function made it); NONE for anything else.
inline Scalar scalar_alu(py::handle fn, const std::string& op, double& c) {
  static const std::map<std::string, Scalar> names = {
      {"add", Scalar::ADD}, {"sub", Scalar::SUB}, {"mul", Scalar::MUL}, {"div", Scalar::DIV},
      {"max", Scalar::MAX}, {"min", Scalar::MIN}, {"relu", Scalar::RELU}, {"exp", Scalar::EXP},
      {"neg", Scalar::NEG}, {"sqrt", Scalar::SQRT}, {"rsqrt", Scalar::RSQRT},
      {"sigmoid", Scalar::SIGMOID}, {"tanh", Scalar::TANH}, {"gelu", Scalar::GELU},
      {"addc", Scalar::ADDC}, {"subc", Scalar::SUBC}, {"mulc", Scalar::MULC},
      {"divc", Scalar::DIVC}, {"rsubc", Scalar::RSUBC}, {"rdivc", Scalar::RDIVC},
      {"maxc", Scalar::MAXC}, {"minc", Scalar::MINC}};
  py::module_ ops = py::module_::import("fuseflowc.sim.ops");
  py::dict binary = ops.attr("BINARY_SCALAR"), unary = ops.attr("UNARY_SCALAR"),
           consts = ops.attr("SCALAR_CONST");
  py::str key(op);
  if (op == "bmm") return fn.is(binary["mul"]) ? Scalar::MUL : Scalar::NONE;   // 1 x 1 blocks
  if (binary.contains(key)) return fn.is(binary[key]) ? names.at(op) : Scalar::NONE;
  if (unary.contains(key)) return fn.is(unary[key]) ? names.at(op) : Scalar::NONE;
  if (!consts.contains(key) || !py::hasattr(fn, "__closure__") || fn.attr("__closure__").is_none())
    return Scalar::NONE;
  // alu_function's `lambda x: fn(x, c)`: the scalar one when its fn is SCALAR_CONST[op]
  py::tuple free = fn.attr("__code__").attr("co_freevars");
  py::tuple cells = fn.attr("__closure__");
  py::object inner, cst;
  for (size_t k = 0; k < free.size(); ++k) {
    std::string v = free[k].cast<std::string>();
    if (v == "fn") inner = cells[k].attr("cell_contents");
    if (v == "c") cst = cells[k].attr("cell_contents");
  }
  if (!inner || !cst || !inner.is(consts[key]) || !py::isinstance<py::float_>(cst))
    return Scalar::NONE;
  c = cst.cast<double>();
  return names.at(op);
}

/// Which sim/ops.py scalar reduction `fn` is (REDUCE_SCALAR: sum, max); NONE for others.
inline Scalar scalar_reduce(py::handle fn) {
  py::dict red = py::module_::import("fuseflowc.sim.ops").attr("REDUCE_SCALAR");
  if (fn.is(red["sum"])) return Scalar::ADD;
  if (fn.is(red["max"])) return Scalar::MAX;
  return Scalar::NONE;
}

/// A value function of a node: native on floats when it is one of sim/ops.py's scalar
/// functions, else the Python function (its result back as a token: a float or a block).
class ValueFn {
 public:
  ValueFn() = default;
  ValueFn(py::object fn, Scalar op, double c, BlockTable& blocks)
      : fn_(std::move(fn)), op_(op), c_(c), blocks_(&blocks) {}

  bool is_none() const { return !fn_ || fn_.is_none(); }
  // (the float paths inline in the hot loops, the Python calls out of line)
  FASTSIM_INLINE Token operator()(const Node& n, Token x) const {
    if (op_ != Scalar::NONE && x.is_float())
      return Token::of_float(scalar1(op_, x.as_float(), c_));
    return call(n, x);
  }
  FASTSIM_INLINE Token operator()(const Node& n, Token x, Token y) const {
    if (op_ != Scalar::NONE && x.is_float() && y.is_float())
      return Token::of_float(scalar2(op_, x.as_float(), y.as_float()));
    return call(n, x, y);
  }
  /// Python's `x * y` on two values (Alu's inlined mul: floats or plain blocks).
  FASTSIM_INLINE Token mul(const Node& n, Token x, Token y) const {
    if (x.is_float() && y.is_float()) return Token::of_float(compute::mul(x.as_float(), y.as_float()));
    return mul_py(n, x, y);
  }
  /// Python's `-y`.
  Token neg(const Node& n, Token y) const {
    if (y.is_float()) return Token::of_float(-y.as_float());
    return back(n, -py(y));
  }
  /// `fn(1.0, y)` (a division's N left operand: its identity).
  Token one_over(const Node& n, Token y) const {
    if (op_ != Scalar::NONE && y.is_float()) return Token::of_float(scalar2(op_, 1.0, y.as_float()));
    return back(n, fn_(py::float_(1.0), py(y)));
  }

 private:
  [[gnu::noinline]] Token call(const Node& n, Token x) const { return back(n, fn_(py(x))); }
  [[gnu::noinline]] Token call(const Node& n, Token x, Token y) const {
    return back(n, fn_(py(x), py(y)));
  }
  [[gnu::noinline]] Token mul_py(const Node& n, Token x, Token y) const {
    return back(n, py(x) * py(y));
  }
  py::object py(Token x) const { return blocks_->to_python(x); }
  // A Python float is a float token; anything else (a block, or a numpy float64, a 0-d value
  // that numpy made: it is kept as the object, since numpy computes on it, say divides it by
  // zero, unlike Python's float) is held like a block.
  Token back(const Node& n, py::handle v) const {
    if (PyFloat_CheckExact(v.ptr())) {
      double d = PyFloat_AS_DOUBLE(v.ptr());
      if (Token::collides(d)) n.error("a NaN value with a payload the compiled engine reserves");
      return Token::of_float(d);
    }
    return blocks_->make(v);
  }

  py::object fn_;
  Scalar op_ = Scalar::NONE;
  double c_ = 0.0;
  BlockTable* blocks_ = nullptr;
};

/// A node's reducing function (`fn`) and its per-block pre-reduction (`pre`, or None).
inline ValueFn reduce_fn(Build& b) {
  py::object fn = b.node.attr("fn");
  return ValueFn(fn, scalar_reduce(fn), 0.0, b.blocks());
}
inline ValueFn pre_fn(Build& b) {
  py::object pre = b.node.attr("pre");
  return pre.is_none() ? ValueFn() : ValueFn(pre, Scalar::NONE, 0.0, b.blocks());
}

/// What a reducer or an accumulator folds with: its function, the per-block pre-reduction and
/// the FLOPs of one fold (the Python node's fn, pre and fl).
struct FoldAttrs {
  ValueFn fn, pre;
  i64 fl;
  static FoldAttrs read(Build& b) { return {reduce_fn(b), pre_fn(b), b.attr<i64>("fl")}; }
};

// ---- the primitives -----------------------------------------------------------------------

/// ALU on one or two value streams. Stops and D pass (and must line up for binary ops); an N
/// operand acts as the identity of the operation; unary and scalar ops pass N through.
class Alu : public Node {
 public:
  /// The operation (prims_compute.py Alu's attributes): native where it is one of sim/ops.py's
  /// scalar functions, else the Python call; a labelled block einsum's N rules `nl`/`nr`.
  struct Attrs {
    std::string op;
    bool binary;
    i64 fl;
    bool labelled = false;
    ValueFn fn, nl, nr;
    static Attrs read(Build& b) {
      Attrs a{b.attr<std::string>("op"), b.attr<bool>("binary"), b.attr<i64>("fl")};
      py::object fn = b.node.attr("fn");
      double c = 0.0;
      a.labelled = !b.is_none("nl");
      Scalar s = a.labelled ? Scalar::NONE : scalar_alu(fn, a.op, c);
      a.fn = ValueFn(fn, s, c, b.blocks());
      if (a.labelled) {
        a.nl = ValueFn(b.node.attr("nl"), Scalar::NONE, 0.0, b.blocks());
        a.nr = ValueFn(b.node.attr("nr"), Scalar::NONE, 0.0, b.blocks());
      }
      return a;
    }
  };
  Alu(const Common& c, const Attrs& a)
      : Node(c), op_(a.op), binary_(a.binary), fl_(a.fl), labelled_(a.labelled),
        mul_(a.op == "mul" && !a.labelled), fn_(a.fn), nl_(a.nl), nr_(a.nr) {}

  bool run() override {
    return by_layout(*this, [this](auto at) {
      return binary_ ? run2<decltype(at)::value>() : run1<decltype(at)::value>();
    });
  }

 private:
  // The activations on channels of layout L (by_layout).
  template <Layout L>
  bool run1() {
    BasicReader<L> in(*ins[0]);
    BasicAppender<L> out(*outs[0]);
    Clock clock(*this);
    return cursor_loop<true>(*this, out, [&](auto&& o, size_t k, auto&& x) {
      return fire1(clock, x, o, k);
    }, in);
  }
  // Up to k firings of the one-operand ALU (the input holds k tokens, the output has room for
  // k); the number fired: D ends the stream, and nothing after it is taken (fire_each).
  template <class In, class Out>
  FASTSIM_INLINE size_t fire1(Clock& clock, In& in, Out& out, size_t k) {
    for (size_t j = 0; j < k; ++j) {
      Firing fire(clock);
      fire.after(in).slot(out);
      Token x = fire.pop(in);
      if (x.is_value()) {
        x = fn_(*this, x);
        flops += fl_;
      } else if (x.is(D)) {
        done = true;
      }
      fire.emit(out, x);
      fire.commit();
      if (done) return j + 1;
    }
    return k;
  }

  // A binary ALU takes whatever pairs come: D does not stop it (Python: Alu._step_binary).
  template <Layout L>
  bool run2() {
    BasicReader<L> a(*ins[0]);
    BasicReader<L> b(*ins[1]);
    BasicAppender<L> out(*outs[0]);
    Clock clock(*this);
    return cursor_loop<false>(*this, out, [&](auto&& o, size_t k, auto&& x, auto&& y) {
      return fire2(clock, x, y, o, k);
    }, a, b);
  }
  // k firings of the two-operand ALU (both inputs hold k tokens, the output has room for k).
  template <class In, class Out>
  FASTSIM_INLINE size_t fire2(Clock& clock, In& a, In& b, Out& out, size_t k) {
    for (size_t j = 0; j < k; ++j) {
      Firing fire(clock);
      fire.after(a).after(b).slot(out);
      Token x = fire.pop(a);
      Token y = fire.pop(b);
      Token z;
      bool xc = x.is_int(), yc = y.is_int();
      if (!xc && !yc) {
        z = mul_ ? fn_.mul(*this, x, y) : fn_(*this, x, y);
        flops += fl_;
      } else if (xc && yc) {
        i64 u = x.as_int(), v = y.as_int();
        i64 w;
        if (u == v) {
          w = u;
        } else if (is_stop(u) && is_stop(v) && same_level(u, v)) {
          w = u > v ? u : v;   // same level: the lesser emptiness
        } else if (u == N && v >= -2) {
          w = v;
        } else if (v == N && u >= -2) {
          w = u;
        } else {
          mismatch("operand streams", {x, y});
        }
        z = Token::of_int(w);
        if (w == D) done = true;
      } else if (xc && x.is(N)) {
        z = n_left(y);
      } else if (yc && y.is(N)) {
        z = labelled_ ? nr_(*this, x) : x;
      } else {
        mismatch("operand streams", {x, y});
      }
      fire.emit(out, z);
      fire.commit();
    }
    return k;
  }

  // `N op y` where N acts as the operation's identity (Python: _n_left, or the labelled nl).
  Token n_left(Token y) const {
    if (labelled_) return nl_(*this, y);
    if (op_ == "sub") return fn_.neg(*this, y);
    if (op_ == "div") return fn_.one_over(*this, y);
    return y;
  }

  std::string op_;
  bool binary_;
  i64 fl_;
  bool labelled_, mul_;
  ValueFn fn_, nl_, nr_;
};

/// Order-0 reducer (sum or max): on S0 emits the result and resets; on Sk (k > 0) emits the
/// result then S(k-1). An empty fiber gives an explicit 0; a bare stop reduces to nothing.
class Reduce : public Node {
 public:
  /// What it folds with, and the result of an empty fiber (a 0 or a zero block).
  struct Attrs {
    FoldAttrs fold;
    Token zero;
    static Attrs read(Build& b) { return {FoldAttrs::read(b), b.value(b.node.attr("zero"))}; }
  };
  Reduce(const Common& c, const Attrs& a)
      : Node(c), fn_(a.fold.fn), pre_(a.fold.pre), zero_(a.zero), fl_(a.fold.fl) {}

  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> in(*ins[0]);
    BasicAppender<L> out(*outs[0]);
    Clock clock(*this);
    for (;;) {
      Firing fire(clock);
      Token o;
      if (has_pend_) {                     // the stop that follows a result
        o = pend_;
        has_pend_ = false;
      } else {
        if (in.empty()) break;
        Token x = in.head();
        fire.after(in);
        if (x.is_value()) {                // a value: accumulate
          fire.pop(in);
          if (!pre_.is_none()) x = pre_(*this, x);
          acc_ = has_acc_ ? fn_(*this, acc_, x) : x;
          has_acc_ = true;
          flops += fl_;
          fire.commit();
          continue;
        }
        i64 v = x.as_int();
        if (v == N || (is_bare(v) && level(v) == 0)) {   // N, or a bare S0: nothing
          fire.pop(in);
          fire.commit();
          continue;
        }
        if (!out.room()) return true;
        if (v == D) {
          o = x;
          done = true;
        } else if (is_bare(v)) {           // bare Sk/e (k > 0) -> S(k-1)/(e-1)
          o = Token::of_int(stop(level(v) - 1, empt(v) - 1));
          has_acc_ = false;
        } else {
          o = has_acc_ ? acc_ : zero_;
          has_acc_ = false;
          if (level(v) > 0) {                // Sk (k > 0): the result, then S(k-1)
            pend_ = Token::of_int(stop(level(v) - 1));
            has_pend_ = true;
          }
        }
        fire.slot(out);
        fire.pop(in);
        fire.emit(out, o);
        fire.commit();
        if (o.is(D)) break;
        continue;
      }
      if (!out.room()) {
        pend_ = o;
        has_pend_ = true;
        return true;
      }
      fire.slot(out);
      fire.emit(out, o);
      fire.commit();
    }
    return false;
  }
  void visit_tokens(const TokenVisitor& v) override {
    if (has_acc_) v(acc_);
    if (has_pend_) v(pend_);
  }

 private:
  ValueFn fn_, pre_;
  Token zero_;
  i64 fl_;
  Token acc_, pend_;
  bool has_acc_ = false, has_pend_ = false;
};

/// A node that may owe several tokens per output after one input (Python: _Queued): q[i]
/// holds what output i still has to emit; queued tokens drain (one per output per firing)
/// before more input. The crd family's nodes (prims_crd.cpp) derive from it too.
class Queued : public Node {
 public:
  using Node::Node;
  void visit_tokens(const TokenVisitor& v) override {
    for (auto& qi : q)
      for (size_t k = 0; k < qi->size(); ++k) v((*qi)[k]);
  }

 protected:
  std::vector<std::unique_ptr<Ring<Token>>> q;

  void queues(size_t n) {
    for (size_t i = 0; i < n; ++i) q.push_back(std::make_unique<Ring<Token>>());
  }
  /// Whether every output with a queued head has room (Python: room(*heads' ports)).
  bool heads_room() const {
    for (size_t i = 0; i < q.size(); ++i)
      if (!q[i]->empty() && !outs[i]->room()) return false;
    return true;
  }
  bool any_queued() const {
    for (auto& qi : q)
      if (!qi->empty()) return true;
    return false;
  }
  /// Emit the head of every non-empty queue in firing `fire` (slots first, in output order),
  /// then pop them; D among them ends the node (Python: _heads, fire, _pop_heads).
  void emit_heads(Firing& fire, std::initializer_list<Channel*> pops = {},
                  const std::vector<Channel*>* more = nullptr) {
    for (size_t i = 0; i < q.size(); ++i)
      if (!q[i]->empty()) fire.slot(*outs[i]);
    pop_all(fire, pops, more);
    for (size_t i = 0; i < q.size(); ++i)
      if (!q[i]->empty()) fire.emit(*outs[i], q[i]->front());
    fire.commit();
    for (auto& qi : q)
      if (!qi->empty()) {
        Token x = qi->pop();
        if (x.is(D)) done = true;
      }
  }
  static void pop_all(Firing& fire, std::initializer_list<Channel*> pops,
                      const std::vector<Channel*>* more) {
    for (Channel* c : pops) fire.pop(*c);
    if (more)
      for (Channel* c : *more) fire.pop(*c);
  }
  /// Emit queued tokens; 1 if blocked on output, 0 when the queues are empty (Python: drain,
  /// True / None).
  bool drain() {
    for (;;) {
      if (!any_queued()) return false;
      if (!heads_room()) return true;
      Firing fire(*this);
      emit_heads(fire);
    }
  }
  /// Fire at >= `f` popping `pops` without emitting (Python: fire(f, pops, ())).
  void fire_pops(i64 f, std::initializer_list<Channel*> pops,
                 const std::vector<Channel*>* more = nullptr) {
    Firing fire(*this);
    fire.after_cycle(f);
    pop_all(fire, pops, more);
    fire.commit();
  }
  /// Fire at >= `f`, popping `pops`, and emit in the same firing the head of every non-empty
  /// queue when its output has room (Python: fire_through).
  void fire_through(i64 f, std::initializer_list<Channel*> pops,
                    const std::vector<Channel*>* more = nullptr) {
    if (!any_queued() || !heads_room()) {
      fire_pops(f, pops, more);
      return;
    }
    Firing fire(*this);
    fire.after_cycle(f);
    emit_heads(fire, pops, more);
  }
};

/// The points a sparse accumulator holds (Python: a dict, flushed by sorted(acc.items())):
/// coordinates below 2^22 in a dense array with the list of those touched, larger ones in a
/// map; drain() hands them over in coordinate order. O(1) per point and a sort of the touched
/// coordinates per flush, instead of a tree insertion per point.
class Accumulator {
 public:
  /// The value at coordinate c, or nullptr.
  Token* find(i64 c) {
    if (c >= 0 && c < DENSE) {
      size_t k = size_t(c);
      return k < here_.size() && here_[k] ? &val_[k] : nullptr;
    }
    auto it = big_.find(c);
    return it == big_.end() ? nullptr : &it->second;
  }
  void insert(i64 c, Token v) {
    if (c >= 0 && c < DENSE) {
      size_t k = size_t(c);
      if (k >= here_.size()) {
        here_.resize(k + 1, 0);
        val_.resize(k + 1);
      }
      here_[k] = 1;
      val_[k] = v;
      touched_.push_back(c);
      return;
    }
    big_.emplace(c, v);
  }
  bool empty() const { return touched_.empty() && big_.empty(); }
  /// Move every point into `out` (replacing its contents) in coordinate order; empty after.
  void drain(std::vector<std::pair<i64, Token>>& out) {
    out.clear();
    std::sort(touched_.begin(), touched_.end());
    for (i64 c : touched_) {
      out.emplace_back(c, val_[size_t(c)]);
      here_[size_t(c)] = 0;
    }
    touched_.clear();
    for (auto& kv : big_) out.emplace_back(kv.first, kv.second);   // all above the dense ones
    big_.clear();
  }
  template <class F>
  void for_each(F&& f) const {
    for (i64 c : touched_) f(val_[size_t(c)]);
    for (auto& kv : big_) f(kv.second);
  }

 private:
  static constexpr i64 DENSE = i64(1) << 22;
  std::vector<char> here_;
  std::vector<Token> val_;
  std::vector<i64> touched_;
  std::map<i64, Token> big_;
};

/// Order-1 sparse accumulator: (crd, val) in and out. Accumulates the points of the inner level
/// across the reduced index; on a stop Sk with k >= 1 emits the accumulated fiber sorted by
/// coordinate (one point per cycle), then S(k-1); S0 only ends an inner fiber.
class Spacc1 : public Node {
 public:
  using Attrs = FoldAttrs;
  Spacc1(const Common& c, const Attrs& a) : Node(c), fn_(a.fn), pre_(a.pre), fl_(a.fl) {}

  bool run() override {
    return by_layout(*this, [this](auto at) { return run_in<decltype(at)::value>(); });
  }
  // The activation on channels of layout L (by_layout).
  template <Layout L>
  bool run_in() {
    BasicReader<L> cin(*ins[0]);
    BasicReader<L> vin(*ins[1]);
    BasicAppender<L> oc(*outs[0]);
    BasicAppender<L> ov(*outs[1]);
    Clock clock(*this);
    for (;;) {
      if (fi_ < items_.size() || has_pend_) {   // flushing: one point per cycle
        if (!oc.room() || !ov.room()) return true;
        Firing fire(clock);
        fire.slot(oc).slot(ov);
        Token c, v;
        if (fi_ < items_.size()) {
          c = Token::of_int(items_[fi_].first);
          v = items_[fi_].second;
          ++fi_;
        } else {
          c = v = pend_;
          has_pend_ = false;
        }
        fire.emit(oc, c);
        fire.emit(ov, v);
        fire.commit();
        if (c.is(D) && v.is_int()) {
          done = true;
          break;
        }
        continue;
      }
      // a run of points (the hot loop): through cursors where both rings run consecutively
      size_t k = std::min(cin.run(), vin.run());
      Layout l = common_layout(cin, vin);
      if (k > 1 && l != Layout::MIXED) {
        k = on_layout(l, [&](auto at) {
          auto c = cin.tokens(at), v = vin.tokens(at);
          return accumulate(clock, c, v, k);
        });
        cin.popped(k);
        vin.popped(k);
        if (k) continue;
      }
      if (cin.empty() || vin.empty()) break;
      if (accumulate(clock, cin, vin, 1)) continue;
      Firing fire(clock);                   // a stop or D
      fire.after(cin).after(vin);
      Token ct = fire.pop(cin);
      Token v = fire.pop(vin);
      fire.commit();
      i64 c = ct.as_int();
      if (!same_stop(ct, v)) mismatch("crd and val streams", {ct, v});
      if (c == D) {
        pend_ = ct;
        has_pend_ = true;
      } else if (level(c)) {                // Sk, k >= 1: flush, then S(k-1)
        acc_.drain(items_);
        fi_ = 0;
        i64 e = empt(c);
        pend_ = Token::of_int(stop(level(c) - 1, e ? e - 1 : 0));
        has_pend_ = true;
      }
    }
    return false;
  }
  void visit_tokens(const TokenVisitor& v) override {
    acc_.for_each(v);
    for (size_t k = fi_; k < items_.size(); ++k) v(items_[k].second);
    if (has_pend_) v(pend_);
  }

 private:
  // Up to k firings that each take a point (a coordinate and its value) or an N pair into
  // the accumulator (both inputs hold k tokens); stops before a stop or D. Returns the firings.
  template <class In>
  FASTSIM_INLINE size_t accumulate(Clock& clock, In& cin, In& vin, size_t k) {
    size_t j = 0;
    for (; j < k; ++j) {
      i64 c = cin.head().as_int();
      if (c < 0 && c != N) break;
      Firing fire(clock);
      fire.after(cin).after(vin);
      fire.pop(cin);
      Token v = fire.pop(vin);
      fire.commit();
      if (c >= 0 && v.is_value()) {
        if (!pre_.is_none()) v = pre_(*this, v);
        if (Token* old = acc_.find(c))
          *old = fn_(*this, *old, v);
        else
          acc_.insert(c, v);
        flops += fl_;
      }
    }
    return j;
  }

  ValueFn fn_, pre_;
  i64 fl_;
  Accumulator acc_;                             // coordinate -> accumulated value
  std::vector<std::pair<i64, Token>> items_;    // the fiber being flushed, sorted
  size_t fi_ = 0;                               // next item of it to emit
  Token pend_;                                  // the stop (or D) after the flushed fiber
  bool has_pend_ = false;
};

/// Order-2 sparse accumulator: (crd1, crd0, val) in and out. Accumulates points (i, j) of two
/// inner levels; a stop Sk with k >= 2 in the crd0 stream flushes them sorted: crd1 gets the
/// i's then S(k-2); crd0 and val get each i's j's closed by S0, the last closed by S(k-1).
class Spacc2 : public Queued {
 public:
  /// What it folds with, and whether every outer coordinate received is emitted (emit_empty).
  struct Attrs {
    FoldAttrs fold;
    bool emit_empty;
    static Attrs read(Build& b) { return {FoldAttrs::read(b), b.attr<bool>("emit_empty")}; }
  };
  Spacc2(const Common& c, const Attrs& a)
      : Queued(c), fn_(a.fold.fn), pre_(a.fold.pre), fl_(a.fold.fl), emit_empty_(a.emit_empty) {
    queues(3);
  }

  bool run() override {
    Channel& jin = *ins[1];
    Channel& vin = *ins[2];
    for (;;) {
      if (drain()) return true;
      if (done || jin.empty() || vin.empty()) return false;
      i64 f = std::max(t + ii, ready_);
      f = std::max(f, jin.head_time());
      f = std::max(f, vin.head_time());
      if ((has_cur_ ? inner(f) : outer(f)) == Step::WAITING) return false;
    }
  }
  void visit_tokens(const TokenVisitor& v) override {
    Queued::visit_tokens(v);
    for (auto& row : acc_)
      for (auto& kv : row.second) v(kv.second);
  }

 private:
  // No current i (Python: Spacc2.consume and _outer_end): the next outer coordinate goes into
  // the register, or an i stop (an empty i fiber) or D meets crd0's matching token. f: the
  // firing's cycle so far.
  Step outer(i64 f) {
    Channel& iin = *ins[0];
    Channel& jin = *ins[1];
    Channel& vin = *ins[2];
    if (iin.empty()) return Step::WAITING;
    f = std::max(f, iin.head_time());
    Token it = iin.head(), jt = jin.head(), v = vin.head();
    i64 i = it.as_int(), j = jt.as_int();
    if (is_element(i)) {
      // Taking the outer coordinate costs no firing: it moves into the register that tags
      // the points of its fiber (its slot frees the next cycle), and the fiber's first
      // point is taken in the same cycle: one point per cycle.
      iin.pop(f);
      cur_ = i;
      has_cur_ = true;
      ready_ = f;
      if (emit_empty_ && i != N) acc_[i];   // emitted even if nothing is accumulated
      return Step::FIRED;
    }
    if (!same_stop(jt, v) || !(i == D ? j == D : (is_stop(j) && level(j) == level(i) + 1)))
      mismatch("crd1, crd0 and val streams", {it, jt, v});
    fire_pops(f, {&iin, &jin, &vin});
    if (i == D) {
      for (auto& qi : q) qi->push(Token::of_int(D));
    } else if (level(j) >= 2) {
      flush(level(j), empt(j));
    }
    return Step::FIRED;
  }

  // A point (j, v) of the current i, N, or the stop closing i's fiber (Python: Spacc2.consume
  // and _inner_end).
  Step inner(i64 f) {
    Channel& iin = *ins[0];
    Channel& jin = *ins[1];
    Channel& vin = *ins[2];
    Token jt = jin.head(), v = vin.head();
    i64 j = jt.as_int();
    if (is_element(j)) {
      if (j != N && cur_ != N && v.is_value()) accumulate(j, v);
      fire_pops(f, {&jin, &vin});
      return Step::FIRED;
    }
    if (!same_stop(jt, v) || j == D) mismatch("crd0 and val streams", {jt, v});
    i64 k = level(j);
    if (k == 0) {
      has_cur_ = false;
      fire_pops(f, {&jin, &vin});
      return Step::FIRED;
    }
    if (iin.empty()) return Step::WAITING;
    f = std::max(f, iin.head_time());
    i64 i = iin.head().as_int();
    if (!(is_stop(i) && level(i) == k - 1)) mismatch("crd1 and crd0 stops", {iin.head(), jt});
    has_cur_ = false;
    fire_pops(f, {&iin, &jin, &vin});
    if (k >= 2) flush(k, empt(j));
    return Step::FIRED;
  }

  // Fold value v into point (cur_, j).
  void accumulate(i64 j, Token v) {
    if (!pre_.is_none()) v = pre_(*this, v);
    auto& row = acc_[cur_];
    auto it = row.find(j);
    if (it == row.end())
      row.emplace(j, v);
    else
      it->second = fn_(*this, it->second, v);
    flops += fl_;
  }

  void flush(i64 k, i64 e) {
    Ring<Token>& q1 = *q[0];
    Ring<Token>& q0 = *q[1];
    Ring<Token>& qv = *q[2];
    const Token s0 = Token::of_int(S0);
    size_t left = acc_.size();
    for (auto& row : acc_) {
      q1.push(Token::of_int(row.first));
      for (auto& kv : row.second) {
        q0.push(Token::of_int(kv.first));
        qv.push(kv.second);
      }
      if (--left) {   // the last fiber is closed by S(k-1) instead (below)
        q0.push(s0);
        qv.push(s0);
      }
    }
    i64 e1 = std::max<i64>(e - 2, 0);
    q1.push(Token::of_int(stop(k - 2, e1)));
    i64 e0 = acc_.empty() ? e1 + 1 : 0;
    q0.push(Token::of_int(stop(k - 1, e0)));
    qv.push(Token::of_int(stop(k - 1, e0)));
    acc_.clear();
  }

  ValueFn fn_, pre_;
  i64 fl_;
  std::map<i64, std::map<i64, Token>> acc_;   // i -> j -> accumulated value
  i64 cur_ = 0;                               // the current crd1 coordinate (has_cur_)
  bool has_cur_ = false;
  i64 ready_ = 0;                             // the cycle cur_ was taken
  bool emit_empty_;                           // every outer coordinate received is emitted
};

}  // namespace compute

void register_compute(Registry& r) {
  r.add<compute::Alu>("alu");
  r.add<compute::Reduce>("reduce");
  r.add<compute::Spacc1>("spacc1");
  r.add<compute::Spacc2>("spacc2");
}

}  // namespace fastsim
