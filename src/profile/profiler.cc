#include "profile/profiler.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "codegen/dnnl/dnnl_backend.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"

namespace orch::profile {
namespace {

using Clock = std::chrono::steady_clock;

std::string clean(std::string text) {
  for (char& c : text)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return text;
}

std::string encode(const Measurement& m) {
  return fmt::format("R\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", clean(m.backend), clean(m.config),
                     m.ok ? 1 : 0, m.median_us, m.min_us, m.max_us, m.runs, m.compile_s,
                     clean(m.reason));
}

Measurement decode(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) f.push_back(field);
  f.resize(10);
  Measurement m;
  m.backend = f[1];
  m.config = f[2];
  m.ok = f[3] == "1";
  m.median_us = std::atof(f[4].c_str());
  m.min_us = std::atof(f[5].c_str());
  m.max_us = std::atof(f[6].c_str());
  m.runs = std::atoi(f[7].c_str());
  m.compile_s = std::atof(f[8].c_str());
  m.reason = f[9];
  return m;
}

void send_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(2);
    done += static_cast<size_t>(n);
  }
}

// The backends (with their configurations) a child measures `kernel` with: every accepting
// backend's, or `pinned`'s alone.
std::vector<std::pair<const codegen::Backend*, std::vector<std::string>>> measured_configs(
    const Graph& kernel, const ProfilerOptions& options, const codegen::KernelChoice* pinned) {
  std::vector<std::pair<const codegen::Backend*, std::vector<std::string>>> out;
  if (pinned != nullptr) {
    std::vector<const codegen::Backend*> all = options.backends.backends;
    if (options.backends.fallback) all.push_back(options.backends.fallback);
    for (const codegen::Backend* b : all)
      if (b->name == pinned->backend) return {{b, {pinned->config}}};
    fail("no backend '{}' to measure with", pinned->backend);
  }
  for (const codegen::Backend* b : accepting_backends(options.backends, kernel)) {
    std::vector<std::string> configs{""};
    if (b->name == "halide" && options.halide_configs > 0) {
      try {
        for (std::string& c : halide_configs(kernel, options.machine, options.halide_configs))
          configs.push_back(std::move(c));
      } catch (const std::exception&) {
        // No tile graph for this kernel: the default schedule alone.
      }
    }
    if (b->name == "dnnl")
      for (std::string& c : codegen::dnnl_configs(kernel)) configs.push_back(std::move(c));
    out.push_back({b, std::move(configs)});
  }
  return out;
}

using ConfigKey = std::pair<std::string, std::string>;  // backend, configuration

// What a kernel's earlier children settled. A child that crashes or times out in one backend
// configuration is killed with the kernel's other configurations unmeasured; a new child measures
// those. Segformer-B0 at batch 16 lost every oneDNN configuration of its stem convolution to one
// that outlasted the CPU timeout, and its modules ran the reference backend's (1.66 s).
struct Settled {
  std::set<ConfigKey> configs;  // with a result (measured, failed, crashed or timed out)
  bool measured = false;        // one of them measured ok
};

// A kernel's results so far, over its children: one, unless a child was killed in a
// configuration and a new one measures the rest.
struct KernelState {
  std::vector<Measurement> results;
  Settled settled;
  std::set<ConfigKey> announced;  // by its children ("Q" lines)

  void add(Measurement m) {
    settled.configs.insert({m.backend, m.config});
    settled.measured = settled.measured || m.ok;
    results.push_back(std::move(m));
  }
  bool unsettled() const {
    return std::any_of(announced.begin(), announced.end(),
                       [&](const ConfigKey& k) { return !settled.configs.count(k); });
  }
};

// The backend and configuration of a "Q" or "B" line: "Q\tdnnl\tconfig".
ConfigKey config_key(const std::string& line) {
  size_t tab = line.find('\t', 2);
  if (tab == std::string::npos) return {line.substr(2), ""};
  return {line.substr(2, tab - 2), line.substr(tab + 1)};
}

