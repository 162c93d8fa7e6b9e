// A growable FIFO of trivially copyable items in a power-of-two ring (Python: collections.deque).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "tokens.hpp"

namespace fastsim {

template <class T>
class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() { std::free(data_); }

  FASTSIM_INLINE size_t size() const { return n_; }
  FASTSIM_INLINE bool empty() const { return n_ == 0; }
  FASTSIM_INLINE T& front() { return data_[head_]; }
  FASTSIM_INLINE const T& front() const { return data_[head_]; }
  FASTSIM_INLINE const T& back() const { return data_[(head_ + n_ - 1) & mask_]; }
  /// The k-th item from the front (k < size()).
  FASTSIM_INLINE const T& operator[](size_t k) const { return data_[(head_ + k) & mask_]; }

  FASTSIM_INLINE void push(T v) {
    if (n_ == cap_) grow();
    data_[(head_ + n_) & mask_] = v;
    ++n_;
  }
  FASTSIM_INLINE T pop() {
    T v = data_[head_];
    head_ = (head_ + 1) & mask_;
    --n_;
    return v;
  }
  /// Drop the first k items.
  FASTSIM_INLINE void drop(size_t k) {
    head_ = (head_ + k) & mask_;
    n_ -= k;
  }
  void clear() {
    head_ = 0;
    n_ = 0;
  }
  /// Release the storage once the ring is empty and large (a drained unbounded channel).
  void shrink_if_empty() {
    if (n_ == 0 && cap_ > 4096) {
      std::free(data_);
      data_ = nullptr;
      cap_ = mask_ = head_ = 0;
    }
  }
  void reserve(size_t k) {
    while (cap_ < k) grow();
  }

 private:
  [[gnu::noinline]] void grow() {
    size_t cap = cap_ ? cap_ * 2 : 8;
    T* d = static_cast<T*>(std::malloc(cap * sizeof(T)));
    if (!d) throw std::bad_alloc();
    for (size_t i = 0; i < n_; ++i) d[i] = data_[(head_ + i) & mask_];
    std::free(data_);
    data_ = d;
    cap_ = cap;
    mask_ = cap - 1;
    head_ = 0;
  }

  T* data_ = nullptr;
  size_t cap_ = 0, mask_ = 0, head_ = 0, n_ = 0;
};

}  // namespace fastsim
