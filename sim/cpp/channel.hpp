// Channels (bounded FIFOs between two nodes) and output ports (the C++ twin of sim/channel.py).
//
// Python's channel holds three deques: `toks` (tokens in flight), `times` (the cycle each token
// becomes visible to the consumer: push time + producer latency) and `free` (the cycle each free
// slot became free: pop time + 1; a bounded channel starts with `depth` slots free at cycle 0).
// A producer may push only while a slot is free, and fires no earlier than the slot's free time:
// that is back-pressure. An unbounded channel keeps no free slots and never waits. Here the
// three live in one ring of entries (Fifo, below).
//
// A node's output port is the Channel itself when the stream has one consumer, a FanOut when it
// has several (the node fills one staging port, copied to every consumer FIFO after its
// activation) and a FanOut with no consumers when nobody reads the stream (a NullPort: pushes
// vanish at the flush).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <cstdlib>
#include <new>
#include <stdexcept>

#include "ring.hpp"
#include "tokens.hpp"

namespace fastsim {

class Node;

/// The most tokens a fan-out producer emits per activation (sim/channel.py STAGE).
constexpr size_t STAGE = 256;

/// The tokens of an unbounded FIFO, in blocks (Python's deque is a list of blocks too): its
/// memory follows the tokens it holds now, not the most it ever held. Compact, since an
/// unbounded channel may hold a large part of a run's stream for a while (the fully fused
/// element-sparse BigBird head at S = 1024 keeps 2.3 * 10^8 tokens in flight at its peak):
///
/// - a token's cycle is a 16-bit offset from its block's first cycle (a token whose offset
///   does not fit starts a new block);
/// - a stream of ints that fit in 32 bits (coordinates, refs, control tokens) keeps 4 bytes per
///   token ("narrow" blocks); a value or a larger int switches the FIFO to 8-byte tokens for
///   good ("wide" blocks: a val stream after its first value).
///
/// So 6 bytes per token in a crd or ref stream, 10 in a val stream, in 24 KB blocks recycled
/// through a small pool.
class TokenBlocks {
 public:
  TokenBlocks() = default;
  TokenBlocks(const TokenBlocks&) = delete;
  TokenBlocks& operator=(const TokenBlocks&) = delete;
  ~TokenBlocks() { clear(); }

  FASTSIM_INLINE size_t size() const { return n_; }
  FASTSIM_INLINE Token front() const { return blocks_.front()->tok(head_off_); }
  FASTSIM_INLINE i64 front_time() const { return blocks_.front()->time(head_off_); }
  FASTSIM_INLINE i64 back_time() const {
    const Block* b = blocks_.back();
    return b->time(b->fill - 1);
  }
  FASTSIM_INLINE void push(Token x, i64 at) {
    bool narrow = !wide_ && x.is_int() && x.as_int() == i64(int32_t(x.as_int()));
    Block* b = blocks_.empty() ? nullptr : blocks_.back();
    if (!b || b->fill == b->end || b->narrow != narrow || at < b->base ||
        at - b->base > 0xFFFF)
      b = start_block(x, at);
    b->put(x, uint16_t(at - b->base));
    ++n_;
  }
  FASTSIM_INLINE Token pop() {
    Block* b = blocks_.front();
    Token x = b->tok(head_off_);
    ++head_off_;
    --n_;
    if (head_off_ == b->fill) release_head();
    return x;
  }
  /// The k-th token from the head and its cycle (k < size(); walks the blocks: for small k).
  Token tok(size_t k) const {
    const Block* b;
    uint32_t i;
    locate(k, b, i);
    return b->tok(i);
  }
  i64 time(size_t k) const {
    const Block* b;
    uint32_t i;
    locate(k, b, i);
    return b->time(i);
  }
  /// f(token, cycle) for every token, from the head.
  template <class F>
  void for_each(F&& f) const {
    uint32_t i = head_off_;
    for (size_t j = 0; j < blocks_.size(); ++j, i = 0)
      for (const Block* b = blocks_[j]; i < b->fill; ++i) f(b->tok(i), b->time(i));
  }
  void clear() {
    while (!blocks_.empty()) recycle(blocks_.pop());
    head_off_ = 0;
    n_ = 0;
  }

