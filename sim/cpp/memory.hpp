// Off-chip bandwidth shared by the nodes of one graph: the calendar of sim/memory.py.
//
// Time is cut into windows of `window` cycles, each moving `bandwidth * window` bytes. A request
// at cycle f is served at f when the window of f still has room for it, else at the start of the
// last window holding its bytes (the first later window with room, or, for a request larger than
// a window, the last of the consecutive windows it is split over). Requests come in the engine's
// order (first come, first served). Bytes are doubles and every sum is done in Python's order,
// so the calendar is the Python one bit for bit.
//
// A calendar no request can ever find full keeps nothing. Each node that takes bandwidth says,
// when it is made, the most bytes one firing takes (user()); a node fires at most once a cycle
// (ii >= 1), once a firing, at strictly increasing cycles, so the requests made in one window
// sum to at most window * (the users' bytes per firing). When that is at most half a window's
// bytes, no request ever waits (every window's sum, exact in doubles for whole bytes, stays
// below the capacity), and take() returns the cycle asked without keeping the calendar: the
// SAM-like settings (`memory.bandwidth=1000000000`) and sim.memory.unlimited.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "tokens.hpp"

namespace fastsim {

class Memory {
 public:
  Memory(double bandwidth, i64 window) : window_(window), cap_(bandwidth * double(window)) {}

  /// A node that takes at most `bytes` per firing, firing every `ii` cycles at most, uses the
  /// calendar (before the run; see the top of this file).
  void user(double bytes, i64 ii) {
    if (ii < 1 || !(bytes >= 0)) rate_ = INFINITY;   // (no bound: keep the calendar)
    else rate_ += bytes;
    never_full_ = double(window_) * rate_ <= cap_ * 0.5;
  }

  /// Reserve `n` bytes requested at cycle `f`; returns the cycle they are served (>= f).
  FASTSIM_INLINE i64 take(i64 f, double n) {
    if (never_full_) return f;
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
    low_ = w;
    if (w > base_) {   // the dense windows below w
      size_t d = size_t(std::min<i64>(w - base_, i64(used_.size() - off_)));
      off_ += d;
      base_ += i64(d);
      if (off_ == used_.size()) {   // all of them: start afresh where the next request is
        used_.clear();
        off_ = 0;
        base_ = w;
      } else if (off_ > 4096 && off_ * 2 > used_.size()) {   // compact (amortized O(1))
        used_.erase(used_.begin(), used_.begin() + off_);
        off_ = 0;
      }
    }
    for (auto it = far_.begin(); it != far_.end();)
      it = it->first < w ? far_.erase(it) : std::next(it);
  }

  double capacity() const { return cap_; }

 private:
  static i64 floordiv(i64 a, i64 b) {
    i64 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
  // The bytes used in window w (0 for a window never used). Windows [base_, base_ + live) are
  // a dense array (requests come near each other: the nodes' clocks differ by what their
  // channels hold); a window far beyond it (a node running far ahead, huge ii) is kept in a
  // map, as Python's dict keeps every window, so the array never spans a gap. Windows below
  // `low_` are history.
  FASTSIM_INLINE double& at(i64 w) {
    size_t k = off_ + size_t(w - base_);
    if (w < base_ || k >= used_.size()) return extend(w);
    return used_[k];
  }
  [[gnu::noinline]] double& extend(i64 w) {
    if (w < low_)
      throw std::logic_error("memory request in a forgotten window (engine bug)");
    size_t live = used_.size() - off_;
    if (live == 0 && far_.find(w) == far_.end()) {   // nothing dense: start here
      used_.clear();
      off_ = 0;
      base_ = w;
    }
    if (w >= base_ && w - base_ < i64(used_.size() - off_) + GAP) {
      size_t from = used_.size();
      used_.resize(off_ + size_t(w - base_) + 1, 0.0);
      if (!far_.empty()) {   // windows the array now covers move in from the map
        for (size_t k = from; k < used_.size(); ++k) {
          auto it = far_.find(base_ + i64(k - off_));
          if (it != far_.end()) {
            used_[k] = it->second;
            far_.erase(it);
          }
        }
      }
      return used_[off_ + size_t(w - base_)];
    }
    return far_[w];
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
  double rate_ = 0;              // the users' bytes per firing, summed (user())
  bool never_full_ = true;       // no users yet
  i64 w_ = 0, lo_ = 0;           // the window of the last request and its first cycle
  static constexpr i64 GAP = 1 << 16;   // the furthest the dense array grows in one step
  i64 low_ = 0;                  // windows below are forgotten
  i64 base_ = 0;                 // the window of used_[off_]
  size_t off_ = 0;               // entries of used_ before base_ (forgotten, not yet erased)
  std::vector<double> used_;     // bytes used per window from base_ on
  std::unordered_map<i64, double> far_;   // windows outside the dense array
};

}  // namespace fastsim
