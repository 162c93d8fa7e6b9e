// Channels (bounded FIFOs between two nodes) and output ports (the C++ twin of sim/channel.py).
//
// Python's channel holds three deques: `toks` (tokens in flight), `times` (the cycle each token
// becomes visible to the consumer: push time + producer latency) and `free` (the cycle each free
// slot became free: pop time + 1; a bounded channel starts with `depth` slots free at cycle 0).
// A producer may push only while a slot is free, and fires no earlier than the slot's free time:
// that is back-pressure. An unbounded channel keeps no free slots and never waits. Here a
// bounded channel's three live in one ring of entries, an unbounded channel's tokens and cycles
// in compact segments (Fifo, Chain, below).
//
// A node's output port is the Channel itself when the stream has one consumer, a FanOut when it
// has several (the node fills one staging port, copied to every bounded consumer FIFO after
// its activation; the unbounded consumers share one chain of segments, each reading at its own
// position, which the producer writes directly when no consumer is bounded) and a FanOut with
// no consumers when nobody reads the stream (a NullPort: pushes vanish at the flush).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

#include "ring.hpp"
#include "tokens.hpp"

namespace fastsim {

class Node;

/// The most tokens a fan-out producer emits per activation (sim/channel.py STAGE).
constexpr size_t STAGE = 256;

/// An entry of a bounded ring: a token and its visible cycle, or a free slot.
struct Entry {
  u64 a;   // a token's bits, or a free slot's free cycle
  i64 b;   // the token's visible cycle
};

/// Entries per chunk of a deep ring (Fifo, DEEP).
constexpr size_t CHUNK = 2048;

/// The tokens of an unbounded stream, in fixed segments of SEG tokens linked in order, so that
/// the cursors of the hot loops (Reader::tokens, Appender::slots: a run of consecutive tokens)
/// work on unbounded channels as on rings.
///
/// Compact: a token is its 8 bytes and its visible cycle a 32-bit offset from the segment's
/// base (the last cycle of the segment before it, 0 for the first), 12 bytes a token. A cycle
/// whose offset does not fit (4.29 G cycles after the base, or before it) is kept whole in the
/// segment's `wide` array, allocated the first time it is needed, its offset marked WIDE: the
/// same cycles whatever the run's length, at 8 more bytes a token only in such a segment.
///
/// One chain holds a stream once, however many consumers read it: every consumer FIFO of an
/// unbounded stream reads the same chain at its own position (Fifo, SEGS), and a segment is
/// released when the last of them (the slowest) passes its end, so the memory follows the
/// tokens between the slowest reader and the writer (plus one segment), not the most ever held
/// nor one copy per consumer. The tail segment is allocated as soon as the one before it
/// fills, so the write position is always inside a segment. Readers never write a segment.
/// Segments are recycled through a small pool.
struct Seg {
  static constexpr size_t SEG = 2048;   // tokens per segment (24 KB)
  static constexpr uint32_t WIDE = ~uint32_t(0);
  u64 tok[SEG];      // the tokens' bits
  uint32_t dt[SEG];  // visible cycle - base, or WIDE (the cycle is in wide[])
  i64 base;
  i64* wide;         // nullptr until a cycle's offset does not fit
  Seg* next;         // the segment after this one (allocated when this one fills)
  uint32_t left;     // readers that have not passed this segment's end

  /// Token i's visible cycle.
  FASTSIM_INLINE i64 time(size_t i) const {
    uint32_t d = dt[i];
    return d != WIDE ? base + i64(d) : wide[i];
  }
  /// Store token i: its bits and visible cycle.
  FASTSIM_INLINE void put(size_t i, Token x, i64 at) {
    tok[i] = x.bits();
    u64 d = u64(at) - u64(base);
    if (d < WIDE) dt[i] = uint32_t(d);
    else put_wide(i, at);
  }
  /// Token i's cycle does not fit an offset: keep it whole.
  [[gnu::noinline]] void put_wide(size_t i, i64 at) {
    if (!wide) {
      wide = static_cast<i64*>(std::malloc(SEG * sizeof(i64)));
      if (!wide) throw std::bad_alloc();
    }
    wide[i] = at;
    dt[i] = WIDE;
  }
};

class Chain {
 public:
  static constexpr size_t SEG = Seg::SEG;

  /// Segments held by chains now and at most since reset (tests: a stream read by k consumers
  /// holds its segments once).
  struct Stats {
    size_t live = 0, peak = 0;
  };
  static Stats& stats() {
    static Stats st;
    return st;
  }