 private:
  static constexpr size_t BYTES = 24576;                  // of tokens and offsets per block
  static constexpr uint32_t NARROW = BYTES / 6;           // 4 + 2 bytes per token
  static constexpr uint32_t WIDE = BYTES / 10;            // 8 + 2 bytes per token
  struct Block {
    i64 base;          // the cycle offsets count from
    uint32_t fill;     // tokens written
    uint32_t end;      // tokens it holds when full
    bool narrow;       // 32-bit tokens
    // tokens, then their 16-bit offsets, typed (a store through a char array could alias
    // anything and force the hot loops to reload their state after every push)
    union {
      struct {
        int32_t tok[NARROW];
        uint16_t off[NARROW];
      } n;
      struct {
        u64 tok[WIDE];
        uint16_t off[WIDE];
      } w;
    };
    FASTSIM_INLINE uint16_t* offs() { return narrow ? n.off : w.off; }
    FASTSIM_INLINE const uint16_t* offs() const { return narrow ? n.off : w.off; }
    FASTSIM_INLINE Token tok(uint32_t i) const {
      return narrow ? Token::of_int(n.tok[i]) : Token::from_bits(w.tok[i]);
    }
    FASTSIM_INLINE i64 time(uint32_t i) const { return base + i64(offs()[i]); }
    FASTSIM_INLINE void put(Token x, uint16_t off) {
      if (narrow) {
        n.tok[fill] = int32_t(x.as_int());
        n.off[fill] = off;
      } else {
        w.tok[fill] = x.bits();
        w.off[fill] = off;
      }
      ++fill;
    }
  };
  void locate(size_t k, const Block*& b, uint32_t& i) const {
    size_t idx = head_off_ + k;
    for (size_t j = 0;; ++j) {
      b = blocks_[j];
      if (idx < b->fill) {
        i = uint32_t(idx);
        return;
      }
      idx -= b->fill;
    }
  }
  [[gnu::noinline]] Block* start_block(Token x, i64 at) {
    if (!blocks_.empty()) blocks_.back()->end = blocks_.back()->fill;   // closed
    if (!wide_ && !(x.is_int() && x.as_int() == i64(int32_t(x.as_int())))) wide_ = true;
    Block* b = pool().empty() ? static_cast<Block*>(std::malloc(sizeof(Block))) : pool().pop();
    if (!b) throw std::bad_alloc();
    b->base = at;
    b->fill = 0;
    b->narrow = !wide_;
    b->end = b->narrow ? NARROW : WIDE;
    blocks_.push(b);
    return b;
  }
  [[gnu::noinline]] void release_head() {
    recycle(blocks_.pop());
    head_off_ = 0;
  }
  static void recycle(Block* b) {
    if (pool().size() < 64) pool().push(b);
    else std::free(b);
  }
  static Ring<Block*>& pool() {
    static Ring<Block*> p;   // the engine is single-threaded (it holds the GIL)
    return p;
  }

  Ring<Block*> blocks_;
  uint32_t head_off_ = 0;
  size_t n_ = 0;
  bool wide_ = false;   // a token did not fit in 32 bits: 8-byte tokens from then on
};

/// The FIFO of a channel (or of a fan-out's staging port): tokens with the cycle each becomes
/// visible and, when bounded, the free slots with the cycle each became free (Python keeps
/// these in three deques: toks, times, free).
///
/// A bounded FIFO of depth d is one ring of exactly d entries: the tokens [head, head + n),
/// then the free slots, each holding the cycle it became free. Popping a token frees its
/// entry, which is then the last free slot in ring order (d entries: head + d wraps to it); a
/// firing reads the first free slot's cycle (Firing::slot) and pushes its token into it. So a
/// token's whole life is two writes of one 16-byte entry, and the state is (head, n). An
/// unbounded FIFO never waits for a slot; its tokens live in TokenBlocks.
class Fifo {
 public:
  explicit Fifo(i64 depth) : bounded_(depth >= 0) {
    if (bounded_) {
      cap_ = lim_ = size_t(depth);
      // zeroed: every slot free at cycle 0 (calloc gets zero pages without writing them)
      e_ = static_cast<Entry*>(std::calloc(std::max<size_t>(cap_, 1), sizeof(Entry)));
      if (!e_) throw std::bad_alloc();
    }
  }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;
  ~Fifo() { std::free(e_); }

