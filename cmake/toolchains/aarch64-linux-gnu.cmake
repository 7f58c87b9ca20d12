# Cross-building posenc for AArch64 Linux on an x86-64 Debian machine (scripts/aarch64.sh): Debian's
# g++-aarch64-linux-gnu, the arm64 libraries through multiarch (/usr/lib/aarch64-linux-gnu), and the programs run by
# ctest under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR, which gtest_discover_tests uses too).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# AArch64's baseline has a fused multiply-add, and GCC contracts a*b+c into one under -std=gnu++20 unless told not
# to: the tests' float32 emulations (and lib/, which says so itself) compute each operation rounded on its own.
set(CMAKE_CXX_FLAGS_INIT "-ffp-contract=off")
set(CMAKE_C_FLAGS_INIT "-ffp-contract=off")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
# pkg-config (OpenBLAS): the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# GoogleTest programs list their tests when ctest runs (under the emulator), not at build time.
set(CMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE PRE_TEST)