  /// A chain read by `readers` consumer FIFOs (0: nobody reads it; clear() empties it).
  explicit Chain(uint32_t readers) : readers_(readers) {}
  Chain(const Chain&) = delete;
  Chain& operator=(const Chain&) = delete;
  ~Chain() { clear(); }

  /// Tokens ever pushed (a reader holds those it has not popped).
  FASTSIM_INLINE u64 pushed_total() const { return pushed_; }
  /// The tail segment and the write position in it, allocating the first segment.
  FASTSIM_INLINE Seg* tail_seg() {
    if (!tail_) first();
    return tail_;
  }
  FASTSIM_INLINE size_t tail() const { return tail_pos_; }
  /// The oldest segment not yet passed by every reader (where a reader that has not read
  /// anything yet starts), allocating the first.
  FASTSIM_INLINE Seg* head_seg() {
    if (!tail_) first();
    return head_;
  }
  FASTSIM_INLINE void push(Token x, i64 at) {
    tail_seg()->put(tail_pos_, x, at);
    ++pushed_;
    if (++tail_pos_ == SEG) grow();
  }
  /// k tokens were pushed through a cursor (they fill the tail segment at most to its end).
  FASTSIM_INLINE void pushed(size_t k) {
    pushed_ += k;
    tail_pos_ += k;
    if (tail_pos_ == SEG) grow();
  }
  /// The last token's visible cycle (pushed_total() > 0): a new tail's base is that cycle.
  FASTSIM_INLINE i64 back_time() const {
    return tail_pos_ ? tail_->time(tail_pos_ - 1) : tail_->base;
  }
  /// A reader moved past the end of `s` (the next segment exists: see grow): release the
  /// segments every reader has passed. Returns the next segment.
  [[gnu::noinline]] Seg* passed(Seg* s) {
    Seg* n = s->next;
    if (--s->left == 0) {
      while (head_ != tail_ && head_->left == 0) {
        Seg* h = head_;
        head_ = h->next;
        recycle(h);
      }
    }
    return n;
  }
  /// Forget every token (a chain nobody reads: a null port's).
  void clear() {
    for (Seg* s = head_; s;) {
      Seg* n = s->next;
      recycle(s);
      s = n;
    }
    head_ = tail_ = nullptr;
    tail_pos_ = 0;
    pushed_ = 0;
  }

 private:
  [[gnu::noinline]] void first() { head_ = tail_ = take(readers_, 0); }
  /// The tail segment filled: chain a new one, based at its last cycle.
  [[gnu::noinline]] void grow() {
    Seg* s = take(readers_, tail_->time(SEG - 1));
    tail_->next = s;
    tail_ = s;
    tail_pos_ = 0;
  }
  static Seg* take(uint32_t readers, i64 base) {
    Seg* s;
    if (!pool().empty()) {
      s = pool().pop();
    } else {
      s = static_cast<Seg*>(std::malloc(sizeof(Seg)));
      if (!s) throw std::bad_alloc();
      s->wide = nullptr;
    }
    s->base = base;
    s->next = nullptr;
    s->left = readers;
    Stats& st = stats();
    st.peak = std::max(st.peak, ++st.live);
    return s;
  }
  static void recycle(Seg* s) {
    --stats().live;
    std::free(s->wide);
    s->wide = nullptr;
    if (pool().size() < 256) pool().push(s);
    else std::free(s);
  }
  static Ring<Seg*>& pool() {
    static Ring<Seg*> p;   // the engine is single-threaded (it holds the GIL)
    return p;
  }

  Seg* head_ = nullptr;   // the oldest segment some reader has not passed
  Seg* tail_ = nullptr;   // the segment being written
  size_t tail_pos_ = 0;
  u64 pushed_ = 0;
  uint32_t readers_;
};

/// A consumer's position in a Chain: the segment and index of its next token, and how many
/// tokens it has popped (it holds pushed_total() minus that).
struct ChainReader {
  std::shared_ptr<Chain> chain;
  Seg* seg = nullptr;   // nullptr: nothing read yet (the chain's first segment)
  size_t pos = 0;
  u64 popped = 0;

  FASTSIM_INLINE size_t size() const { return size_t(chain->pushed_total() - popped); }
  FASTSIM_INLINE Seg* head_seg() {
    if (!seg) seg = chain->head_seg();
    return seg;
  }
  /// The k-th unread token and its visible cycle (k < size()).
  Token tok(size_t k) const {
    size_t i;
    const Seg* s = locate(k, i);
    return Token::from_bits(s->tok[i]);
  }
  i64 time(size_t k) const {
    size_t i;
    const Seg* s = locate(k, i);
    return s->time(i);
  }
  FASTSIM_INLINE Token pop() {
    Token x = Token::from_bits(head_seg()->tok[pos]);
    ++popped;
    if (++pos == Chain::SEG) {
      seg = chain->passed(seg);
      pos = 0;
    }
    return x;
  }
  template <class F>
  void for_each(F&& f) const {
    size_t n = size();
    if (!n) return;
    const Seg* s = seg ? seg : chain->head_seg();
    for (size_t k = 0, i = pos; k < n; ++k) {
      f(Token::from_bits(s->tok[i]), s->time(i));
      if (++i == Chain::SEG) s = s->next, i = 0;
    }
  }