  FASTSIM_INLINE bool bounded() const { return bounded_; }
  FASTSIM_INLINE size_t size() const { return bounded_ ? n_ : u_.size(); }
  FASTSIM_INLINE bool empty() const { return size() == 0; }
  /// The head token and the cycle it becomes visible (not empty()).
  FASTSIM_INLINE Token front() const {
    return bounded_ ? Token::from_bits(e_[head_].a) : u_.front();
  }
  FASTSIM_INLINE i64 front_time() const { return bounded_ ? e_[head_].b : u_.front_time(); }
  /// The k-th token from the head and the cycle it becomes visible (k < size()).
  FASTSIM_INLINE Token tok(size_t k) const {
    return bounded_ ? Token::from_bits(e_[wrap(head_ + k)].a) : u_.tok(k);
  }
  FASTSIM_INLINE i64 time(size_t k) const {
    return bounded_ ? e_[wrap(head_ + k)].b : u_.time(k);
  }
  FASTSIM_INLINE i64 back_time() const {
    return bounded_ ? e_[wrap(head_ + n_ - 1)].b : u_.back_time();
  }
  /// f(token, cycle) for every token, from the head.
  template <class F>
  void for_each(F&& f) const {
    if (!bounded_) return u_.for_each(f);
    for (size_t k = 0; k < n_; ++k) f(tok(k), time(k));
  }

  /// An entry of a bounded ring: a token and its visible cycle, or a free slot.
  struct Entry {
    u64 a;   // a token's bits, or a free slot's free cycle
    i64 b;   // the token's visible cycle
  };

  // ---- the producer's side ------------------------------------------------------------------
  /// True when a token can be pushed now (a free slot, or unbounded).
  FASTSIM_INLINE bool room() const { return !bounded_ || n_ < lim_; }
  /// Free slots (bounded FIFOs) and the cycle the j-th of them became free.
  FASTSIM_INLINE size_t free_count() const { return lim_ - n_; }
  FASTSIM_INLINE i64 free_time(size_t j) const {
    if (n_ + j >= filled_) fill_(fill_ctx_, n_ + j + 1);
    return i64(e_[wrap(head_ + n_ + j)].a);
  }
  /// Push a token visible at cycle `at` into the first free slot (bounded: room() must hold),
  /// or at the end.
  FASTSIM_INLINE void push(Token x, i64 at) {
    if (!bounded_) return u_.push(x, at);
    if (n_ >= lim_) full();
    e_[wrap(head_ + n_)] = Entry{x.bits(), at};
    ++n_;
  }

  // ---- the consumer's side ------------------------------------------------------------------
  /// Pop the head in a firing at cycle f: its slot frees at f + 1.
  FASTSIM_INLINE Token pop(i64 f) {
    if (!bounded_) return u_.pop();
    Entry& h = e_[head_];
    Token x = Token::from_bits(h.a);
    h.a = u64(f + 1);   // the entry is now the last free slot
    head_ = wrap(head_ + 1);
    --n_;
    return x;
  }

  // ---- staging (FanOut) ---------------------------------------------------------------------
  /// Empty a staging FIFO and give it `k` free slots whose free cycles `fill(ctx, m)` writes
  /// (merge_free) when the first m are needed: a fan-out computes them lazily, as its producer
  /// takes them, instead of all STAGE of them every activation.
  using Fill = void (*)(void* ctx, size_t m);
  void reset_lazy(size_t k, Fill fill, void* ctx) {
    clear();
    if (!bounded_) return;
    if (k > cap_) full();
    lim_ = k;
    filled_ = 0;
    fill_ = fill;
    fill_ctx_ = ctx;
  }
  /// Staging slots [from, to) take consumer `c`'s free slots' cycles where later than theirs
  /// (`first`: in any case); an unbounded consumer's slots are free at 0.
  void merge_free(const Fifo& c, size_t from, size_t to, bool first) {
    size_t i = c.bounded_ ? c.wrap(c.head_ + c.n_ + from) : 0;
    for (size_t j = from; j < to; ++j) {
      i64 s = 0;
      if (c.bounded_) {
        s = i64(c.e_[i].a);
        i = i + 1 == c.cap_ ? 0 : i + 1;
      }
      if (first || s > i64(e_[j].a)) e_[j].a = u64(s);
    }
  }
  /// A staging FIFO's tokens, all in its ring's first size() entries (it is emptied to the
  /// ring's start before each activation); bounded only.
  const Entry* staged() const { return e_; }
  FASTSIM_INLINE size_t filled() const { return filled_; }
  FASTSIM_INLINE void set_filled(size_t m) { filled_ = m; }
  /// Empty a staging FIFO (reset() gives it its free slots before the next activation).
  void clear() {
    u_.clear();
    head_ = n_ = 0;
    lim_ = 0;
  }

