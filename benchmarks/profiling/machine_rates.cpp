// posenc_profile_machine — this core's clock (a dependent integer add chain: one cycle per add) and its throughput of
// 512-bit double FMAs and double -> float conversions (12 independent register chains each, so latency does not
// bound them): the arithmetic limits quoted in reports/profiles/. x86-64 with AVX-512 only.
#include <chrono>
#include <cstdio>

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

int main() {
  constexpr long kN = 200000000;
  long x = 0;
  double t0 = now();
  for (long i = 0; i < 4 * kN; ++i) asm volatile("add $1, %0" : "+r"(x));
  const double cycle = (now() - t0) * 1e9 / (4 * kN);
  // `head` (an instruction up to its destination) into each of 12 independent registers reg0 .. reg11.
#define POSENC_REP12(head, reg)                                                                                   \
  head reg "0\n\t" head reg "1\n\t" head reg "2\n\t" head reg "3\n\t" head reg "4\n\t" head reg "5\n\t" head reg \
      "6\n\t" head reg "7\n\t" head reg "8\n\t" head reg "9\n\t" head reg "10\n\t" head reg "11\n\t"
#define POSENC_CLOBBER12 "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11"
  t0 = now();
  for (long i = 0; i < kN; ++i) asm volatile(POSENC_REP12("vfmadd231pd %%zmm30, %%zmm31, %%", "zmm")::: POSENC_CLOBBER12);
  const double fma = (now() - t0) * 1e9 / (12 * kN);
  t0 = now();
  for (long i = 0; i < kN; ++i) asm volatile(POSENC_REP12("vcvtpd2ps %%zmm30, %%", "ymm")::: POSENC_CLOBBER12);
  const double cvt = (now() - t0) * 1e9 / (12 * kN);
  std::printf("cycle %.3f ns (%.2f GHz); 512-bit FMA %.3f ns = %.2f cycles each; 512-bit vcvtpd2ps %.3f ns = %.2f cycles each\n",
              cycle, 1 / cycle, fma, fma / cycle, cvt, cvt / cycle);
}
