// Conformance tests in child processes: parallel runs, and a crash (a generated kernel's
// segfault) or a hang fails one test instead of ending the whole run.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "codegen/halide/halide_aot.h"
#include "driver/conformance_internal.h"
#include "ir/error.h"

namespace orch::driver::conformance_detail {
namespace {

// A child's result travels through a pipe, read after the child exits: it must fit the pipe's
// buffer (64 KiB on Linux) or the child would block on its write forever.
constexpr size_t kMaxReason = 16 * 1024;

std::string serialize(const CaseResult& r) {
  std::string ops;
  for (const std::string& op : r.ops) ops += (ops.empty() ? "" : " ") + op;
  std::string reason =
      r.reason.size() > kMaxReason ? r.reason.substr(0, kMaxReason) + "..." : r.reason;
  return fmt::format("{} {}\n{}\n{}", static_cast<int>(r.status), r.seconds, ops, reason);
}

// The result a child wrote, or nullopt when it wrote none (it crashed before).
std::optional<CaseResult> deserialize(const std::string& name, const std::string& text) {
  size_t first = text.find('\n');
  size_t second = first == std::string::npos ? first : text.find('\n', first + 1);
  if (second == std::string::npos) return std::nullopt;
  CaseResult r;
  r.name = name;
  std::istringstream head(text.substr(0, first));
  int status = 0;
  head >> status >> r.seconds;
  r.status = static_cast<CaseStatus>(status);
  std::istringstream ops(text.substr(first + 1, second - first - 1));
  for (std::string op; ops >> op;) r.ops.push_back(op);
  r.reason = text.substr(second + 1);
  return r;
}

void write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buffer, static_cast<size_t>(n));
  }
}

struct Child {
  size_t index;  // into the test list
  int fd;        // the pipe's read end
  std::chrono::steady_clock::time_point start;
};

// Forks a child that runs `test` and writes its result to a pipe; never returns in the child.
void spawn(const std::string& test, size_t index, const ConformanceOptions& options,
           std::map<pid_t, Child>& running) {
  int fds[2];
  check(pipe2(fds, O_CLOEXEC) == 0, "pipe: {}", std::strerror(errno));
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  pid_t pid = fork();
  check(pid >= 0, "fork: {}", std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    // The default action of SIGALRM ends the process: the parent reports the timeout.
    alarm(static_cast<unsigned>(options.timeout_s));
    write_all(fds[1], serialize(run_conformance_case(test, options)));
    _exit(0);
  }
  close(fds[1]);
  running[pid] = {index, fds[0], std::chrono::steady_clock::now()};
}

// What a child that wrote no result died of.
std::string death(int status, const ConformanceOptions& options) {
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    return fmt::format("timed out after {} s", options.timeout_s);
  if (WIFSIGNALED(status))
    return fmt::format("crashed: signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("the test's process exited with code {} without a result",
                     WEXITSTATUS(status));
}

// Compiles the Halide runtime object once here, so that every forked test copies it instead of
// spending a second of LLVM on it (most of a small test's time). CPU modules only: the CUDA
// target never calls Halide (and the GPU machines' bundle stubs it out: carry_bundle.sh).
void warm_up_halide_runtime(const ConformanceOptions& options) {
  namespace fs = std::filesystem;
  fs::path base = options.temp_dir.empty() ? fs::temp_directory_path() : fs::path(options.temp_dir);
  fs::path object = base / fmt::format("orch_conformance_runtime_{}.o", getpid());
  codegen::halide_compile_runtime_object(object.string());
  fs::remove(object);
}

}  // namespace

std::vector<CaseResult> run_in_processes(const std::vector<std::string>& tests,
                                         const ConformanceOptions& options,
                                         const std::function<void(const CaseResult&)>& on_result) {
  check(options.jobs >= 1, "jobs must be at least 1, got {}", options.jobs);
  check(options.timeout_s >= 1, "the timeout must be at least 1 s, got {}", options.timeout_s);
  if (options.compiled && options.target == Target::cpu) warm_up_halide_runtime(options);
  std::vector<CaseResult> results(tests.size());
  std::map<pid_t, Child> running;
  size_t next = 0;
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() && running.size() < static_cast<size_t>(options.jobs)) {
      spawn(tests[next], next, options, running);
      ++next;
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) continue;
    check(pid > 0, "waitpid: {}", std::strerror(errno));
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    Child child = it->second;
    running.erase(it);
    std::string name = std::filesystem::path(tests[child.index]).filename().string();
    std::optional<CaseResult> result = deserialize(name, read_all(child.fd));
    close(child.fd);
    if (!result) {
      result = CaseResult{name, {}, CaseStatus::failed, death(status, options)};
      result->seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - child.start).count();
    }
    results[child.index] = *result;
    if (on_result) on_result(results[child.index]);
  }
  return results;
}

}  // namespace orch::driver::conformance_detail
