#include "http/listen_address.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace runledger::http {

ListenAddress::~ListenAddress() {
  if (fd_ >= 0) ::close(fd_);
}

ListenAddress::ListenAddress(ListenAddress&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

ListenAddress& ListenAddress::operator=(ListenAddress&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Status ListenAddress::take(const std::string& host, int port, ListenAddress* out) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Status::IoError("cannot listen on " + where + ": " + ::gai_strerror(rc));
  }
  // The first address, as the server resolved it before.
  const addrinfo& a = *found;
  int fd = ::socket(a.ai_family, a.ai_socktype | SOCK_CLOEXEC, a.ai_protocol);
  int err = fd < 0 ? errno : 0;
  const int on = 1;
  if (fd >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0) err = errno;
  if (fd >= 0 && err == 0 && ::bind(fd, a.ai_addr, a.ai_addrlen) != 0) err = errno;
  ::freeaddrinfo(found);
  if (err != 0) {
    if (fd >= 0) ::close(fd);
    std::string why = std::strerror(err);
    if (err == EADDRINUSE) why += " (is another server using this port?)";
    return Status::IoError("cannot listen on " + where + ": " + why);
  }
  ListenAddress taken;
  taken.fd_ = fd;
  *out = std::move(taken);
  return Status::Ok();
}

int ListenAddress::release() { return std::exchange(fd_, -1); }

}  // namespace runledger::http
