// LatencyHistogram: log-bucketed counts of durations in ns (HDR-style): 2^kSubBits buckets per
// power of two, so a quantile is exact to 1/2^kSubBits (0.8 %) of its value; the exact count,
// sum, min and max are kept beside the buckets. Merging two histograms is adding them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace dimctl::sim {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kOctaves = 64 - kSubBits;

  LatencyHistogram() : counts_(static_cast<size_t>(kSub) * (kOctaves + 1), 0) {}

  void record(int64_t ns) {
    const uint64_t v = ns > 0 ? static_cast<uint64_t>(ns) : 0;
    ++counts_[bucket(v)];
    ++count_;
    sum_ += static_cast<double>(v);
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  void merge(const LatencyHistogram& o) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    sum_ += o.sum_;
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }

  uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  double sum() const { return sum_; }
  uint64_t max() const { return count_ ? max_ : 0; }
  uint64_t min() const { return count_ ? min_ : 0; }
  // The value at quantile q in [0, 1] (the midpoint of its bucket, clamped to [min, max]).
  double quantile(double q) const {
    if (count_ == 0) return 0;
    if (q >= 1) return static_cast<double>(max_);
    const auto rank = static_cast<uint64_t>(q * static_cast<double>(count_));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen > rank) {
        const double mid = (static_cast<double>(lower(i)) + static_cast<double>(upper(i))) / 2;
        return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
      }
    }
    return static_cast<double>(max_);
  }
  // Whether at least 100 samples lie beyond quantile q (performance-research 5.3): below that
  // a reported tail quantile is marked as not significant.
  bool significant(double q) const { return static_cast<double>(count_) * (1 - q) >= 100 - 1e-9; }

 private:
  static size_t bucket(uint64_t v) {
    if (v < kSub) return static_cast<size_t>(v);
    const int msb = 63 - __builtin_clzll(v);
    const int shift = msb - kSubBits;
    return static_cast<size_t>((shift + 1) * kSub) + ((v >> shift) & (kSub - 1));
  }
  static uint64_t lower(size_t b) {
    if (b < kSub) return b;
    const size_t shift = b / kSub - 1;
    return (uint64_t{kSub} + (b % kSub)) << shift;
  }
  static uint64_t upper(size_t b) {
    if (b < kSub) return b;
    const size_t shift = b / kSub - 1;
    return lower(b) + (uint64_t{1} << shift) - 1;
  }

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_ = 0;
};

}  // namespace dimctl::sim