// The child: measure `kernel` with each accepting backend (or `pinned` alone), skipping what
// `settled` holds, report over `fd`, exit.
[[noreturn]] void child_main(int fd, const Graph& kernel, const ProfilerOptions& options,
                             const codegen::KernelChoice* pinned, const Settled& settled) {
  int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
  }
  pin_kernel_threads(options.measure.threads);
  std::vector<std::pair<const codegen::Backend*, std::vector<std::string>>> backends;
  try {
    backends = measured_configs(kernel, options, pinned);
  } catch (const std::exception& e) {
    send_all(fd, encode({.backend = "?", .reason = fmt::format("reject: {}", e.what())}));
    _exit(0);
  }
  // Announced ("Q"), so that the parent knows what a killed child left unmeasured.
  for (auto& [b, configs] : backends) {
    std::erase_if(configs, [&](const std::string& c) {
      return settled.configs.count({std::string(b->name), clean(c)}) > 0;
    });
    for (const std::string& config : configs)
      send_all(fd, fmt::format("Q\t{}\t{}\n", b->name, clean(config)));
  }
  std::vector<Tensor> inputs;
  std::vector<Tensor> reference;
  try {
    inputs = interp::random_inputs(kernel, options.measure.seed);
    send_all(fd, "I\n");
    reference = interp::interpret(kernel, inputs);
    send_all(fd, "C\n");
  } catch (const std::exception& e) {
    for (const auto& [b, configs] : backends)
      send_all(fd, encode({.backend = std::string(b->name),
                           .reason = fmt::format("interpreter: {}", e.what())}));
    _exit(0);
  }
  std::vector<PreparedKernel> prepared;
  for (const auto& [b, configs] : backends) {
    for (const std::string& config : configs) {
      send_all(fd, fmt::format("B\t{}\t{}\n", b->name, clean(config)));
      PreparedKernel p = prepare(kernel, *b, config, inputs, reference, options.measure);
      if (p.result.ok)
        prepared.push_back(std::move(p));
      else
        send_all(fd, encode(p.result));
    }
  }
  // Every generator failed: the fallback still gives the kernel a (slow) working version.
  const codegen::Backend* fallback = options.backends.fallback;
  bool fallback_tried = std::any_of(backends.begin(), backends.end(),
                                    [&](const auto& b) { return b.first == fallback; });
  if (prepared.empty() && fallback && pinned == nullptr && !fallback_tried && !settled.measured &&
      !settled.configs.count({std::string(fallback->name), ""})) {
    send_all(fd, fmt::format("Q\t{}\t\n", fallback->name));
    send_all(fd, fmt::format("B\t{}\t\n", fallback->name));
    PreparedKernel p = prepare(kernel, *fallback, "", inputs, reference, options.measure);
    if (p.result.ok)
      prepared.push_back(std::move(p));
    else
      send_all(fd, encode(p.result));
  }
  if (!prepared.empty()) {
    send_all(fd, "T\n");
    char token = 0;
    while (::read(fd, &token, 1) < 0 && errno == EINTR) {
    }
    for (PreparedKernel& p : prepared) {
      send_all(fd, fmt::format("B\t{}\t{}\n", p.result.backend, clean(p.result.config)));
      time_kernel(p, kernel, options.measure);
      send_all(fd, encode(p.result));
    }
  }
  _exit(0);
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  size_t job = 0;
  std::string buffer;
  std::optional<ConfigKey> working_on;  // the backend configuration it compiles or times
  Clock::time_point deadline;
  bool waiting_token = false;
  bool stopped = false;  // SIGSTOPped while another child times
  Clock::time_point stopped_at;
  // The CPU timeout counts from the start of the child's current phase (kPhaseTimeouts).
  double phase_cpu_s = 0;
  bool interpreting = false;  // the reference interpreter's run, which the wall deadline skips
  Clock::time_point interpret_start;
  std::string timeout;  // why it was killed, when it was
};

// CPU seconds of process `pid` (user + system, all threads); 0 when unreadable.
double cpu_seconds(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The CPU timeout catches one backend configuration that hangs or compiles for ever, so it
// counts each phase of the child apart: the reference interpreter's run, then each
// configuration's compile and check ("B" lines), then each one's timed runs. Counted over the
// whole child, it failed kernels for their size alone: Segformer-B0 at batch 16 has kernels of
// 10^11 flops (its decode head's 1x1 convolution), which the interpreter computes in minutes and
// oneDNN in about a second per run, three configurations of a few runs each; every backend of
// them timed out at 30 s, and no plan could compute the model. The trusted interpreter gets this
// multiple of the timeout.
constexpr double kInterpreterLimit = 40;

// How the reason of a child that died starts: `finish` and the watchdog write them,
// child_died reads them.
constexpr std::string_view kTimedOut = "timeout after";
constexpr std::string_view kCrashed = "crashed:";
constexpr std::string_view kExited = "worker exited";
constexpr std::string_view kDiedPrefixes[] = {kTimedOut, kCrashed, kExited};

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

}  // namespace