 private:
  const Seg* locate(size_t k, size_t& i) const {
    i = pos + k;
    const Seg* s = seg ? seg : chain->head_seg();
    for (; i >= Chain::SEG; i -= Chain::SEG) s = s->next;
    return s;
  }
};

/// The two layouts of a FIFO's tokens: a ring (or a deep ring's chunk) of entries, or an
/// unbounded chain's segments. Readers, Appenders and cursors take the layout as a template
/// parameter, so a hot loop compiled for one has no per-token test of it; MIXED: a Reader or
/// Appender that tests it per token (a loop over channels of both layouts takes no cursor).
enum class Layout : uint8_t { RING, SEG, MIXED };
/// A layout as a type, to pick a cursor at compile time: `reader.tokens(At<Layout::SEG>{})`.
template <Layout L>
using At = std::integral_constant<Layout, L>;

/// The layout every channel of a loop shares, or MIXED.
template <class... C>
FASTSIM_INLINE Layout common_layout(const C&... c) {
  Layout ls[] = {c.layout()...};
  for (Layout l : ls)
    if (l != ls[0]) return Layout::MIXED;
  return ls[0];
}
/// f(At<RING>) or f(At<SEG>) (l is not MIXED): a cursor loop written once, compiled for each
/// layout, the layout resolved once per run of tokens instead of once per token.
template <class F>
FASTSIM_INLINE auto on_layout(Layout l, F&& f) {
  return l == Layout::RING ? f(At<Layout::RING>{}) : f(At<Layout::SEG>{});
}

/// The FIFO of a channel (or of a fan-out's staging port): tokens with the cycle each becomes
/// visible and, when bounded, the free slots with the cycle each became free (Python keeps
/// these in three deques: toks, times, free).
///
/// A bounded FIFO of depth d is one ring of exactly d entries: the tokens [head, head + n),
/// then the free slots, each holding the cycle it became free. Popping a token frees its
/// entry, which is then the last free slot in ring order (d entries: head + d wraps to it); a
/// firing reads the first free slot's cycle (Firing::slot) and pushes its token into it. So a
/// token's whole life is two writes of one 16-byte entry, and the state is (head, n).
///
/// A ring deeper than RING_MAX entries is the same ring in chunks of CHUNK entries, allocated
/// (zeroed: free at cycle 0) as the ring first reaches them, so a deep channel costs the slots
/// the run used, not its depth. An unbounded FIFO never waits for a slot; its tokens live in a
/// compact Chain, which several consumer FIFOs may share (share()). The Reader's and
/// Appender's cursors (a run of consecutive tokens) work on all three: at the end of a ring,
/// chunk or segment they wrap to the next. Rings and chunks are one layout of the cursors
/// (Layout::RING), segments the other (Layout::SEG).
class Fifo {
 public:
  /// SINK: a null port's (nobody reads it), which fits either layout, so a node with an unread
  /// output runs on the layout of its other channels: a RING Appender writes it as a ring of
  /// STAGE entries all free at cycle 0 (rezeroed as it wraps), keeping nothing; a SEG one
  /// writes its chain, emptied after the activation (FanOut::flush).
  enum Mode : uint8_t { RING, DEEP, SEGS, SINK };
  static constexpr size_t RING_MAX = 65536;
  static constexpr i64 SINK_DEPTH = -2;   // Fifo(SINK_DEPTH): a null port's

  explicit Fifo(i64 depth)
      : bounded_(depth >= 0),
        mode_(depth == SINK_DEPTH ? SINK : depth < 0 ? SEGS
              : size_t(depth) > RING_MAX ? DEEP : RING) {
    if (bounded_) cap_ = lim_ = size_t(depth);
    else u_.chain = std::make_shared<Chain>(1);
    if (mode_ == SINK) cap_ = STAGE;
    if (mode_ == RING || mode_ == SINK) {
      // zeroed: every slot free at cycle 0 (calloc gets zero pages without writing them)
      e_ = static_cast<Entry*>(std::calloc(std::max<size_t>(cap_, 1), sizeof(Entry)));
      if (!e_) throw std::bad_alloc();
    }
  }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;
  ~Fifo() {
    std::free(e_);
    for (Entry* c : chunks_) std::free(c);
  }

