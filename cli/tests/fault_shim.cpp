// cli/tests/fault_shim.cpp — an LD_PRELOAD library for the fault tests (fault_test.sh): while the environment
// variable POSENC_FAULT_PTHREAD_CREATE is set, every pthread_create fails with EAGAIN, as it does when the
// system's thread or memory limits are reached. posenc must then compute with the threads it has, never exit.
#include <pthread.h>

#include <cerrno>
#include <cstdlib>

#include <dlfcn.h>

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  if (std::getenv("POSENC_FAULT_PTHREAD_CREATE") != nullptr) return EAGAIN;
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_create"));
  return real(thread, attr, start, arg);
}
