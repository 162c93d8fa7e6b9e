// Off-chip bandwidth shared by the nodes of one graph: the calendar of sim/memory.py.
//
// Time is cut into windows of `window` cycles, each moving `bandwidth * window` bytes. A request
// at cycle f is served at f when the window of f still has room for it, else at the start of the
// last window holding its bytes (the first later window with room, or, for a request larger than
// a window, the last of the consecutive windows it is split over). Requests come in the engine's
// order (first come, first served). Bytes are doubles and every sum is done in Python's order,
// so the calendar is the Python one bit for bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "tokens.hpp"

namespace fastsim {

class Memory {
 public:
  Memory(double bandwidth, i64 window) : window_(window), cap_(bandwidth * double(window)) {}

  /// Reserve `n` bytes requested at cycle `f`; returns the cycle they are served (>= f).
  FASTSIM_INLINE i64 take(i64 f, double n) {
    if (f < lo_ || f >= lo_ + window_) {   // not the window of the last request
      w_ = floordiv(f, window_);
      lo_ = w_ * window_;
    }
    double& u = at(w_);
    if (u + n <= cap_) {
      u += n;
      return f;
    }
    return spill(w_, n);
  }

  /// Drop the windows that end before cycle `f` (no request can be earlier any more).
  void forget_before(i64 f) {
    i64 w = floordiv(f, window_);
    if (w <= low_) return;
    off_ += size_t(std::min<i64>(w - low_, i64(used_.size() - off_)));
    low_ = w;
    if (off_ > 4096 && off_ * 2 > used_.size()) {   // compact now and then (amortized O(1))
      used_.erase(used_.begin(), used_.begin() + off_);
      off_ = 0;
    }
  }

  double capacity() const { return cap_; }

 private:
  static i64 floordiv(i64 a, i64 b) {
    i64 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
  // The bytes used in window w (0 for a window never used); windows below `low_` are history.
  FASTSIM_INLINE double& at(i64 w) {
    size_t k = off_ + size_t(w - low_);
    if (w < low_ || k >= used_.size()) return extend(w);
    return used_[k];
  }
  [[gnu::noinline]] double& extend(i64 w) {
    if (w < low_)
      throw std::logic_error("memory request in a forgotten window (engine bug)");
    size_t k = off_ + size_t(w - low_);
    used_.resize(k + 1, 0.0);
    return used_[k];
  }
  [[gnu::noinline]] i64 spill(i64 w, double n) {
    if (n <= cap_) {   // fits in one window: the first later one with room
      ++w;
      while (at(w) + n > cap_) ++w;
      at(w) += n;
      return w * window_;
    }
    double left = n;   // larger than a window: split, in order
    for (;; ++w) {
      double& u = at(w);
      double room = cap_ - u;
      if (room > 0) {
        double part = left > room ? room : left;
        u = u + part;
        left -= part;
        if (left <= 0) return w * window_;
      }
    }
  }

  i64 window_;
  double cap_;
  i64 w_ = 0, lo_ = 0;           // the window of the last request and its first cycle
  i64 low_ = 0;                  // the window of used_[off_]
  size_t off_ = 0;               // entries of used_ before low_ (forgotten, not yet erased)
  std::vector<double> used_;     // bytes used per window
};

}  // namespace fastsim
