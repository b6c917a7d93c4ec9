#include "tests/tools/work_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace runledger::testing {
namespace {

constexpr size_t kProxyHeadBytesMax = 64 * 1024;

bool proxy_write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// One HTTP message (head and Content-Length body) from `fd`, `buffer`
// holding what was read past the previous one. False when the peer closed.
bool proxy_read_message(int fd, std::string& buffer, std::string* message) {
  size_t head_end;
  while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
    if (buffer.size() > kProxyHeadBytesMax) return false;
    char chunk[16384];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  std::string head = buffer.substr(0, head_end + 4);
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  size_t length = 0;
  if (size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
    length = std::stoul(lower.substr(at + 17));
  }
  while (buffer.size() < head.size() + length) {
    char chunk[16384];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  *message = buffer.substr(0, head.size() + length);
  buffer.erase(0, head.size() + length);
  return true;
}

}  // namespace

ReplyDroppingProxy::ReplyDroppingProxy(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("the proxy cannot listen");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

ReplyDroppingProxy::~ReplyDroppingProxy() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (int fd : open_fds_) ::close(fd);
}

void ReplyDroppingProxy::drop_replies(const std::string& needle, int times) {
  std::lock_guard<std::mutex> lock(mu_);
  drops_.emplace_back(needle, times);
}

bool ReplyDroppingProxy::take_drop(const std::string& request_line) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [needle, times] : drops_) {
    if (times > 0 && request_line.find(needle) != std::string::npos) {
      --times;
      return true;
    }
  }
  return false;
}

void ReplyDroppingProxy::accept_loop() {
  while (!stopping_) {
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (stopping_) return;
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(client);
    threads_.emplace_back([this, client] { serve(client); });
  }
}

void ReplyDroppingProxy::serve(int client) {
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_fds_.push_back(upstream);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(upstream_port_));
  if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::string from_client, from_server, request, reply;
    while (proxy_read_message(client, from_client, &request)) {
      if (!proxy_write_all(upstream, request)) break;
      if (!proxy_read_message(upstream, from_server, &reply)) break;
      if (take_drop(request.substr(0, request.find("\r\n")))) {
        dropped_.fetch_add(1);
        break;  // acted on by the server; the reply is lost
      }
      if (!proxy_write_all(client, reply)) break;
    }
  }
  ::shutdown(client, SHUT_RDWR);
  ::shutdown(upstream, SHUT_RDWR);
}

}  // namespace runledger::testing
