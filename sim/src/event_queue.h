// EventQueue: the engine's future events, a 4-ary min-heap on (time, insertion number). Ties are
// taken in insertion order, so a run is a function of its seed alone. A 4-ary heap halves the
// depth of a binary one and keeps a node's children in one cache line: the queue is about a
// third of the simulator's time.
#pragma once

#include <cstdint>
#include <vector>

namespace dimctl::sim {

class EventQueue {
 public:
  struct Node {
    int64_t t;
    uint64_t seq;
    uint64_t payload;
  };

  bool empty() const { return heap_.empty(); }
  const Node& top() const { return heap_.front(); }

  void push(int64_t t, uint64_t payload) {
    Node n{t, seq_++, payload};
    size_t i = heap_.size();
    heap_.push_back(n);
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!less(n, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = n;
  }

  Node pop() {
    const Node out = heap_.front();
    const Node last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0) return out;
    size_t i = 0;
    for (;;) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t end = first + 4 < n ? first + 4 : n;
      for (size_t c = first + 1; c < end; ++c) {
        if (less(heap_[c], heap_[best])) best = c;
      }
      if (!less(heap_[best], last)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return out;
  }

 private:
  static bool less(const Node& x, const Node& y) { return x.t != y.t ? x.t < y.t : x.seq < y.seq; }
  std::vector<Node> heap_;
  uint64_t seq_ = 0;
};

}  // namespace dimctl::sim
