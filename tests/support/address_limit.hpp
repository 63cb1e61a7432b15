#pragma once
// Runs a check in a forked child whose address space is capped a little above its current size,
// so that starting more than a couple of threads (8 MiB stacks) fails: how the tests reach the
// thread pools' start failures. POSIX only; the sanitizers' shadow memory needs the address
// space, so callers skip under them (RESILIN_TEST_ADDRESS_LIMIT is 0 there).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RESILIN_TEST_ADDRESS_LIMIT 0
#else
#define RESILIN_TEST_ADDRESS_LIMIT 1
#endif

namespace resilin_test {

/// check() in a child limited to its current address space plus extra_mib; returns its result
/// (an exit code: 0 for success, whatever check returns), 3 when the limit could not be set, or
/// -1 when the child died from a signal (std::terminate's abort).
template <class Check>
int under_address_limit(long extra_mib, Check&& check) {
  std::fflush(nullptr);
  pid_t const pid = fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    long kb = -1;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmSize:", 0) == 0) kb = std::stol(line.substr(7));
    rlimit rl{};
    rl.rlim_cur = rl.rlim_max = static_cast<rlim_t>(kb + extra_mib * 1024) * 1024;
    if (kb < 0 || setrlimit(RLIMIT_AS, &rl) != 0) std::_Exit(3);
    int code = 0;
    try {
      code = check();
    } catch (...) {
      code = 2;
    }
    std::_Exit(code);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return 3;
  return WIFSIGNALED(st) ? -1 : WEXITSTATUS(st);
}

}  // namespace resilin_test