 private:
  friend class Appender;
  friend class Reader;
  FASTSIM_INLINE size_t wrap(size_t i) const { return i >= cap_ ? i - cap_ : i; }
  [[noreturn, gnu::noinline]] static void full() {
    throw std::logic_error("push into a full bounded channel (primitive bug)");
  }

  Entry* e_ = nullptr;                 // bounded: the ring
  size_t cap_ = 0, lim_ = 0;           // bounded: entries; slots usable (a staging port: fewer)
  size_t filled_ = ~size_t(0);         // staging: slots whose free cycle is written so far
  Fill fill_ = nullptr;
  void* fill_ctx_ = nullptr;
  size_t head_ = 0, n_ = 0;            // bounded: first token, tokens
  TokenBlocks u_;                      // unbounded: the tokens
  bool bounded_;
};

class Port;
class Channel;

/// Consecutive free slots of a bounded ring (Appender::slots): the pushes of a hot loop
/// without the Appender's per-token checks (wrap, limit, lazy free cycles); Appender::pushed(k)
/// then commits the k tokens pushed. Firing::slot and Firing::emit take it in place of the
/// port.
class Slots {
 public:
  FASTSIM_INLINE explicit Slots(Fifo::Entry* p) : p_(p) {}
  FASTSIM_INLINE bool bounded() const { return true; }
  /// The cycle the slot the next push fills became free.
  FASTSIM_INLINE i64 free_time() const { return i64(p_->a); }
  FASTSIM_INLINE void push(Token x, i64 at) { *p_++ = Fifo::Entry{x.bits(), at}; }

 private:
  Fifo::Entry* p_;
};

/// Consecutive tokens of a bounded ring (Reader::tokens): the pops of a hot loop without the
/// Reader's per-token checks; Reader::popped(k) then commits the k tokens popped. Firing::after
/// and Firing::pop take it in place of the channel.
class Tokens {
 public:
  FASTSIM_INLINE explicit Tokens(Fifo::Entry* p) : p_(p) {}
  FASTSIM_INLINE Token head() const { return Token::from_bits(p_->a); }
  FASTSIM_INLINE i64 head_time() const { return p_->b; }
  /// Pop the head in a firing at cycle f: its slot frees at f + 1.
  FASTSIM_INLINE Token pop(i64 f) {
    Token x = Token::from_bits(p_->a);
    p_->a = u64(f + 1);
    ++p_;
    return x;
  }

 private:
  Fifo::Entry* p_;
};

/// A run of pushes into a FIFO with its write position in registers (the FIFO's own fields
/// could be aliased by the entries it writes, forcing a memory round trip per token). While
/// an Appender is alive, push into that FIFO only through it; it commits when it goes out of
/// scope. Firing::slot and Firing::emit take it in place of the port.
class Appender {
 public:
  FASTSIM_INLINE explicit Appender(Port& p);
  FASTSIM_INLINE ~Appender();
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  /// True when a token can be pushed now (a free slot, or unbounded).
  FASTSIM_INLINE bool room() const { return left_ > 0; }
  FASTSIM_INLINE bool bounded() const { return bounded_; }
  /// The cycle the slot the next push fills became free (bounded; room() must hold).
  FASTSIM_INLINE i64 free_time() {
    if (pushed_ >= filled_) refill();
    return i64(e_[pos_].a);
  }
  FASTSIM_INLINE void push(Token x, i64 at) {
    if (!bounded_) return q_.u_.push(x, at);
    e_[pos_] = Fifo::Entry{x.bits(), at};
    pos_ = pos_ + 1 == cap_ ? 0 : pos_ + 1;
    --left_;
    ++pushed_;
  }

  /// How many of the next pushes fill consecutive entries of a bounded ring whose free cycles
  /// are known (no wrap, no refill between them); 0 when unbounded.
  FASTSIM_INLINE size_t run() const {
    if (!bounded_) return 0;
    size_t k = std::min(left_, cap_ - pos_);
    if (filled_ == ~size_t(0)) return k;
    return filled_ > pushed_ ? std::min(k, filled_ - pushed_) : 0;   // (a staging port)
  }
  /// A cursor at the next slot (for up to run() pushes); pushed(k) commits the k it pushed.
  FASTSIM_INLINE Slots slots() const { return Slots(e_ + pos_); }
  FASTSIM_INLINE void pushed(size_t k) {
    pos_ += k;
    if (pos_ == cap_) pos_ = 0;
    left_ -= k;
    pushed_ += k;
  }

