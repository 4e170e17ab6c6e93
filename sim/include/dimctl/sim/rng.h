// Rng and Dist: the simulator's random numbers. Our own generator and transforms (not <random>'s
// distributions, whose output is implementation-defined) so a seed gives the same run on every
// compiler and library. xoshiro256** seeded through splitmix64.
#pragma once

#include <cmath>
#include <cstdint>

namespace dimctl::sim {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) {
    for (uint64_t& w : s_) w = splitmix(seed);
  }
  // A stream for (seed, a, b): independent streams per source and queue, so every policy sees
  // the same arrivals and service times (common random numbers).
  static Rng stream(uint64_t seed, uint64_t a, uint64_t b) {
    uint64_t x = seed ^ (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL);
    return Rng(splitmix(x));
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in (0, 1): never 0, so log() is finite.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Exponential and normal variates by the ziggurat method (Marsaglia and Tsang 2000): one
  // random word, a table look-up and a multiply in ~99 % of the draws, no log/exp/trig. The
  // simulator draws one or two per request; libm's log and sincos were a fifth of its time.
  double exponential(double mean) { return mean * std_exponential(); }
  double std_exponential();
  double normal();

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

// A non-negative duration distribution, in nanoseconds.
struct Dist {
  enum class Kind : uint8_t { kConstant, kExponential, kLogNormal };
  Kind kind = Kind::kConstant;
  double mean_ns = 0;
  double cv = 0;  // log-normal: coefficient of variation (stddev / mean)

  static Dist constant(double ns) { return {Kind::kConstant, ns, 0}; }
  static Dist exponential(double mean) { return {Kind::kExponential, mean, 1}; }
  static Dist lognormal(double mean, double cv) { return {Kind::kLogNormal, mean, cv}; }

  double draw(Rng& rng) const { return Sampler(*this).draw(rng); }

  // A Dist with its log-normal parameters worked out once (the engine draws millions).
  class Sampler {
   public:
    Sampler() = default;
    explicit Sampler(const Dist& d) : kind_(d.kind), mean_(d.mean_ns) {
      if (kind_ == Kind::kLogNormal) {
        // The underlying normal's parameters from the log-normal's mean and cv.
        const double s2 = std::log1p(d.cv * d.cv);
        mu_ = std::log(d.mean_ns) - s2 / 2;
        sigma_ = std::sqrt(s2);
      }
    }
    double draw(Rng& rng) const {
      switch (kind_) {
        case Kind::kConstant:
          return mean_;
        case Kind::kExponential:
          return rng.exponential(mean_);
        case Kind::kLogNormal:
          return std::exp(mu_ + sigma_ * rng.normal());
      }
      return mean_;
    }

   private:
    Kind kind_ = Kind::kConstant;
    double mean_ = 0, mu_ = 0, sigma_ = 0;
  };
};

}  // namespace dimctl::sim
