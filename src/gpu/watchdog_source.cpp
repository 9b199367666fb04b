#include "gpu/watchdog_source.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#include <signal.h>

#include <fmt/format.h>

namespace sparkops::gpu {

namespace {

using SteadyClock = std::chrono::steady_clock;

enum class Job { none, open, snapshot };

// What the worker publishes after each call: the inner source's view, copied under the mutex so
// the owning thread never touches the inner source.
struct View {
  GpuState state = GpuState::init_failed;
  std::string detail;
  std::optional<std::string> driver;
  std::vector<GpuDevice> devices;
};

// Shared by the owner and the worker; the worker keeps it alive after a detach.
struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  Job pending = Job::none;  // posted, not taken yet
  bool running = false;     // the worker is inside a call of the inner source
  bool stop = false;
  std::uint64_t posted = 0;
  std::uint64_t finished = 0;
  std::function<std::unique_ptr<GpuSource>()> open;
  std::unique_ptr<GpuSource> inner;  // the worker's alone
  View view;
  std::optional<Result<std::vector<GpuSnapshot>>> answer;
};

void work(const std::shared_ptr<Shared>& s) {
  std::unique_lock lock(s->mu);
  while (true) {
    s->cv.wait(lock, [&] { return s->stop || s->pending != Job::none; });
    if (s->stop) break;
    const Job job = std::exchange(s->pending, Job::none);
    s->running = true;
    lock.unlock();
    std::optional<Result<std::vector<GpuSnapshot>>> answer;
    if (job == Job::open) {
      s->inner = s->open();
    } else if (s->inner) {
      answer = s->inner->snapshot();
    }
    View view;
    if (s->inner) {
      view.state = s->inner->state();
      view.detail = s->inner->state_detail();
      view.driver = s->inner->driver_version();
      view.devices = s->inner->devices();
    }
    lock.lock();
    s->view = std::move(view);
    s->answer = std::move(answer);
    s->running = false;
    ++s->finished;
    s->cv.notify_all();
  }
  lock.unlock();
  // nvmlShutdown and dlclose on the thread that made every other call.
  s->inner.reset();
}

class WatchdogGpuSource final : public GpuSource {
 public:
  WatchdogGpuSource(std::function<std::unique_ptr<GpuSource>()> open, WatchdogOptions options)
      : options_(std::move(options)), shared_(std::make_shared<Shared>()) {
    shared_->open = std::move(open);
    // The worker starts with every asynchronous signal blocked: a SIGTERM meant for a command's
    // own signal thread (serve's sigtimedwait) must never land on a thread parked in the driver.
    sigset_t all, previous;
    sigfillset(&all);
    for (const int sync : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) {
      sigdelset(&all, sync);
    }
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    worker_ = std::thread(work, shared_);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    std::unique_lock lock(shared_->mu);
    post(lock, Job::open, "starting the GPU backend");
  }

  ~WatchdogGpuSource() override {
    bool busy = false;
    {
      std::lock_guard lock(shared_->mu);
      shared_->stop = true;
      busy = shared_->running;
    }
    shared_->cv.notify_all();
    if (busy) {
      worker_.detach();  // it ends, and frees the inner source, if the call ever returns
    } else {
      worker_.join();
    }
  }

  WatchdogGpuSource(const WatchdogGpuSource&) = delete;
  WatchdogGpuSource& operator=(const WatchdogGpuSource&) = delete;

  std::string_view backend() const override { return options_.backend; }
  GpuState state() const override { return view_.state; }
  std::string state_detail() const override { return view_.detail; }
  std::optional<std::string> driver_version() const override { return view_.driver; }
  const std::vector<GpuDevice>& devices() const override { return view_.devices; }

  Result<std::vector<GpuSnapshot>> snapshot() override {
    std::unique_lock lock(shared_->mu);
    if (shared_->running || shared_->pending != Job::none) {
      still_out();
      return fail(Errc::gpu_hung, view_.detail);
    }
    // The call that was out has returned (or none was): adopt what the inner source says now.
    adopt();
    if (!post(lock, Job::snapshot, "a GPU reading")) return fail(Errc::gpu_hung, view_.detail);
    auto answer = std::move(shared_->answer);
    shared_->answer.reset();
    if (!answer) return std::vector<GpuSnapshot>{};
    return std::move(*answer);
  }

 private:
  // Posts `job` and waits for it at most the timeout. True when it finished (view_ adopted).
  bool post(std::unique_lock<std::mutex>& lock, Job job, std::string_view what) {
    const auto posted_at = SteadyClock::now();  // the call is out from here, not from the timeout
    shared_->pending = job;
    const std::uint64_t id = ++shared_->posted;
    shared_->cv.notify_all();
    const bool done =
        shared_->cv.wait_for(lock, options_.timeout, [&] { return shared_->finished >= id; });
    if (done) {
      adopt();
      return true;
    }
    out_since_ = posted_at;
    out_what_ = std::string(what);
    still_out();
    return false;
  }

  void adopt() {
    view_.state = shared_->view.state;
    view_.detail = shared_->view.detail;
    view_.driver = shared_->view.driver;
    view_.devices = shared_->view.devices;
  }

  void still_out() {
    const auto out_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - out_since_);
    view_.state = GpuState::hung;
    view_.detail = fmt::format(
        "{}: {} has not returned after {:.1f} s (timeout {:.1f} s); host readings go on",
        options_.backend, out_what_, static_cast<double>(out_ms.count()) / 1000.0,
        static_cast<double>(options_.timeout.count()) / 1000.0);
  }

  WatchdogOptions options_;
  std::shared_ptr<Shared> shared_;
  std::thread worker_;
  View view_;  // the owner's copy: what state()/devices() answer
  SteadyClock::time_point out_since_{};
  std::string out_what_;
};

}  // namespace

std::unique_ptr<GpuSource> make_watchdog_gpu_source(
    std::function<std::unique_ptr<GpuSource>()> open, WatchdogOptions options) {
  return std::make_unique<WatchdogGpuSource>(std::move(open), std::move(options));
}

}  // namespace sparkops::gpu
