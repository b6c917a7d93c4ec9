// PgServer: see pg_server.h.
#include "tests/support/pg_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "tests/support/subprocess.h"

namespace runledger::testing {
namespace {

using namespace std::chrono_literals;
using PgClock = std::chrono::steady_clock;

// Generous for a loaded 2-core machine: each is a bound on a wait that
// normally ends in well under a second.
constexpr int kPgCtlTimeoutS = 120;
constexpr auto kPgReplicationWait = 60s;
constexpr auto kPgPromoteWait = 60s;
constexpr auto kPgKillWait = 30s;
constexpr auto kPgPsqlTimeout = 60s;
constexpr auto kPgPollInterval = 100ms;
constexpr size_t kPgLogTailLines = 40;
// Another process may take the port between free_port() and the server's bind.
constexpr int kPgPortAttempts = 3;

// The newest installed server's programs; "" when there is none.
const std::string& pg_bin_dir() {
  static const std::string dir = [] {
    std::string best;
    int best_major = -1;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string major = e.path().filename().string();
      const std::string bin = e.path().string() + "/bin";
      if (!std::filesystem::exists(bin + "/initdb", ec)) continue;
      const int n = std::atoi(major.c_str());
      if (n > best_major) {
        best_major = n;
        best = bin;
      }
    }
    return best;
  }();
  return dir;
}

bool pg_as_root() { return geteuid() == 0; }

// The `postgres` user (created when missing), whom root runs the server as.
const passwd* pg_postgres_user() {
  const passwd* pw = getpwnam("postgres");
  if (pw == nullptr) {
    run_shell("useradd --system --no-create-home postgres");
    pw = getpwnam("postgres");
  }
  return pw;
}

// Gone, or a zombie: this machine's init does not reap the orphans the
// server's processes become, and a zombie holds no port, file or memory.
bool pg_process_gone(pid_t pid) {
  const std::string stat = read_whole_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return true;
  const char state = stat[paren + 2];
  return state == 'Z' || state == 'X';
}

std::vector<pid_t> pg_children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const std::string stat = read_whole_file(e.path().string() + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    // After ')': state, then the parent's pid.
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      out.push_back(std::atoi(name.c_str()));
    }
  }
  return out;
}

bool pg_port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

bool pg_poll_until(PgClock::duration wait, const std::function<bool()>& done) {
  const auto deadline = PgClock::now() + wait;
  for (;;) {
    if (done()) return true;
    if (PgClock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPgPollInterval);
  }
}

std::string pg_last_lines(const std::string& text, size_t lines) {
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (size_t n = 0; n < lines && pos > 0; ++n) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos == 0 ? 0 : pos + 1);
}

std::string pg_dsn_for(int port, const std::string& dbname) {
  return "host=127.0.0.1 port=" + std::to_string(port) + " dbname=" + dbname +
         " user=postgres connect_timeout=5";
}

// The caller's environment without what would steer PostgreSQL's programs
// elsewhere (PGHOST, PGOPTIONS, ...) or translate psql's messages.
std::vector<std::string> pg_environment() {
  std::vector<std::string> env = clean_environment();
  std::erase_if(env, [](const std::string& v) {
    return v.starts_with("PG") || v.starts_with("LC_") || v.starts_with("LANG");
  });
  env.emplace_back("LC_ALL=C.UTF-8");
  return env;
}

bool pg_append_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
  return static_cast<bool>(out.flush());
}

// Runs `program` (a path) with `args` from folder `cwd`, as `postgres` when
// running as root; its exit code and output.
std::pair<int, std::string> pg_run_as_server_user(const std::string& program,
                                                  const std::vector<std::string>& args,
                                                  const std::string& cwd) {
  std::vector<std::string> argv;
  if (pg_as_root()) {
    const char* runuser =
        ::access("/usr/sbin/runuser", X_OK) == 0 ? "/usr/sbin/runuser" : "/sbin/runuser";
    argv = {runuser, "-u", "postgres", "--"};
  }
  argv.push_back(program);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = pg_environment();
  std::vector<char*> argv_c, env_c;
  for (auto& a : argv) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  for (auto& e : env) env_c.push_back(e.data());
  env_c.push_back(nullptr);

  TempDir io;
  const std::string out_path = io.path() + "/out";
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) {
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    return {-1, "cannot open the output file " + out_path};
  }
  // Not spawn_process(): the postmaster that pg_ctl starts keeps every
  // descriptor it inherits for as long as it runs, and the test's sockets
  // opened without FD_CLOEXEC (cpp-httplib's) would stay open with it. Only
  // async-signal-safe calls between fork and exec: the test has threads.
  const pid_t pid = ::fork();
  if (pid == 0) {
    // From the folder: the test's working directory may be closed to `postgres`.
    if (::chdir(cwd.c_str()) != 0 || ::dup2(in, STDIN_FILENO) < 0 ||
        ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(out, STDERR_FILENO) < 0) {
      ::_exit(127);
    }
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    ::execve(argv_c[0], argv_c.data(), env_c.data());
    ::_exit(127);
  }
  ::close(in);
  ::close(out);
  if (pid < 0) return {-1, "fork failed"};
  const int code = wait_for_exit(pid);
  return {code, read_whole_file(out_path)};
}

}  // namespace

