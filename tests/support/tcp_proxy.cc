// TcpProxy: see tcp_proxy.h.
#include "tests/support/tcp_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace runledger::testing {
namespace {

// Bytes read ahead of a slow side, per direction, before reading stops.
constexpr size_t kProxyBufferMax = 256 * 1024;
constexpr size_t kProxyReadChunk = 64 * 1024;

sockaddr_in proxy_loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// The peer sees a reset, not an orderly end: the connection was lost.
void proxy_close_with_reset(int fd) {
  if (fd < 0) return;
  linger lg{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  ::close(fd);
}

// Reads what `from` has into `buf`; false when the socket failed.
bool proxy_read_into(int from, std::string* buf, bool* eof) {
  char chunk[kProxyReadChunk];
  const ssize_t n = ::recv(from, chunk, sizeof chunk, 0);
  if (n > 0) {
    buf->append(chunk, static_cast<size_t>(n));
  } else if (n == 0) {
    *eof = true;
  } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    return false;
  }
  return true;
}

// Writes what it can of `buf` to `to`; false when the socket failed.
bool proxy_write_from(int to, std::string* buf) {
  const ssize_t n = ::send(to, buf->data(), buf->size(), MSG_NOSIGNAL);
  if (n > 0) {
    buf->erase(0, static_cast<size_t>(n));
  } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    return false;
  }
  return true;
}

}  // namespace

struct TcpProxy::Impl {
  // Nested, not in the anonymous namespace: in a unity build this file is
  // not the main file, where GCC rejects (-Wsubobject-linkage) members of a
  // type with internal linkage.
  enum class Mode { kForward, kRefuse, kBlackhole };

  // One forwarded connection: the client's socket and ours to the target.
  struct Pair {
    int client = -1;
    int target = -1;
    bool connecting = true;  // target's non-blocking connect not yet done
    bool client_eof = false, target_eof = false;
    bool client_shut = false, target_shut = false;  // our write side closed
    std::string to_target, to_client;
    bool failed = false;
  };

  int target_port = 0;
  int listen_fd = -1;
  int port = 0;
  int wake_read = -1, wake_write = -1;
  std::thread thread;

  // Shared with the test thread.
  std::mutex mu;
  std::condition_variable applied_cv;
  std::deque<Mode> commands;
  uint64_t requested = 0, applied = 0;
  bool stop = false;

  // The proxy thread's own.
  Mode mode = Mode::kForward;
  std::vector<Pair> pairs;
  std::vector<int> held;  // blackholed: accepted, never answered

  void request(Mode m) {
    std::unique_lock lock(mu);
    commands.push_back(m);
    const uint64_t mine = ++requested;
    wake();
    // Once cut() returns, no connection is forwarded any more.
    applied_cv.wait(lock, [&] { return applied >= mine || stop; });
  }