  FASTSIM_INLINE bool bounded() const { return bounded_; }
  FASTSIM_INLINE Layout layout() const { return mode_ == SEGS ? Layout::SEG : Layout::RING; }
  FASTSIM_INLINE bool sink() const { return mode_ == SINK; }
  FASTSIM_INLINE size_t size() const { return bounded_ ? n_ : u_.size(); }
  FASTSIM_INLINE bool empty() const { return size() == 0; }
  /// The head token and the cycle it becomes visible (not empty()).
  FASTSIM_INLINE Token front() const { return tok(0); }
  FASTSIM_INLINE i64 front_time() const { return time(0); }
  /// The k-th token from the head and the cycle it becomes visible (k < size()).
  FASTSIM_INLINE Token tok(size_t k) const {
    return bounded_ ? Token::from_bits(at(wrap(head_ + k)).a) : u_.tok(k);
  }
  FASTSIM_INLINE i64 time(size_t k) const {
    return bounded_ ? at(wrap(head_ + k)).b : u_.time(k);
  }
  FASTSIM_INLINE i64 back_time() const {
    return bounded_ ? time(size() - 1) : u_.chain->back_time();
  }
  /// f(token, cycle) for every token, from the head.
  template <class F>
  void for_each(F&& f) const {
    if (!bounded_) return u_.for_each(f);
    for (size_t k = 0; k < n_; ++k) f(tok(k), time(k));
  }


  // ---- the producer's side ------------------------------------------------------------------
  /// True when a token can be pushed now (a free slot, or unbounded).
  FASTSIM_INLINE bool room() const { return !bounded_ || n_ < lim_; }
  /// Free slots (bounded FIFOs) and the cycle the j-th of them became free.
  FASTSIM_INLINE size_t free_count() const { return lim_ - n_; }
  FASTSIM_INLINE i64 free_time(size_t j) const {
    if (n_ + j >= filled_) fill_(fill_ctx_, n_ + j + 1);
    return i64(at(wrap(head_ + n_ + j)).a);
  }
  /// Push a token visible at cycle `at` into the first free slot (bounded: room() must hold),
  /// or at the end.
  FASTSIM_INLINE void push(Token x, i64 at) {
    if (!bounded_) return u_.chain->push(x, at);
    if (n_ >= lim_) full();
    slot(wrap(head_ + n_)) = Entry{x.bits(), at};
    ++n_;
  }

  // ---- the consumer's side ------------------------------------------------------------------
  /// Pop the head in a firing at cycle f: its slot frees at f + 1.
  FASTSIM_INLINE Token pop(i64 f) {
    if (!bounded_) return u_.pop();
    Entry& h = slot(head_);
    Token x = Token::from_bits(h.a);
    h.a = u64(f + 1);   // the entry is now the last free slot
    head_ = wrap(head_ + 1);
    --n_;
    return x;
  }

  // ---- sharing (FanOut) --------------------------------------------------------------------
  /// Read (or, `writer`, write) `c` instead of this unbounded FIFO's own chain: the consumer
  /// FIFOs of one stream share one chain (FanOut). Before anything is pushed.
  void share(std::shared_ptr<Chain> c) {
    if (bounded_ || u_.chain->pushed_total()) throw std::logic_error("sharing a used FIFO");
    u_.chain = std::move(c);
  }
  FASTSIM_INLINE u64 pushed_total() const { return bounded_ ? 0 : u_.chain->pushed_total(); }

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
        s = i64(c.mode_ == RING ? c.e_[i].a : c.at(i).a);
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
    if (!bounded_) {
      u_.chain->clear();
      u_.seg = nullptr;
      u_.pos = 0;
      u_.popped = 0;
    }
    if (mode_ == SINK) return;   // (head_: where the next Appender writes)
    head_ = n_ = 0;
    lim_ = 0;
  }

