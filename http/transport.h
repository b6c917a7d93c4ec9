// Transport: a connection's byte stream, plain TCP or TLS over it
// (docs/operations.md "TLS"). The connection reads and writes through it
// alike; only the start (the TLS handshake) and the graceful end (TLS's
// close_notify instead of a TCP half-close) differ.
//
// Used on the connection's executor only.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

namespace runledger::http {

class Transport {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;
  using lowest_layer_type = boost::asio::ip::tcp::socket;

  // `tls`: the server's TLS context, or nullptr for plain TCP. The
  // connection keeps the context it started with, whatever a reload does.
  Transport(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::ssl::context> tls) {
    if (tls) {
      tls_context_ = std::move(tls);
      tls_.emplace(std::move(socket), *tls_context_);
    } else {
      plain_.emplace(std::move(socket));
    }
  }

  bool tls() const { return tls_.has_value(); }
  executor_type get_executor() { return lowest_layer().get_executor(); }
  lowest_layer_type& lowest_layer() { return tls_ ? tls_->next_layer() : *plain_; }

  template <typename Buffers, typename Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }
  template <typename Buffers, typename Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
    }
  }
  // TLS: the server's side of the handshake. Plain: nothing (calls back at once).
  template <typename Handler>
  void async_start(Handler&& handler) {
    if (tls_) {
      tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
    } else {
      boost::asio::post(get_executor(), [h = std::forward<Handler>(handler)]() mutable {
        h(boost::system::error_code());
      });
    }
  }
  // TLS: sends close_notify and waits for the peer's. Plain: never called
  // (a TCP half-close is made with lowest_layer().shutdown()).
  template <typename Handler>
  void async_tls_shutdown(Handler&& handler) {
    tls_->async_shutdown(std::forward<Handler>(handler));
  }

 private:
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
  std::optional<boost::asio::ip::tcp::socket> plain_;
};

}  // namespace runledger::http
