// Token encoding of SAM streams (the C++ twin of sim/tokens.py).
//
// Python streams carry ints (coordinates, refs and negative control tokens), floats and b x b
// numpy blocks. Here every token is 8 bytes, whatever its stream's kind:
//
//   - a float is its IEEE double, bit for bit;
//   - an int (coordinate, ref, or control token D N Sk R) lives in a NaN pattern no arithmetic
//     produces: sign set, exponent all ones, top mantissa bits 0xE (INT_TAG), 48-bit payload;
//   - a block is an index into the run's BlockTable (blocks.hpp), under BLOCK_TAG.
//
// Arithmetic only makes NaNs with a zero payload or the payload of a NaN operand, so a data NaN
// can collide with a tag only if an input value or constant carries that exact payload; the
// builder refuses such inputs (module.cpp) and the Python engine runs them.
#pragma once

#include <cstdint>
#include <cstring>

/// Forced inlining for the few-instruction helpers of the hot loops (token tests, FIFO pushes
/// and pops, the timing steps of a firing): GCC's inliner gives up on them inside large run()
/// functions, and a call per token costs more than the helper itself.
#define FASTSIM_INLINE inline __attribute__((always_inline))

namespace fastsim {

using i64 = int64_t;
using u64 = uint64_t;

// Control tokens, as in sim/tokens.py: D = -1, N = -2, Sk/e = -3 - k - e * 2**24, R = 0. The
// primitives read and make tokens through the named helpers below, never the encoding itself.
constexpr i64 D = -1;
constexpr i64 N = -2;
constexpr i64 S0 = -3;
constexpr i64 R = 0;

namespace encoding {
constexpr i64 EB = i64(1) << 24;   // emptiness unit of a stop token
constexpr i64 MASK = EB - 1;
}  // namespace encoding

/// The token of stop level k with emptiness e (0: it closes an existing fiber).
constexpr i64 stop(i64 k, i64 e = 0) { return -3 - k - e * encoding::EB; }
/// Whether int token t is a stop Sk (of any level and emptiness).
constexpr bool is_stop(i64 t) { return t <= S0; }
/// The level k of stop token Sk.
constexpr i64 level(i64 t) { return (-3 - t) & encoding::MASK; }
/// The emptiness e of a stop token (0: closes an existing fiber; e >= 1: bare).
constexpr i64 empt(i64 t) { return (-3 - t) >> 24; }
/// Whether t is a bare stop: one standing for a fiber that does not exist.
constexpr bool is_bare(i64 t) { return is_stop(t) && empt(t) > 0; }
/// Whether int token t is a coordinate or ref (not a control token).
constexpr bool is_crd(i64 t) { return t >= 0; }
/// Whether int token t is an element of a fiber: a coordinate or ref, or N (an empty one).
constexpr bool is_element(i64 t) { return t >= 0 || t == N; }
/// Whether stops a and b have the same level (whatever their emptiness).
constexpr bool same_level(i64 a, i64 b) { return level(a) == level(b); }
/// The stop one level up, closing an existing fiber: Sk -> S(k+1) (a scanner's or repeat's
/// input stop merged with the close of the fiber before it).
constexpr i64 stop_above(i64 t) { return stop(level(t) + 1); }
/// The bare stop one level up: Sk/e -> S(k+1)/(e+1) (an input stop with no fiber before it).
constexpr i64 bare_stop_above(i64 t) { return stop(level(t) + 1, empt(t) + 1); }

class Token {
 public:
  static constexpr u64 TAG_SHIFT = 48;
  static constexpr u64 INT_TAG = 0xFFFE;
  static constexpr u64 BLOCK_TAG = 0xFFFD;
  static constexpr u64 PAYLOAD = (u64(1) << TAG_SHIFT) - 1;
  static constexpr i64 INT_MAX_ = (i64(1) << 47) - 1;   // ints beyond +-2**47 do not fit

  Token() : bits_(INT_TAG << TAG_SHIFT) {}   // the int 0
  FASTSIM_INLINE static Token of_int(i64 x) { return Token((INT_TAG << TAG_SHIFT) | (u64(x) & PAYLOAD)); }
  FASTSIM_INLINE static Token of_float(double v) {
    u64 b;
    std::memcpy(&b, &v, sizeof b);
    return Token(b);
  }
  FASTSIM_INLINE static Token of_block(u64 id) { return Token((BLOCK_TAG << TAG_SHIFT) | id); }
  static Token from_bits(u64 b) { return Token(b); }
  /// Whether a double's bits would read as a tagged token (the builder refuses such data).
  static bool collides(double v) {
    u64 b;
    std::memcpy(&b, &v, sizeof b);
    u64 tag = b >> TAG_SHIFT;
    return tag == INT_TAG || tag == BLOCK_TAG;
  }

  FASTSIM_INLINE bool is_int() const { return (bits_ >> TAG_SHIFT) == INT_TAG; }
  FASTSIM_INLINE bool is_block() const { return (bits_ >> TAG_SHIFT) == BLOCK_TAG; }
  FASTSIM_INLINE bool is_float() const { return !is_int() && !is_block(); }
  /// A value (Python: `x.__class__ is not int`): a float or a block.
  FASTSIM_INLINE bool is_value() const { return !is_int(); }
  /// A stop Sk (Python: `is_stop(x)`).
  FASTSIM_INLINE bool is_stop() const { return is_int() && fastsim::is_stop(as_int()); }
  FASTSIM_INLINE i64 as_int() const { return i64(bits_ << 16) >> 16; }   // sign-extend the 48-bit payload
  FASTSIM_INLINE double as_float() const {
    double v;
    std::memcpy(&v, &bits_, sizeof v);
    return v;
  }
  FASTSIM_INLINE u64 block_id() const { return bits_ & PAYLOAD; }
  u64 bits() const { return bits_; }

  // Python's `x == y` on control tokens and ints (`t is D`, `x == D`): equal ints.
  FASTSIM_INLINE bool is(i64 c) const { return bits_ == of_int(c).bits_; }
  bool operator==(const Token& o) const { return bits_ == o.bits_; }
  bool operator!=(const Token& o) const { return bits_ != o.bits_; }

 private:
  explicit Token(u64 b) : bits_(b) {}
  u64 bits_;
};

/// True when a and b are stops of the same level, or the same D / N (sim.tokens.same_stop).
inline bool same_stop(Token a, Token b) {
  if (!a.is_int() || !b.is_int()) return false;
  i64 x = a.as_int(), y = b.as_int();
  if (is_stop(x) && is_stop(y)) return same_level(x, y);
  return x == y;
}

}  // namespace fastsim