 private:
  template <Layout>
  friend class BasicAppender;
  template <Layout>
  friend class BasicReader;
  FASTSIM_INLINE size_t wrap(size_t i) const { return i >= cap_ ? i - cap_ : i; }
  /// Entry `pos` of a bounded ring (a deep ring's entries not reached yet are free at 0).
  FASTSIM_INLINE const Entry& at(size_t pos) const {
    if (mode_ == RING) return e_[pos];
    size_t c = pos / CHUNK;
    return c < chunks_.size() ? chunks_[c][pos % CHUNK] : zero();
  }
  FASTSIM_INLINE Entry& slot(size_t pos) {
    if (mode_ == RING) return e_[pos];
    return chunk(pos - pos % CHUNK)[pos % CHUNK];
  }
  /// A deep ring's chunk starting at entry `base` (a multiple of CHUNK), allocated in order.
  Entry* chunk(size_t base) {
    size_t c = base / CHUNK;
    while (chunks_.size() <= c) {
      auto* p = static_cast<Entry*>(std::calloc(CHUNK, sizeof(Entry)));
      if (!p) throw std::bad_alloc();
      chunks_.push_back(p);
    }
    return chunks_[c];
  }
  /// Where a deep ring's chunk at `base` ends, counted from its start.
  FASTSIM_INLINE size_t chunk_end(size_t base) const {
    return std::min(CHUNK, cap_ - base);
  }
  static const Entry& zero() {
    static const Entry z{0, 0};
    return z;
  }
  [[noreturn, gnu::noinline]] static void full() {
    throw std::logic_error("push into a full bounded channel (primitive bug)");
  }

  Entry* e_ = nullptr;                 // RING: the ring
  std::vector<Entry*> chunks_;         // DEEP: the ring's chunks allocated so far
  size_t cap_ = 0, lim_ = 0;           // bounded: entries; slots usable (a staging port: fewer)
  size_t filled_ = ~size_t(0);         // staging: slots whose free cycle is written so far
  Fill fill_ = nullptr;
  void* fill_ctx_ = nullptr;
  size_t head_ = 0, n_ = 0;            // bounded: first token, tokens
  ChainReader u_;                      // unbounded: the tokens (a chain maybe shared)
  bool bounded_;
  Mode mode_;
};

class Port;
class Channel;

/// Entries [base, base + end) of a deep ring: one chunk.
struct Span {
  Entry* e;
  size_t base, end;
};

/// Consecutive free slots of a FIFO (Appender::slots): the pushes of a hot loop without the
/// Appender's per-token checks (wrap, limit, lazy free cycles, layout); Appender::pushed(k)
/// then commits the k tokens pushed. Firing::slot and Firing::emit take it in place of the
/// port. A ring's slots hold the cycle they became free; an unbounded chain's are free at
/// cycle 0 (Firing::slot waits for nothing).
template <Layout L>
class Slots;

template <>
class Slots<Layout::RING> {
 public:
  FASTSIM_INLINE explicit Slots(Entry* p) : p_(p) {}
  /// The cycle the slot the next push fills became free.
  FASTSIM_INLINE i64 free_time() const { return i64(p_->a); }
  FASTSIM_INLINE void push(Token x, i64 at) { *p_++ = Entry{x.bits(), at}; }

 private:
  Entry* p_;
};

template <>
class Slots<Layout::SEG> {
 public:
  FASTSIM_INLINE Slots(Seg* s, size_t i) : s_(s), tok_(s->tok + i), dt_(s->dt + i), base_(s->base) {}
  FASTSIM_INLINE void push(Token x, i64 at) {
    *tok_ = x.bits();
    u64 d = u64(at) - u64(base_);
    if (d < Seg::WIDE) *dt_ = uint32_t(d);
    else s_->put_wide(size_t(tok_ - s_->tok), at);
    ++tok_;
    ++dt_;
  }

 private:
  Seg* s_;
  u64* tok_;
  uint32_t* dt_;
  i64 base_;   // (a copy: the token stores could alias the segment's)
};

/// Consecutive tokens of a FIFO (Reader::tokens): the pops of a hot loop without the Reader's
/// per-token checks; Reader::popped(k) then commits the k tokens popped. Firing::after and
/// Firing::pop take it in place of the channel.
template <Layout L>
class Tokens;

template <>
class Tokens<Layout::RING> {
 public:
  FASTSIM_INLINE explicit Tokens(Entry* p) : p_(p) {}
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
  Entry* p_;
};

template <>
class Tokens<Layout::SEG> {
 public:
  FASTSIM_INLINE Tokens(const Seg* s, size_t i) : tok_(s->tok + i), dt_(s->dt + i), base_(s->base) {}
  FASTSIM_INLINE Token head() const { return Token::from_bits(*tok_); }
  /// (The segment holds no cycle kept whole: see Reader::run.)
  FASTSIM_INLINE i64 head_time() const { return base_ + i64(*dt_); }
  /// Pop the head (an unbounded FIFO frees no slot; other consumers of its chain may still
  /// read the token).
  FASTSIM_INLINE Token pop(i64) {
    Token x = Token::from_bits(*tok_);
    ++tok_;
    ++dt_;
    return x;
  }

 private:
  const u64* tok_;
  const uint32_t* dt_;
  i64 base_;
};

