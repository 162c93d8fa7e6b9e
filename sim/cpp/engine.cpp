// The engine loop: sim/engine.py's Engine.run, step for step (see engine.hpp).
#include "engine.hpp"

#include <algorithm>

namespace fastsim {

static i64 bytes_moved(const Node& n) {
  return n.rd_seg + n.rd_crd + n.rd_vals + n.wr_seg + n.wr_crd + n.wr_vals;
}

// The record sim/trace.py's Recorder.feed reads (the Python engine's TracedEngine writes the same).
void Engine::trace_activation(const Node* node, i64 fires0, i64 stall0, i64 bytes0) {
  trace_buf.push_back(node->index);
  trace_buf.push_back(node->t);
  trace_buf.push_back(node->fires - fires0);
  trace_buf.push_back(node->stall - stall0);
  trace_buf.push_back(bytes_moved(*node) - bytes0);
  for (Channel* c : node->ins) trace_buf.push_back(i64(c->size()));
  for (Channel* c : node->ochans) trace_buf.push_back(i64(c->size()));
  if (trace_buf.size() >= (size_t(1) << 16)) {
    trace(trace_buf);
    trace_buf.clear();
  }
}

void Engine::push(i64 cycle, Node* n) {
  n->queued = true;
  heap_.push_back(Entry{cycle, seq_++, n});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
}

Engine::Status Engine::run() {
  for (Node* n : nodes_) push(0, n);
  size_t remaining = 0;
  for (Node* w : writers_) remaining += !w->done;
  std::vector<size_t> pre_in, pre_out;
  const bool tracing = bool(trace);
  i64 to_tick = progress_every;   // activations until the next progress call
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Entry>());
    Node* node = heap_.back().node;
    heap_.pop_back();
    node->queued = false;
    if (node->done) continue;
    pre_in.clear();
    pre_out.clear();
    for (Channel* c : node->ins) pre_in.push_back(c->size());
    for (Channel* c : node->ochans) pre_out.push_back(c->size());
    i64 fires0 = 0, stall0 = 0, bytes0 = 0;
    if (tracing) fires0 = node->fires, stall0 = node->stall, bytes0 = bytes_moved(*node);
    for (FanOut* p : node->stages) p->prepare();
    node->wants_out = node->run();
    for (FanOut* p : node->stages) p->flush();
    ++activations;
    if (max_cycles >= 0 && node->t > max_cycles) {
      over_budget = node;
      return Status::Budget;
    }
    hooks(to_tick);
    wake_after(node, pre_in, pre_out);
    if (blocks_ && blocks_->due()) collect_blocks();
    if (tracing) trace_activation(node, fires0, stall0, bytes0);
    if (node->done && node->is_writer) {
      if (--remaining == 0) break;
    }
  }
  if (tracing && !trace_buf.empty()) trace(trace_buf);
  for (Node* w : writers_)
    if (!w->done) return Status::Deadlock;
  cycles = 0;
  for (Node* n : nodes_) cycles = std::max(cycles, n->finish());
  return Status::Done;
}

// The Python engine's hooks after an activation: progress, then the memory calendar's
// housekeeping (every 1024 activations).
void Engine::hooks(i64& to_tick) {
  bool housekeeping = !(activations & 1023);
  if (housekeeping && interrupt) interrupt();
  if (progress && --to_tick == 0) {
    to_tick = progress_every;
    progress(clock(), flops());
  }
  if (housekeeping && memory_) memory_->forget_before(earliest_firing());
}

// Wake consumers that received tokens and producers that got a slot back, in the Python order.
void Engine::wake_after(Node* node, const std::vector<size_t>& pre_in,
                        const std::vector<size_t>& pre_out) {
  for (size_t k = 0; k < node->ochans.size(); ++k) {
    Channel* c = node->ochans[k];
    if (c->size() > pre_out[k]) {
      c->pushed += i64(c->size() - pre_out[k]);
      Node* d = c->dst;
      if (d && !d->queued && !d->done) push(c->q.back_time(), d);
    }
  }
  for (size_t k = 0; k < node->ins.size(); ++k) {
    Channel* c = node->ins[k];
    if (c->size() < pre_in[k]) {
      Node* s = c->src;
      if (s && s->wants_out && !s->queued && !s->done) push(node->t, s);
    }
  }
}

i64 Engine::earliest_firing() const {
  bool any = false;
  i64 best = 0;
  for (Node* n : nodes_) {
    if (n->done) continue;
    bool counted = n->fires || n->ins.empty();
    for (size_t k = 0; !counted && k < n->ins.size(); ++k) counted = !n->ins[k]->empty();
    if (!counted) continue;
    i64 v = n->t + n->ii;
    if (!any || v < best) best = v;
    any = true;
  }
  return best;
}

i64 Engine::clock() const {
  i64 best = 0;
  for (Node* n : nodes_)
    if (n->fires && n->t > best) best = n->t;
  return best;
}

i64 Engine::flops() const {
  i64 sum = 0;
  for (Node* n : nodes_) sum += n->flops;
  return sum;
}

void Engine::collect_blocks() {
  blocks_->collect([this](auto&& mark) {
    for (Channel* c : channels_)
      c->q.for_each([&mark](Token x, i64) { mark(x); });
    for (Node* n : nodes_) n->visit_tokens(mark);
  });
}

}  // namespace fastsim