void profile_kernels(std::span<const Graph* const> kernels, const ProfilerOptions& options,
                     const std::function<void(size_t, std::vector<Measurement>)>& on_done,
                     std::span<const codegen::KernelChoice> pinned) {
  check(pinned.empty() || pinned.size() == kernels.size(),
        "profiler: {} pinned choices for {} kernels", pinned.size(), kernels.size());
  const int jobs = options.jobs > 0
                       ? options.jobs
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const double wall_s =
      options.wall_timeout_s > 0 ? options.wall_timeout_s : 10 * options.timeout_s;
  const auto timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wall_s));
  for (const codegen::Backend* b : options.backends.backends)
    if (b->prepare_fork != nullptr) b->prepare_fork();
  std::vector<Child> active;
  std::map<size_t, KernelState> states;  // the kernels started and not yet reported
  std::deque<size_t> restarts;           // kernels whose child was killed with configs left
  std::deque<pid_t> token_queue;
  pid_t token_holder = -1;
  size_t next = 0;

  // While one child times, the others are stopped: a sibling compiling on the same cores made
  // oneDNN's OpenMP barriers sleep whole scheduler ticks (a 1.3 us MatMul timed at 8,000 us
  // with two workers, never with one). Their deadlines move by the time they were stopped.
  auto stop_others = [&](pid_t holder) {
    for (Child& c : active) {
      if (c.pid == holder || c.stopped) continue;
      ::kill(c.pid, SIGSTOP);
      c.stopped = true;
      c.stopped_at = Clock::now();
    }
  };
  auto continue_all = [&] {
    for (Child& c : active) {
      if (!c.stopped) continue;
      ::kill(c.pid, SIGCONT);
      c.stopped = false;
      c.deadline += Clock::now() - c.stopped_at;
      c.interpret_start += Clock::now() - c.stopped_at;  // the deadline moved already
    }
  };

  auto grant = [&] {
    while (token_holder < 0 && !token_queue.empty()) {
      pid_t pid = token_queue.front();
      token_queue.pop_front();
      for (Child& c : active) {
        if (c.pid != pid) continue;
        token_holder = pid;
        c.waiting_token = false;
        c.deadline = Clock::now() + timeout;
        char token = 'G';
        if (::send(c.fd, &token, 1, MSG_NOSIGNAL) != 1) token_holder = -1;
      }
    }
    if (token_holder >= 0) stop_others(token_holder);
  };

  auto finish = [&](size_t index) {
    Child c = std::move(active[index]);
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(index));
    ::close(c.fd);
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string reason;
    if (!c.timeout.empty())
      reason = c.timeout;
    else if (WIFSIGNALED(status))
      reason = fmt::format("{} {}", kCrashed, signal_name(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      reason = fmt::format("{} with status {}", kExited, WEXITSTATUS(status));
    KernelState& state = states[c.job];
    bool restart = false;
    if (!reason.empty() && c.working_on && !state.settled.configs.count(*c.working_on)) {
      const auto& [backend, config] = *c.working_on;
      state.add({.backend = backend, .config = config, .reason = reason});
      restart = state.unsettled() ||
                (!state.settled.measured && pinned.empty() && options.backends.fallback &&
                 !state.settled.configs.count({std::string(options.backends.fallback->name), ""}));
    } else if (!reason.empty()) {
      state.add({.backend = "?", .reason = reason});
    } else if (state.results.empty()) {
      state.add({.backend = "?", .reason = "worker produced no result"});
    }
    if (token_holder == c.pid) {
      token_holder = -1;
      continue_all();
    }
    std::erase(token_queue, c.pid);
    grant();
    if (restart) {
      restarts.push_back(c.job);
      return;
    }
    on_done(c.job, std::move(state.results));
    states.erase(c.job);
  };

  auto may_start = [&] { return next < kernels.size() && Clock::now() < options.start_by; };
  while (may_start() || !restarts.empty() || !active.empty()) {
    // No new child while one times: it would compile beside the timing. A kernel whose child
    // was killed goes first (its configurations left), whatever start_by says: it was started.
    while (static_cast<int>(active.size()) < jobs && (!restarts.empty() || may_start()) &&
           token_holder < 0) {
      size_t job = next;
      if (!restarts.empty()) job = restarts.front();
      int fds[2];
      check(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0,
            "profiler: socketpair failed: {}", std::strerror(errno));
      std::fflush(nullptr);  // so the child inherits no buffered output to flush twice
      pid_t pid = ::fork();
      if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        if (active.empty()) fail("profiler: fork failed: {}", std::strerror(errno));
        break;
      }
      if (pid == 0) {
        ::close(fds[0]);
        for (const Child& c : active) ::close(c.fd);
        child_main(fds[1], *kernels[job], options, pinned.empty() ? nullptr : &pinned[job],
                   states[job].settled);
      }
      ::close(fds[1]);
      active.push_back({.pid = pid, .fd = fds[0], .job = job, .deadline = Clock::now() + timeout});
      if (!restarts.empty())
        restarts.pop_front();
      else
        ++next;
    }

    std::vector<pollfd> polls;
    Clock::time_point first_deadline = Clock::time_point::max();
    for (const Child& c : active) {
      polls.push_back({.fd = c.fd, .events = POLLIN});
      if (!c.waiting_token) first_deadline = std::min(first_deadline, c.deadline);
    }
    int wait_ms = -1;
    if (first_deadline != Clock::time_point::max()) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(first_deadline - Clock::now());
      wait_ms = static_cast<int>(std::max<int64_t>(0, left.count() + 1));
    }
    if (!active.empty()) wait_ms = wait_ms < 0 ? 250 : std::min(wait_ms, 250);  // CPU limits
    int ready = ::poll(polls.data(), polls.size(), wait_ms);
    if (ready < 0 && errno != EINTR) fail("profiler: poll failed: {}", std::strerror(errno));

    // Read what arrived; children whose socket closed are finished below.
    std::vector<pid_t> closed;
    for (size_t i = 0; ready > 0 && i < polls.size(); ++i) {
      if (!(polls[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = active[i];
      char buf[4096];
      ssize_t n = ::read(c.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        closed.push_back(c.pid);
        continue;
      }
      c.buffer.append(buf, static_cast<size_t>(n));
      for (size_t end; (end = c.buffer.find('\n')) != std::string::npos;) {
        std::string line = c.buffer.substr(0, end);
        c.buffer.erase(0, end + 1);
        if (line.rfind("Q\t", 0) == 0) {
          states[c.job].announced.insert(config_key(line));
        } else if (line.rfind("B\t", 0) == 0) {
          c.working_on = config_key(line);
          c.phase_cpu_s = cpu_seconds(c.pid);
        } else if (line == "I") {
          c.interpreting = true;
          c.interpret_start = Clock::now();
          c.phase_cpu_s = cpu_seconds(c.pid);
        } else if (line == "C") {
          c.interpreting = false;
          c.phase_cpu_s = cpu_seconds(c.pid);
          c.deadline += Clock::now() - c.interpret_start;
        } else if (line == "T") {
          c.waiting_token = true;
          token_queue.push_back(c.pid);
        } else if (line.rfind("R\t", 0) == 0) {
          states[c.job].add(decode(line));
        }
      }
    }
    grant();
    Clock::time_point now = Clock::now();
    for (Child& c : active) {
      if (!c.timeout.empty() || c.stopped) continue;
      double phase_s = cpu_seconds(c.pid) - c.phase_cpu_s;
      if (c.interpreting) {
        if (phase_s > kInterpreterLimit * options.timeout_s)
          c.timeout = fmt::format("{} {:g} s of CPU time in the reference interpreter", kTimedOut,
                                  kInterpreterLimit * options.timeout_s);
      } else if (!c.waiting_token && now >= c.deadline) {
        c.timeout = fmt::format("{} {:g} s", kTimedOut, wall_s);
      } else if (phase_s > options.timeout_s) {
        c.timeout = fmt::format("{} {:g} s of CPU time", kTimedOut, options.timeout_s);
      }
      if (c.timeout.empty()) continue;
      ::kill(c.pid, SIGKILL);
      closed.push_back(c.pid);
    }
    for (pid_t pid : closed) {
      for (size_t i = 0; i < active.size(); ++i) {
        if (active[i].pid == pid) {
          finish(i);
          break;
        }
      }
    }
  }
}

bool child_died(std::string_view reason) {
  return std::any_of(std::begin(kDiedPrefixes), std::end(kDiedPrefixes),
                     [&](std::string_view prefix) { return reason.starts_with(prefix); });
}

}  // namespace orch::profile