/// A run of pushes into a FIFO with its write position in registers (the FIFO's own fields
/// could be aliased by the entries it writes, forcing a memory round trip per token). While
/// an Appender is alive, push into that FIFO only through it; it commits when it goes out of
/// scope. Firing::slot and Firing::emit take it in place of the port. A bounded FIFO is one
/// ring, an unbounded one a chain of segments: either way the next pushes fill consecutive
/// slots up to the ring's (segment's) end, where wrap() moves on. The FIFO's layout is L
/// (Appender: MIXED, either, tested per push).
template <Layout L>
class BasicAppender {
 public:
  FASTSIM_INLINE explicit BasicAppender(Port& p);
  FASTSIM_INLINE ~BasicAppender();
  BasicAppender(const BasicAppender&) = delete;
  BasicAppender& operator=(const BasicAppender&) = delete;

  /// True when a token can be pushed now (a free slot, or unbounded: SEG, always).
  FASTSIM_INLINE bool room() const {
    if constexpr (L == Layout::SEG) return true;
    else return left_ > 0;
  }
  FASTSIM_INLINE bool bounded() const {
    if constexpr (L == Layout::MIXED) return mode_ != Fifo::SEGS;
    else return L == Layout::RING;
  }
  FASTSIM_INLINE Layout layout() const { return bounded() ? Layout::RING : Layout::SEG; }
  /// The cycle the slot the next push fills became free (bounded; room() must hold).
  FASTSIM_INLINE i64 free_time() {
    if (pushed_ >= filled_) refill();
    return i64(e_[pos_].a);
  }
  FASTSIM_INLINE void push(Token x, i64 at) {
    if (!bounded()) s_->put(pos_, x, at);
    else e_[pos_] = Entry{x.bits(), at};
    if constexpr (L != Layout::SEG) --left_;   // (SEG: no limit to count down)
    ++pushed_;
    if (++pos_ == cap_) wrap();
  }

  /// How many of the next pushes fill consecutive slots whose free cycles are known (no
  /// wrap, no refill between them).
  FASTSIM_INLINE size_t run() const {
    if constexpr (L == Layout::SEG) return cap_ - pos_;   // (no limit, no staging)
    size_t k = std::min(left_, cap_ - pos_);
    if (filled_ == ~size_t(0)) return k;
    return filled_ > pushed_ ? std::min(k, filled_ - pushed_) : 0;   // (a staging port)
  }
  /// A cursor at the next slot (for up to run() pushes; the layout is layout()); pushed(k)
  /// commits the k it pushed.
  FASTSIM_INLINE Slots<Layout::RING> slots(At<Layout::RING>) const {
    return Slots<Layout::RING>(e_ + pos_);
  }
  FASTSIM_INLINE Slots<Layout::SEG> slots(At<Layout::SEG>) const {
    return Slots<Layout::SEG>(s_, pos_);
  }
  FASTSIM_INLINE void pushed(size_t k) {
    pos_ += k;
    if constexpr (L != Layout::SEG) left_ -= k;
    pushed_ += k;
    if (pos_ == cap_) wrap();
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
  // The write position reached the ring's end (bounded: back to its start) or the tail
  // segment's (unbounded: the pushes so far are committed and a new tail segment chained).
  // A deep ring: the next chunk (the first after the last).
  FASTSIM_INLINE void wrap() {
    pos_ = 0;
    if (!bounded()) {
      s_ = next_segment(q_, pushed_);
      pushed_ = 0;
    } else if (mode_ == Fifo::DEEP) {
      Span s = next_chunk(q_, base_ + cap_);
      e_ = s.e;
      base_ = s.base;
      cap_ = s.end;
    } else if (mode_ == Fifo::SINK) {
      std::memset(static_cast<void*>(e_), 0, cap_ * sizeof(Entry));   // free at 0 again
    }
  }
  [[gnu::noinline]] static Seg* next_segment(Fifo& q, size_t pushed) {
    q.u_.chain->pushed(pushed);
    return q.u_.chain->tail_seg();
  }
  [[gnu::noinline]] static Span next_chunk(Fifo& q, size_t base) {
    if (base == q.cap_) base = 0;
    return Span{q.chunk(base), base, q.chunk_end(base)};
  }
  Fifo& q_;
  Entry* e_ = nullptr;   // a ring (deep: its entries [base_, base_ + cap_))
  Seg* s_ = nullptr;     // unbounded: the tail segment
  size_t base_, cap_, pos_, left_, pushed_ = 0;
  size_t filled_;   // slots from pos_'s start whose free cycle is known
  Fifo::Mode mode_;
};

/// A run of pops from a channel with its read position in registers (see Appender). While a
/// Reader is alive, read that channel only through it; it commits when it goes out of scope.
/// Firing::after and Firing::pop take it in place of the channel. The FIFO's layout is L
/// (Reader: MIXED, either, tested per token).
template <Layout L>
class BasicReader {
 public:
  FASTSIM_INLINE explicit BasicReader(Channel& c);
  FASTSIM_INLINE ~BasicReader();
  BasicReader(const BasicReader&) = delete;
  BasicReader& operator=(const BasicReader&) = delete;

