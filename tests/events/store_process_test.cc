// The store across processes: a second process is kept out of a folder in
// use, and a process that dies while appending loses no acknowledged batch
// and leaves no partial one.
//
// The other process is this test binary started again with
// RUNLEDGER_STORE_TEST_HELPER set: it runs its part when GoogleTest sets up
// its environments (after every static is initialized, before any test) and
// exits there, so it shares no state (threads, locks) with the test that
// started it.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "events/log_verifier.h"
#include "events/rocksdb_store.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

extern char** environ;

namespace runledger::testing {
namespace {

constexpr char kHelperEnv[] = "RUNLEDGER_STORE_TEST_HELPER";
constexpr size_t kHelperBatchEvents = 50;
// The helper checkpoints its stream index every few batches, so that a kill
// lands between and during checkpoints.
constexpr size_t kHelperIndexCheckpointEvents = 3 * kHelperBatchEvents;
// A helper told to append "until killed" stops here if nobody kills it.
constexpr int kHelperBatchesMax = 100'000;

// --- the helper process side ----------------------------------------------

bool write_full(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

std::string helper_idempotency_key(uint64_t batch) { return "batch-" + std::to_string(batch); }

// Appends `batches` batches (0: until killed), reporting the last seq of
// each acknowledged one on `fd`, then exits without closing the store.
[[noreturn]] void append_helper(const std::string& dir, int fd, int batches) {
  std::unique_ptr<EventStore> store;
  StoreOptions options;
  options.index_checkpoint_events = kHelperIndexCheckpointEvents;
  if (!open_rocksdb_store(dir, options, &store).ok()) _exit(2);
  LogBuilder log;
  const int limit = batches == 0 ? kHelperBatchesMax : batches;
  for (int i = 0; i < limit; ++i) {
    AppendBatch b = log.batch({"job/" + std::to_string(i % 7), "job/x"}, kHelperBatchEvents);
    b.idempotency.emplace_back(helper_idempotency_key(static_cast<uint64_t>(i)),
                               idempotency_value(i, "reply"));
    if (!store->append(b).ok()) _exit(3);
    const uint64_t seq = store->last_seq();
    if (!write_full(fd, &seq, sizeof seq)) _exit(4);
  }
  _exit(0);  // no destructor: the store is never closed
}

// Tries to open the store and reports the status code and message on `fd`.
[[noreturn]] void open_helper(const std::string& dir, int fd) {
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir, {}, &store);
  const std::string report = std::to_string(static_cast<int>(s.code())) + " " + s.ToString();
  _exit(write_full(fd, report.data(), report.size()) ? 0 : 4);
}

// Spec: "<mode> <fd> <batches> <dir>".
bool run_helper_if_asked() {
  const char* spec = std::getenv(kHelperEnv);
  if (spec == nullptr) return false;
  char mode[16] = {};
  int fd = -1, batches = 0, consumed = 0;
  if (std::sscanf(spec, "%15s %d %d %n", mode, &fd, &batches, &consumed) != 3) _exit(5);
  const std::string dir = spec + consumed;
  if (std::strcmp(mode, "append") == 0) append_helper(dir, fd, batches);
  if (std::strcmp(mode, "open") == 0) open_helper(dir, fd);
  _exit(5);
}

class HelperEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { run_helper_if_asked(); }
};

[[maybe_unused]] ::testing::Environment* const kHelperEnvironment =
    ::testing::AddGlobalTestEnvironment(new HelperEnvironment);

// --- the test side ----------------------------------------------------------

struct Helper {
  pid_t pid = -1;
  int out = -1;  // read end of the helper's report pipe
};

Helper spawn_helper(const std::string& mode, int batches, const std::string& dir) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::string spec = kHelperEnv;
  spec += '=';
  for (const std::string& part : {mode, std::to_string(fds[1]), std::to_string(batches)}) {
    spec += part;
    spec += ' ';
  }
  spec += dir;
  env_strings.push_back(std::move(spec));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  // GoogleTest sets up environments only when some test is selected: one
  // cheap test, which the helper exits before.
  char arg0[] = "events_tests";
  char arg1[] = "--gtest_filter=StoreProcess.SecondOpenInTheSameProcessIsRefusedToo";
  char* argv[] = {arg0, arg1, nullptr};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    // GoogleTest's banner of the helper is noise in the test's output.
    int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDOUT_FILENO);
    ::execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  ::close(fds[1]);
  if (pid < 0) throw std::runtime_error("fork failed");
  return {pid, fds[0]};
}