std::pair<int, std::string> PgServer::run_pg(const std::vector<std::string>& args) const {
  return pg_run_as_server_user(bin_ + "/" + args.at(0), {args.begin() + 1, args.end()},
                               dir_.path());
}

bool PgServer::fail(const std::string& what) {
  ok_ = false;
  error_ = what + "\n--- " + dir_.path() + "/postgres.log (last lines) ---\n" +
           pg_last_lines(log(), kPgLogTailLines);
  return false;
}

std::string PgServer::log() const { return read_whole_file(dir_.path() + "/postgres.log"); }

std::string PgServer::dsn() const { return pg_dsn_for(port_, "runledger"); }

std::string PgServer::dsn_via(int port) const { return pg_dsn_for(port, "runledger"); }

pid_t PgServer::postmaster_pid() const {
  return std::atoi(read_whole_file(pgdata_ + "/postmaster.pid").c_str());
}

bool PgServer::init_folder() {
  bin_ = pg_bin_dir();
  if (bin_.empty()) return fail("no PostgreSQL server in /usr/lib/postgresql/*/bin");
  pgdata_ = dir_.path() + "/data";
  if (pg_as_root()) {
    const passwd* pw = pg_postgres_user();
    if (pw == nullptr) return fail("no `postgres` user, and useradd could not create it");
    if (::chown(dir_.path().c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return fail("chown " + dir_.path() + " to postgres failed");
    }
  }
  return true;
}

bool PgServer::start(bool may_move) {
  // A server killed hard leaves its postmaster.pid; its zombie pid would
  // look alive to the new postmaster.
  const pid_t stale = postmaster_pid();
  if (stale > 0 && pg_process_gone(stale)) {
    std::error_code ec;
    std::filesystem::remove(pgdata_ + "/postmaster.pid", ec);
  }
  for (int attempt = 1;; ++attempt) {
    const size_t log_before = log().size();
    auto [code, out] = run_pg({"pg_ctl", "-D", pgdata_, "-l", dir_.path() + "/postgres.log", "-w",
                               "-t", std::to_string(kPgCtlTimeoutS), "start"});
    if (code == 0) {
      ok_ = true;
      return true;
    }
    const bool port_taken = log().find("Address already in use", log_before) != std::string::npos;
    if (!port_taken || !may_move || attempt == kPgPortAttempts) {
      return fail("pg_ctl start failed: " + out);
    }
    try {
      port_ = free_port();
    } catch (const std::exception& e) {
      return fail(std::string("no free port: ") + e.what());
    }
    pg_append_file(pgdata_ + "/postgresql.conf", "port = " + std::to_string(port_) + "\n");
  }
}

std::unique_ptr<PgServer> PgServer::make_template() {
  std::unique_ptr<PgServer> s(new PgServer());
  if (!s->init_folder()) return s;
  // --no-sync: only the files initdb writes; the running server syncs its own.
  auto [code, out] = s->run_pg({"initdb", "-D", s->pgdata_, "-U", "postgres", "--auth=trust", "-E",
                                "UTF8", "--locale=C", "--no-sync", "--no-instructions"});
  if (code != 0) {
    s->fail("initdb failed: " + out);
    return s;
  }
  try {
    s->port_ = free_port();
  } catch (const std::exception& e) {
    s->fail(std::string("no free port: ") + e.what());
    return s;
  }
  const std::string conf =
      "\n# The cluster tests: loopback TCP only, durable commits, streaming standbys.\n"
      "listen_addresses = '127.0.0.1'\n"
      "port = " +
      std::to_string(s->port_) +
      "\n"
      "unix_socket_directories = ''\n"
      "max_connections = 50\n"
      "shared_buffers = 64MB\n"
      "fsync = on\n"
      "synchronous_commit = on\n"
      "wal_level = replica\n"
      "max_wal_senders = 10\n"
      "wal_keep_size = 128MB\n"
      "hot_standby = on\n"
      // A standby from a base backup, or a server killed hard, first syncs
      // its whole folder: file by file that took seconds on a loaded disk.
      "recovery_init_sync_method = syncfs\n";
  const std::string hba =
      "host all all 127.0.0.1/32 trust\n"
      "host replication all 127.0.0.1/32 trust\n";
  std::ofstream hba_file(s->pgdata_ + "/pg_hba.conf", std::ios::trunc);
  hba_file << hba;
  if (!hba_file.flush() || !pg_append_file(s->pgdata_ + "/postgresql.conf", conf)) {
    s->fail("cannot write the settings in " + s->pgdata_);
    return s;
  }
  if (!s->start(/*may_move=*/true)) return s;
  bool created = false;
  std::string why;
  psql_at(pg_dsn_for(s->port_, "postgres"), "CREATE DATABASE runledger", &created, &why);
  if (!created) {
    s->fail("CREATE DATABASE runledger failed: " + why);
    return s;
  }
  // Fast: a clean shutdown, so that a copy starts without recovery.
  auto [stop_code, stop_out] = s->run_pg({"pg_ctl", "-D", s->pgdata_, "-m", "fast", "-w", "-t",
                                          std::to_string(kPgCtlTimeoutS), "stop"});
  if (stop_code != 0) s->fail("pg_ctl stop failed: " + stop_out);
  return s;
}

std::unique_ptr<PgServer> PgServer::start_primary() {
  // initdb and CREATE DATABASE once per test process, a copy per server:
  // they took 3 to 8 s per server on a loaded 2-core machine.
  static std::mutex template_mu;
  static std::unique_ptr<PgServer> cluster_template;
  std::unique_ptr<PgServer> s(new PgServer());
  std::string template_data;
  {
    std::lock_guard lock(template_mu);
    if (cluster_template == nullptr || !cluster_template->ok()) cluster_template = make_template();
    if (!cluster_template->ok()) {
      s->fail("the initdb of the servers' template failed: " + cluster_template->error());
      return s;
    }
    template_data = cluster_template->pgdata_;
  }
  if (!s->init_folder()) return s;
  auto [code, out] =
      pg_run_as_server_user("/bin/cp", {"-a", template_data, s->pgdata_}, s->dir_.path());
  if (code != 0) {
    s->fail("copying the template " + template_data + " failed: " + out);
    return s;
  }
  try {
    s->port_ = free_port();
  } catch (const std::exception& e) {
    s->fail(std::string("no free port: ") + e.what());
    return s;
  }
  if (!pg_append_file(s->pgdata_ + "/postgresql.conf",
                      "port = " + std::to_string(s->port_) + "\n")) {
    s->fail("cannot write " + s->pgdata_ + "/postgresql.conf");
    return s;
  }
  s->start(/*may_move=*/true);
  return s;
}

std::unique_ptr<PgServer> PgServer::start_standby(PgServer& primary, bool synchronous) {
  static std::atomic<int> standbys{0};
  std::unique_ptr<PgServer> s(new PgServer());
  if (!primary.ok()) {
    s->fail("the primary is not running: " + primary.error());
    return s;
  }
  if (!s->init_folder()) return s;
  s->name_ = "standby_" + std::to_string(::getpid()) + "_" + std::to_string(++standbys);
  // -R: standby.signal and the primary's address; --no-sync as for initdb.
  auto [code, out] =
      s->run_pg({"pg_basebackup", "-h", "127.0.0.1", "-p", std::to_string(primary.port_), "-U",
                 "postgres", "-D", s->pgdata_, "-R", "-X", "stream", "-c", "fast", "--no-sync"});
  if (code != 0) {
    s->fail("pg_basebackup from port " + std::to_string(primary.port_) + " failed: " + out);
    return s;
  }
  try {
    s->port_ = free_port();
  } catch (const std::exception& e) {
    s->fail(std::string("no free port: ") + e.what());
    return s;
  }
  // The copied postgresql.conf has the primary's port; the last setting wins.
  // The primary knows a standby by its application_name.
  if (!pg_append_file(s->pgdata_ + "/postgresql.conf",
                      "port = " + std::to_string(s->port_) + "\n") ||
      !pg_append_file(s->pgdata_ + "/postgresql.auto.conf",
                      "primary_conninfo = 'host=127.0.0.1 port=" + std::to_string(primary.port_) +
                          " user=postgres application_name=" + s->name_ + "'\n")) {
    s->fail("cannot write the standby's settings in " + s->pgdata_);
    return s;
  }
  if (!s->start(/*may_move=*/true)) return s;
  if (synchronous) {
    bool set = false, reloaded = false;
    primary.psql("ALTER SYSTEM SET synchronous_standby_names = '\"" + s->name_ + "\"'", &set);
    primary.psql("SELECT pg_reload_conf()", &reloaded);
    if (!set || !reloaded) {
      s->fail("setting synchronous_standby_names on the primary failed");
      return s;
    }
  }
  const std::string want = synchronous ? "streaming|sync" : "streaming|async";
  std::string seen;
  const bool replicating = pg_poll_until(kPgReplicationWait, [&] {
    seen = primary.psql(
        "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = '" + s->name_ +
        "'");
    return seen == want;
  });
  if (!replicating) {
    s->fail("the primary does not report standby " + s->name_ + " as " + want + " but as '" + seen +
            "'; primary's log:\n" + pg_last_lines(primary.log(), kPgLogTailLines));
  }
  return s;
}

PgServer::~PgServer() {
  const pid_t pm = postmaster_pid();
  if (pm <= 0 || pg_process_gone(pm)) return;
  run_pg({"pg_ctl", "-D", pgdata_, "-m", "immediate", "-w", "-t", "30", "stop"});
  if (!pg_process_gone(pm)) kill_hard();
}

std::string PgServer::psql(const std::string& sql, bool* ok) const {
  return psql_at(dsn(), sql, ok);
}

std::string PgServer::psql_at(const std::string& dsn, const std::string& sql, bool* ok,
                              std::string* error) {
  if (ok != nullptr) *ok = false;
  TempDir io;
  const std::string out = io.path() + "/out", err = io.path() + "/err";
  std::string program = pg_bin_dir() + "/psql";
  if (!std::filesystem::exists(program)) program = "/usr/bin/psql";
  pid_t pid = -1;
  try {
    pid = spawn_process(
        {program, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-F", "|", "-d", dsn, "-c", sql},
        pg_environment(), out, err);
  } catch (const std::exception& e) {
    if (error != nullptr) *error = e.what();
    return "";
  }
  int status = 0;
  const auto deadline = PgClock::now() + kPgPsqlTimeout;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      if (error != nullptr) *error = "psql could not be waited for";
      return "";
    }
    if (PgClock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      wait_for_exit(pid);
      if (error != nullptr) *error = "psql did not end within a minute";
      return "";
    }
    // Short: most statements take milliseconds, and tests run many.
    std::this_thread::sleep_for(5ms);
  }
  if (error != nullptr) *error = read_whole_file(err);
  if (exit_code_of(status) != 0) return "";
  if (ok != nullptr) *ok = true;
  std::string text = read_whole_file(out);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

void PgServer::kill_hard() {
  const pid_t pm = postmaster_pid();
  if (pm <= 0 || pg_process_gone(pm)) return;
  // Each child is in a session of its own, so no group kill reaches them
  // all; a stopped postmaster forks no new one while they are killed.
  ::kill(pm, SIGSTOP);
  std::vector<pid_t> victims = pg_children_of(pm);
  for (pid_t child : victims) ::kill(child, SIGKILL);
  ::kill(pm, SIGKILL);
  victims.push_back(pm);
  pg_poll_until(kPgKillWait, [&] {
    return std::all_of(victims.begin(), victims.end(), pg_process_gone) && !pg_port_accepts(port_);
  });
}

bool PgServer::restart() {
  const pid_t pm = postmaster_pid();
  if (pm > 0 && !pg_process_gone(pm)) {
    auto [code, out] = run_pg({"pg_ctl", "-D", pgdata_, "-m", "fast", "-w", "-t",
                               std::to_string(kPgCtlTimeoutS), "stop"});
    if (code != 0) return fail("pg_ctl stop failed: " + out);
  }
  return start(/*may_move=*/false);
}

bool PgServer::promote() {
  auto [code, out] =
      run_pg({"pg_ctl", "-D", pgdata_, "-w", "-t", std::to_string(kPgCtlTimeoutS), "promote"});
  if (code != 0) return fail("pg_ctl promote failed: " + out);
  if (!pg_poll_until(kPgPromoteWait, [&] { return psql("SELECT pg_is_in_recovery()") == "f"; })) {
    return fail("still in recovery after pg_ctl promote");
  }
  return make_replication_asynchronous();
}

bool PgServer::make_replication_asynchronous() {
  bool set = false, reloaded = false;
  psql("ALTER SYSTEM SET synchronous_standby_names = ''", &set);
  psql("SELECT pg_reload_conf()", &reloaded);
  if (!set || !reloaded) return fail("clearing synchronous_standby_names failed");
  // The reload reaches the walsenders a moment later; until then they still
  // report themselves sync.
  const bool applied = pg_poll_until(kPgReplicationWait, [&] {
    return psql(
               "SELECT current_setting('synchronous_standby_names') = '' AND NOT EXISTS "
               "(SELECT 1 FROM pg_stat_replication WHERE sync_state <> 'async')") == "t";
  });
  return applied || fail("synchronous_standby_names = '' did not take effect");
}

}  // namespace runledger::testing