  FASTSIM_INLINE bool empty() const { return n_ == 0; }
  FASTSIM_INLINE size_t size() const { return n_; }
  FASTSIM_INLINE bool seg() const {
    if constexpr (L == Layout::MIXED) return mode_ == Fifo::SEGS;
    else return L == Layout::SEG;
  }
  FASTSIM_INLINE Layout layout() const { return seg() ? Layout::SEG : Layout::RING; }
  FASTSIM_INLINE Token head() const {
    return Token::from_bits(seg() ? s_->tok[head_] : e_[head_].a);
  }
  FASTSIM_INLINE i64 head_time() const { return seg() ? s_->time(head_) : e_[head_].b; }
  /// Pop the head in a firing at cycle f: its slot frees at f + 1 (unbounded: see Tokens).
  FASTSIM_INLINE Token pop(i64 f) {
    Token x;
    if (seg()) {
      x = Token::from_bits(s_->tok[head_]);
    } else {
      Entry& h = e_[head_];
      x = Token::from_bits(h.a);
      h.a = u64(f + 1);
    }
    --n_;
    if (++head_ == cap_) wrap();
    return x;
  }
  /// How many tokens from the head lie consecutively in the ring (the head segment). A
  /// segment holding a cycle kept whole (Seg::wide) is read one token at a time, so the
  /// segment cursor (Tokens<SEG>) reads every cycle as an offset, without a test.
  FASTSIM_INLINE size_t run() const {
    if (seg() && s_->wide) return std::min<size_t>(n_, 1);
    return std::min(n_, cap_ - head_);
  }
  /// A cursor at the head (for up to run() pops; the layout is layout()); popped(k) commits
  /// the k it popped.
  FASTSIM_INLINE Tokens<Layout::RING> tokens(At<Layout::RING>) const {
    return Tokens<Layout::RING>(e_ + head_);
  }
  FASTSIM_INLINE Tokens<Layout::SEG> tokens(At<Layout::SEG>) const {
    return Tokens<Layout::SEG>(s_, head_);
  }
  FASTSIM_INLINE void popped(size_t k) {
    head_ += k;
    n_ -= k;
    if (head_ == cap_) wrap();
  }