  void wake() {
    const char b = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_write, &b, 1);
  }

  void close_all_pairs() {
    for (Pair& p : pairs) {
      proxy_close_with_reset(p.client);
      proxy_close_with_reset(p.target);
    }
    pairs.clear();
  }

  void close_held() {
    for (int fd : held) proxy_close_with_reset(fd);
    held.clear();
  }

  // Applies queued commands; false when the proxy is to stop.
  bool apply_commands() {
    char drain[64];
    while (::read(wake_read, drain, sizeof drain) > 0) {
    }
    std::lock_guard lock(mu);
    while (!commands.empty()) {
      const Mode m = commands.front();
      commands.pop_front();
      if (m != Mode::kForward) close_all_pairs();
      close_held();
      mode = m;
      ++applied;
    }
    applied_cv.notify_all();
    return !stop;
  }

  void accept_new() {
    for (;;) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      if (mode == Mode::kRefuse) {
        proxy_close_with_reset(fd);
        continue;
      }
      if (mode == Mode::kBlackhole) {
        held.push_back(fd);
        continue;
      }
      Pair p;
      p.client = fd;
      p.target = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      const sockaddr_in addr = proxy_loopback(target_port);
      const int rc =
          p.target < 0 ? -1
                       : ::connect(p.target, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
      if (rc == 0) {
        p.connecting = false;
      } else if (errno != EINPROGRESS) {
        // The target is down: the client sees what it would see directly.
        proxy_close_with_reset(p.client);
        if (p.target >= 0) ::close(p.target);
        continue;
      }
      pairs.push_back(std::move(p));
    }
  }

  // Moves bytes for one pair after poll; marks it failed when either side broke.
  static void pump(Pair& p, short client_ev, short target_ev) {
    if (p.connecting) {
      if ((target_ev & (POLLOUT | POLLERR | POLLHUP)) == 0) return;
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(p.target, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        p.failed = true;
        return;
      }
      p.connecting = false;
    }
    const short readable = POLLIN | POLLHUP | POLLERR;
    if ((client_ev & readable) && !p.client_eof && p.to_target.size() < kProxyBufferMax) {
      if (!proxy_read_into(p.client, &p.to_target, &p.client_eof)) p.failed = true;
    }
    if ((target_ev & readable) && !p.target_eof && p.to_client.size() < kProxyBufferMax) {
      if (!proxy_read_into(p.target, &p.to_client, &p.target_eof)) p.failed = true;
    }
    if (!p.to_target.empty() && !proxy_write_from(p.target, &p.to_target)) p.failed = true;
    if (!p.to_client.empty() && !proxy_write_from(p.client, &p.to_client)) p.failed = true;
    // A half-close is passed on once what came before it is delivered.
    if (p.client_eof && p.to_target.empty() && !p.target_shut) {
      ::shutdown(p.target, SHUT_WR);
      p.target_shut = true;
    }
    if (p.target_eof && p.to_client.empty() && !p.client_shut) {
      ::shutdown(p.client, SHUT_WR);
      p.client_shut = true;
    }
  }

  void run() {
    std::vector<pollfd> fds;
    for (;;) {
      fds.clear();
      fds.push_back({wake_read, POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      for (const Pair& p : pairs) {
        short c = 0, t = 0;
        if (p.connecting) {
          t = POLLOUT;
        } else {
          if (!p.client_eof && p.to_target.size() < kProxyBufferMax) c |= POLLIN;
          if (!p.target_eof && p.to_client.size() < kProxyBufferMax) t |= POLLIN;
          if (!p.to_client.empty()) c |= POLLOUT;
          if (!p.to_target.empty()) t |= POLLOUT;
        }
        // A side with nothing to do is left out: a closed one would report
        // POLLHUP on every call and spin the loop.
        fds.push_back({c != 0 ? p.client : -1, c, 0});
        fds.push_back({t != 0 ? p.target : -1, t, 0});
      }
      ::poll(fds.data(), fds.size(), -1);
      if (!apply_commands()) return;
      // Commands may have closed every pair: their poll results are stale.
      if (fds.size() == 2 + 2 * pairs.size()) {
        for (size_t i = 0; i < pairs.size(); ++i) {
          pump(pairs[i], fds[2 + 2 * i].revents, fds[3 + 2 * i].revents);
        }
      }
      std::erase_if(pairs, [](const Pair& p) {
        const bool done = p.client_shut && p.target_shut;
        if (p.failed) {
          proxy_close_with_reset(p.client);
          proxy_close_with_reset(p.target);
        } else if (done) {
          ::close(p.client);
          ::close(p.target);
        }
        return p.failed || done;
      });
      if (fds[1].revents & POLLIN) accept_new();
    }
  }
};

TcpProxy::TcpProxy(int target_port) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.target_port = target_port;
  // CLOEXEC everywhere: a server the test starts later must not inherit the
  // proxy's sockets and keep its port or connections open.
  m.listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(m.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr = proxy_loopback(0);
  socklen_t len = sizeof addr;
  int pipe_fds[2] = {-1, -1};
  if (m.listen_fd < 0 || ::bind(m.listen_fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(m.listen_fd, SOMAXCONN) != 0 ||
      ::getsockname(m.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      ::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    if (m.listen_fd >= 0) ::close(m.listen_fd);
    throw std::runtime_error("TcpProxy: cannot listen on 127.0.0.1");
  }
  m.port = ntohs(addr.sin_port);
  m.wake_read = pipe_fds[0];
  m.wake_write = pipe_fds[1];
  m.thread = std::thread([&m] { m.run(); });
}

TcpProxy::~TcpProxy() {
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.mu);
    m.stop = true;
    m.wake();
  }
  m.thread.join();
  m.close_all_pairs();
  m.close_held();
  ::close(m.listen_fd);
  ::close(m.wake_read);
  ::close(m.wake_write);
}

int TcpProxy::port() const { return impl_->port; }

void TcpProxy::cut(bool blackhole) {
  impl_->request(blackhole ? Impl::Mode::kBlackhole : Impl::Mode::kRefuse);
}

void TcpProxy::restore() { impl_->request(Impl::Mode::kForward); }

}  // namespace runledger::testing