 private:
  FASTSIM_INLINE void refill() { filled_ = refill(q_, pushed_); }
  // A fan-out's staging slots, lazily (Fifo::reset_lazy); returns how many slots from the
  // Appender's start have a known free cycle. Static: the Appender's address never escapes
  // into a call, so its fields can stay in registers.
  [[gnu::noinline]] static size_t refill(Fifo& q, size_t pushed) {
    q.fill_(q.fill_ctx_, q.n_ + pushed + 1);
    return q.filled_ - q.n_;
  }
  Fifo& q_;
  Fifo::Entry* e_;
  size_t cap_, pos_, left_, pushed_ = 0;
  size_t filled_;   // slots from pos_'s start whose free cycle is known
  bool bounded_;
};

/// A run of pops from a channel with its read position in registers (see Appender). While a
/// Reader is alive, read that channel only through it; it commits when it goes out of scope.
/// Firing::after and Firing::pop take it in place of the channel.
class Reader {
 public:
  FASTSIM_INLINE explicit Reader(Channel& c);
  FASTSIM_INLINE ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  FASTSIM_INLINE bool empty() const { return bounded_ ? n_ == 0 : q_.u_.size() == 0; }
  FASTSIM_INLINE size_t size() const { return bounded_ ? n_ : q_.u_.size(); }
  FASTSIM_INLINE Token head() const {
    return bounded_ ? Token::from_bits(e_[head_].a) : q_.u_.front();
  }
  FASTSIM_INLINE i64 head_time() const { return bounded_ ? e_[head_].b : q_.u_.front_time(); }
  /// Pop the head in a firing at cycle f: its slot frees at f + 1.
  FASTSIM_INLINE Token pop(i64 f) {
    if (!bounded_) return q_.u_.pop();
    Fifo::Entry& h = e_[head_];
    Token x = Token::from_bits(h.a);
    h.a = u64(f + 1);
    head_ = head_ + 1 == cap_ ? 0 : head_ + 1;
    --n_;
    return x;
  }
  /// How many tokens from the head lie consecutively in a bounded ring (0 when unbounded).
  FASTSIM_INLINE size_t run() const { return bounded_ ? std::min(n_, cap_ - head_) : 0; }
  /// A cursor at the head (for up to run() pops); popped(k) commits the k it popped.
  FASTSIM_INLINE Tokens tokens() const { return Tokens(e_ + head_); }
  FASTSIM_INLINE void popped(size_t k) {
    head_ += k;
    if (head_ == cap_) head_ = 0;
    n_ -= k;
  }

 private:
  Fifo& q_;
  Fifo::Entry* e_;
  size_t cap_, head_, n_;
  bool bounded_;
};

/// Read-only views of a FIFO's tokens and times by position (Python: `c.toks[k]`,
/// `c.times[k]`), kept for primitives written against the earlier deque-like members.
class TokView {
 public:
  explicit TokView(const Fifo& q) : q_(q) {}
  FASTSIM_INLINE Token operator[](size_t k) const { return q_.tok(k); }
  FASTSIM_INLINE Token front() const { return q_.front(); }
  FASTSIM_INLINE size_t size() const { return q_.size(); }
  FASTSIM_INLINE bool empty() const { return q_.empty(); }

 private:
  const Fifo& q_;
};

class TimeView {
 public:
  explicit TimeView(const Fifo& q) : q_(q) {}
  FASTSIM_INLINE i64 operator[](size_t k) const { return q_.time(k); }
  FASTSIM_INLINE i64 front() const { return q_.front_time(); }
  FASTSIM_INLINE i64 back() const { return q_.back_time(); }
  FASTSIM_INLINE size_t size() const { return q_.size(); }

 private:
  const Fifo& q_;
};

/// What a node pushes into: a Channel, or a FanOut staging port.
class Port {
 public:
  explicit Port(i64 depth) : q(depth), toks(q), times(q), bounded(depth >= 0) {}
  virtual ~Port() = default;
  Fifo q;
  TokView toks;
  TimeView times;
  const bool bounded;