 private:
  // The read position reached the ring's end (bounded: back to its start) or the head
  // segment's (unbounded: pass it, maybe releasing it, and read the next, which exists: see
  // Chain).
  FASTSIM_INLINE void wrap() {
    head_ = 0;
    if (seg()) {
      s_ = next_segment(q_);
    } else if (mode_ == Fifo::DEEP) {
      size_t base = base_ + cap_;
      if (base == q_.cap_) base = 0;
      e_ = q_.chunk(base);
      base_ = base;
      cap_ = q_.chunk_end(base);
    }
  }
  [[gnu::noinline]] static Seg* next_segment(Fifo& q) {
    q.u_.seg = q.u_.chain->passed(q.u_.head_seg());
    return q.u_.seg;
  }
  Fifo& q_;
  Entry* e_ = nullptr;   // a ring (deep: its entries [base_, base_ + cap_))
  Seg* s_ = nullptr;     // unbounded: the head segment
  size_t base_, cap_, head_, n_;
  Fifo::Mode mode_;
};

/// A Reader and an Appender on a FIFO of either layout (the per-token test of it costs a
/// branch: hot loops take BasicReader<L> / BasicAppender<L> of the activation's layout).
using Reader = BasicReader<Layout::MIXED>;
using Appender = BasicAppender<Layout::MIXED>;

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

template <Layout L>
FASTSIM_INLINE BasicAppender<L>::BasicAppender(Port& p)
    : q_(p.q), base_(0),
      left_(p.q.bounded_ ? p.q.lim_ - p.q.n_ : ~size_t(0)),
      filled_(!p.q.bounded_ || p.q.filled_ == ~size_t(0) ? ~size_t(0) : p.q.filled_ - p.q.n_),
      mode_(p.q.mode_) {
  if (mode_ == Fifo::RING) {
    e_ = q_.e_;
    cap_ = q_.cap_;
    pos_ = q_.wrap(q_.head_ + q_.n_);
  } else if (mode_ == Fifo::SINK && L != Layout::SEG) {
    e_ = q_.e_;
    cap_ = q_.cap_;
    pos_ = q_.head_;
  } else if (mode_ == Fifo::SEGS || mode_ == Fifo::SINK) {
    s_ = q_.u_.chain->tail_seg();
    cap_ = Seg::SEG;
    pos_ = q_.u_.chain->tail();
  } else {
    size_t at = q_.wrap(q_.head_ + q_.n_);
    pos_ = at % CHUNK;
    base_ = at - pos_;
    e_ = q_.chunk(base_);
    cap_ = q_.chunk_end(base_);
  }
}
template <Layout L>
FASTSIM_INLINE BasicAppender<L>::~BasicAppender() {
  if (mode_ == Fifo::SINK && L != Layout::SEG) q_.head_ = pos_;   // (the tokens vanish)
  else if (bounded()) q_.n_ += pushed_;
  else q_.u_.chain->pushed(pushed_);
}

template <Layout L>
FASTSIM_INLINE BasicReader<L>::BasicReader(Channel& c)
    : q_(c.q), base_(0), n_(c.q.size()), mode_(c.q.mode_) {
  if (mode_ == Fifo::RING) {
    e_ = q_.e_;
    cap_ = q_.cap_;
    head_ = q_.head_;
  } else if (mode_ == Fifo::SEGS) {
    s_ = q_.u_.head_seg();
    cap_ = Seg::SEG;
    head_ = q_.u_.pos;
  } else {
    head_ = q_.head_ % CHUNK;
    base_ = q_.head_ - head_;
    e_ = q_.chunk(base_);
    cap_ = q_.chunk_end(base_);
  }
}
template <Layout L>
FASTSIM_INLINE BasicReader<L>::~BasicReader() {
  if (seg()) {
    q_.u_.popped = q_.u_.chain->pushed_total() - n_;
    q_.u_.pos = head_;
  } else {
    q_.head_ = base_ + head_;
    q_.n_ = n_;
  }
}

/// The output port of a stream read by several consumers (or by none: a null port).
///
/// Its unbounded consumers read one shared Chain, each at its own position, so the stream is
/// held once however many of them read it. When every consumer is unbounded the producer
/// writes that chain itself (no staging, nothing to copy); otherwise it fills a bounded staging
/// port whose tokens flush() copies into each bounded consumer and once into the shared chain.
class FanOut : public Port {
 public:
  std::vector<Channel*> chans;

  explicit FanOut(std::vector<Channel*> cs)
      : Port(cs.empty() ? Fifo::SINK_DEPTH
             : std::any_of(cs.begin(), cs.end(), [](Channel* c) { return c->bounded; })
                 ? i64(STAGE) : -1),
        chans(std::move(cs)) {
    std::vector<Channel*> group;   // unbounded consumers holding nothing yet
    for (Channel* c : chans) {
      if (!c->bounded && !c->q.pushed_total()) group.push_back(c);
      else copy_to_.push_back(c);   // (an unbounded consumer already fed: sim.harness)
    }
    if (group.empty()) return;
    auto chain = std::make_shared<Chain>(uint32_t(group.size()));
    for (Channel* c : group) c->q.share(chain);
    direct_ = !bounded && copy_to_.empty();
    if (direct_) q.share(chain);
    else copy_to_.push_back(group[0]);   // one copy, read by the whole group
  }
  /// Before the producer runs: slot j is free when it is free in every consumer FIFO (at most
  /// STAGE slots per activation; unbounded consumers never hold a slot back).
  void prepare() {
    if (direct_) return;
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
    if (direct_) return;
    size_t m = q.size();
    if (!m) return;
    for (Channel* c : copy_to_) {
      Appender into(*c);
      if (q.bounded()) copy(q.staged(), m, into);
      else q.for_each([&into](Token x, i64 at) { into.push(x, at); });
    }
    q.clear();
  }

 private:
  /// Copy the staged entries src[0, m) into a consumer FIFO, a run of consecutive slots at a
  /// time.
  static void copy(const Entry* src, size_t m, Appender& into) {
    for (size_t k = 0; k < m;) {
      size_t r = std::min(into.run(), m - k);
      if (r > 1) {
        on_layout(into.layout(), [&](auto l) {
          auto s = into.slots(l);
          for (size_t end = k + r; k < end; ++k) s.push(Token::from_bits(src[k].a), src[k].b);
        });
        into.pushed(r);
      } else {
        into.push(Token::from_bits(src[k].a), src[k].b);
        ++k;
      }
    }
  }

  std::vector<Channel*> copy_to_;   // the FIFOs flush() copies into
  bool direct_ = false;             // the producer writes the consumers' shared chain
};

}  // namespace fastsim
