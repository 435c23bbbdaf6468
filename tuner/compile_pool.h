// Program builds on a pool of threads, ahead of the evaluation that needs them: while the device
// times one candidate, the next candidates' programs are compiled.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "harness/program.h"

namespace ocltune {

class CompilePool {
 public:
  // `threads` builders over `cache`; 0 threads builds nothing ahead (submit is a no-op).
  CompilePool(ProgramCache& cache, int threads);
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Queues a build (a no-op when the program is cached or queued). A failure is remembered by the
  // cache and reported when the evaluation asks for the program.
  void submit(const ProgramSource& source);

  // While paused no new build starts, and pause() returns once running builds are done: a CPU
  // device is timed without compilers competing for its cores.
  void pause();
  void resume();

  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  void work();

  ProgramCache& cache_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<ProgramSource> queue_;
  std::vector<std::thread> workers_;
  int running_ = 0;
  bool paused_ = false;
  bool stopping_ = false;
};

}  // namespace ocltune