// Reads up to n bytes; fewer only at end of file.
size_t read_full(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

// The acknowledged seqs the helper reports, until `count` or end of file.
std::vector<uint64_t> read_acks(int fd, size_t count) {
  std::vector<uint64_t> acks;
  uint64_t seq = 0;
  while (acks.size() < count && read_full(fd, &seq, sizeof seq) == sizeof seq) acks.push_back(seq);
  return acks;
}

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// What a log left by append_helper must look like after a crash.
void expect_whole_acknowledged_batches(const std::string& dir, uint64_t last_acked) {
  auto store = open_store(dir);
  const uint64_t last = store->last_seq();
  EXPECT_GE(last, last_acked) << "an acknowledged batch was lost";
  EXPECT_EQ(last % kHelperBatchEvents, 0u) << "a partial batch is in the log";
  // verify checks every stream's index entries against the log: runs
  // written by checkpoints and, after the last one, indexed from the log.
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  uint32_t version = 0;
  ASSERT_TRUE(store->stream_version("job/x", &version).ok());
  EXPECT_EQ(version, last / 2) << "job/x has every other event";
  // A batch's side records committed with its events, and only with them.
  const uint64_t batches = last / kHelperBatchEvents;
  std::string value;
  for (uint64_t i = 0; i < batches; ++i) {
    EXPECT_TRUE(store->get_idempotency(helper_idempotency_key(i), &value).ok()) << i;
  }
  EXPECT_EQ(store->get_idempotency(helper_idempotency_key(batches), &value).code(),
            Status::Code::kNotFound);
}

TEST(StoreProcess, CrashBetweenBatchesKeepsEveryReportedBatch) {
  TempDir dir;
  const int batches = 6;
  Helper h = spawn_helper("append", batches, dir.path());
  std::vector<uint64_t> acks = read_acks(h.out, SIZE_MAX);
  ::close(h.out);
  int status = wait_for(h.pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "helper status " << status;
  ASSERT_EQ(acks.size(), static_cast<size_t>(batches));
  EXPECT_EQ(acks.back(), batches * kHelperBatchEvents);
  expect_whole_acknowledged_batches(dir.path(), acks.back());
}

TEST(StoreProcess, KilledWhileAppendingKeepsEveryReportedBatchAndNoPartialOne) {
  TempDir dir;
  Helper h = spawn_helper("append", 0, dir.path());
  // Let it get well into its work, then kill it wherever it is.
  std::vector<uint64_t> acks = read_acks(h.out, 40);
  ASSERT_EQ(acks.size(), 40u) << "the helper stopped early";
  ::kill(h.pid, SIGKILL);
  std::vector<uint64_t> late = read_acks(h.out, SIZE_MAX);
  ::close(h.out);
  int status = wait_for(h.pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "helper status " << status;
  const uint64_t last_acked = late.empty() ? acks.back() : late.back();
  expect_whole_acknowledged_batches(dir.path(), last_acked);
}

TEST(StoreProcess, SecondProcessIsRefused) {
  TempDir dir;
  auto store = open_store(dir.path());
  Helper h = spawn_helper("open", 0, dir.path());
  std::string report(4096, '\0');
  report.resize(read_full(h.out, report.data(), report.size()));
  ::close(h.out);
  int status = wait_for(h.pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "helper status " << status;
  EXPECT_EQ(report.substr(0, 2), std::to_string(static_cast<int>(Status::Code::kUnavailable)) + " ")
      << report;
  EXPECT_NE(report.find("is in use by another runledgerd"), std::string::npos) << report;
  EXPECT_NE(report.find(dir.path()), std::string::npos) << report;
  // The first one goes on undisturbed.
  LogBuilder log;
  EXPECT_TRUE(store->append(log.batch({"job/a"}, 1)).ok());
}

TEST(StoreProcess, SecondOpenInTheSameProcessIsRefusedToo) {
  TempDir dir;
  auto store = open_store(dir.path());
  std::unique_ptr<EventStore> second;
  Status s = open_rocksdb_store(dir.path(), {}, &second);
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
}

}  // namespace
}  // namespace runledger::testing
