// The ziggurat tables and the slow paths of Rng::std_exponential() and Rng::normal()
// (G. Marsaglia, W. W. Tsang, "The Ziggurat Method for Generating Random Variables", Journal of
// Statistical Software 5(8), 2000; 256 layers for the exponential, 128 for the normal). The
// layer index and the value come from different bits of one 64-bit draw, so they are not
// correlated as in the paper's 32-bit version.
#include <cmath>
#include <cstdint>

#include "dimctl/sim/rng.h"

namespace dimctl::sim {

namespace {

struct ExpTables {
  uint32_t k[256];
  double w[256], f[256];
  ExpTables() {
    const double m2 = 4294967296.0;  // 2^32
    double de = 7.697117470131487, te = de;
    const double ve = 3.949659822581572e-3;
    const double q = ve / std::exp(-de);
    k[0] = static_cast<uint32_t>((de / q) * m2);
    k[1] = 0;
    w[0] = q / m2;
    w[255] = de / m2;
    f[0] = 1.0;
    f[255] = std::exp(-de);
    for (int i = 254; i >= 1; --i) {
      de = -std::log(ve / de + std::exp(-de));
      k[i + 1] = static_cast<uint32_t>((de / te) * m2);
      te = de;
      f[i] = std::exp(-de);
      w[i] = de / m2;
    }
  }
};

struct NormTables {
  uint32_t k[128];
  double w[128], f[128];
  NormTables() {
    const double m1 = 2147483648.0;  // 2^31
    double dn = 3.442619855899, tn = dn;
    const double vn = 9.91256303526217e-3;
    const double q = vn / std::exp(-0.5 * dn * dn);
    k[0] = static_cast<uint32_t>((dn / q) * m1);
    k[1] = 0;
    w[0] = q / m1;
    w[127] = dn / m1;
    f[0] = 1.0;
    f[127] = std::exp(-0.5 * dn * dn);
    for (int i = 126; i >= 1; --i) {
      dn = std::sqrt(-2.0 * std::log(vn / dn + std::exp(-0.5 * dn * dn)));
      k[i + 1] = static_cast<uint32_t>((dn / tn) * m1);
      tn = dn;
      f[i] = std::exp(-0.5 * dn * dn);
      w[i] = dn / m1;
    }
  }
};

const ExpTables kExp;
const NormTables kNorm;

}  // namespace

double Rng::std_exponential() {
  for (;;) {
    const uint64_t r = next();
    const auto j = static_cast<uint32_t>(r >> 32);
    const auto i = static_cast<size_t>(r & 255);
    const double x = j * kExp.w[i];
    if (j < kExp.k[i]) return x;
    if (i == 0) return 7.697117470131487 + std_exponential();  // the tail is memoryless
    if (kExp.f[i] + uniform() * (kExp.f[i - 1] - kExp.f[i]) < std::exp(-x)) return x;
  }
}

double Rng::normal() {
  for (;;) {
    const uint64_t r = next();
    const auto h = static_cast<int32_t>(static_cast<uint32_t>(r >> 32));
    const auto i = static_cast<size_t>(r & 127);
    const double x = h * kNorm.w[i];
    const uint32_t mag =
        h < 0 ? static_cast<uint32_t>(-(static_cast<int64_t>(h))) : static_cast<uint32_t>(h);
    if (mag < kNorm.k[i]) return x;
    if (i == 0) {
      // The tail beyond r = 3.4426...: Marsaglia's method.
      const double tail = 3.442619855899;
      double a, b;
      do {
        a = -std::log(uniform()) / tail;
        b = -std::log(uniform());
      } while (b + b < a * a);
      return h > 0 ? tail + a : -tail - a;
    }
    if (kNorm.f[i] + uniform() * (kNorm.f[i - 1] - kNorm.f[i]) < std::exp(-0.5 * x * x)) return x;
  }
}

}  // namespace dimctl::sim