  /// True when a token can be pushed now (a free slot, or unbounded).
  FASTSIM_INLINE bool room() const { return q.room(); }
  /// Push a token visible at cycle `at` (into the slot the firing took: see node.hpp).
  FASTSIM_INLINE void push(Token x, i64 at) { q.push(x, at); }
};

class Channel : public Port {
 public:
  std::string name;
  std::string kind;       // crd, ref, val, repsig (only reports read it)
  i64 depth;              // -1: unbounded
  Node* src = nullptr;    // producer
  Node* dst = nullptr;    // consumer
  i64 pushed = 0;         // tokens moved over this channel (token-hops)
  int index = 0;          // position in the graph's channel list

  Channel(std::string name_, std::string kind_, i64 depth_)
      : Port(depth_), name(std::move(name_)), kind(std::move(kind_)), depth(depth_) {}
  FASTSIM_INLINE size_t size() const { return q.size(); }
  FASTSIM_INLINE bool empty() const { return q.empty(); }
  FASTSIM_INLINE Token head() const { return q.front(); }
  FASTSIM_INLINE i64 head_time() const { return q.front_time(); }
  /// Pop the head in a firing at cycle f: its slot frees at f + 1.
  FASTSIM_INLINE Token pop(i64 f) { return q.pop(f); }
};

FASTSIM_INLINE Appender::Appender(Port& p)
    : q_(p.q), e_(p.q.e_), cap_(p.q.cap_), pos_(p.q.bounded_ ? p.q.wrap(p.q.head_ + p.q.n_) : 0),
      left_(p.q.bounded_ ? p.q.lim_ - p.q.n_ : ~size_t(0)),
      filled_(p.q.filled_ == ~size_t(0) ? ~size_t(0) : p.q.filled_ - p.q.n_),
      bounded_(p.q.bounded_) {}
FASTSIM_INLINE Appender::~Appender() { q_.n_ += pushed_; }

FASTSIM_INLINE Reader::Reader(Channel& c)
    : q_(c.q), e_(c.q.e_), cap_(c.q.cap_), head_(c.q.head_), n_(c.q.n_),
      bounded_(c.q.bounded_) {}
FASTSIM_INLINE Reader::~Reader() {
  if (bounded_) {
    q_.head_ = head_;
    q_.n_ = n_;
  }
}

/// The output port of a stream read by several consumers (or by none: a null port).
class FanOut : public Port {
 public:
  std::vector<Channel*> chans;

  explicit FanOut(std::vector<Channel*> cs)
      : Port(std::any_of(cs.begin(), cs.end(), [](Channel* c) { return c->bounded; })
                 ? i64(STAGE) : -1),
        chans(std::move(cs)) {}
  /// Before the producer runs: slot j is free when it is free in every consumer FIFO (at most
  /// STAGE slots per activation; unbounded consumers never hold a slot back).
  void prepare() {
    if (!bounded) {
      q.clear();
      return;
    }
    size_t n = STAGE;
    for (Channel* c : chans)
      if (c->bounded) n = std::min(n, c->q.free_count());
    q.reset_lazy(n, &FanOut::fill, this);
  }
  /// The free cycles of staging slots [filled, m) (at least; in chunks): slot j's is the latest
  /// of slot j's in every bounded consumer.
  static void fill(void* self, size_t m) {
    auto* f = static_cast<FanOut*>(self);
    size_t from = f->q.filled();
    size_t to = std::min(std::max(m, from + 32), f->q.free_count() + f->q.size());
    bool first = true;
    for (Channel* c : f->chans) {
      f->q.merge_free(c->q, from, to, first);
      first = false;
    }
    f->q.set_filled(to);
  }
  /// After the producer ran: copy the staged tokens into every consumer FIFO (each takes one
  /// of its free slots per token: the ones prepare() counted), a run of consecutive slots at a
  /// time where the staging port is bounded.
  void flush() {
    size_t m = q.size();
    if (!m) return;
    for (Channel* c : chans) {
      Appender into(*c);
      if (!q.bounded()) {
        q.for_each([&into](Token x, i64 at) { into.push(x, at); });
        continue;
      }
      const Fifo::Entry* e = q.staged();
      for (size_t k = 0; k < m;) {
        size_t r = std::min(into.run(), m - k);
        if (r > 1) {
          Slots s = into.slots();
          for (size_t end = k + r; k < end; ++k) s.push(Token::from_bits(e[k].a), e[k].b);
          into.pushed(r);
        } else {
          into.push(Token::from_bits(e[k].a), e[k].b);
          ++k;
        }
      }
    }
    q.clear();
  }
};

}  // namespace fastsim
