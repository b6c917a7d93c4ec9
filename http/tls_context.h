// The server's TLS context (docs/operations.md "TLS"): its certificate
// chain and key, TLS 1.2 and 1.3 only with forward-secret AEAD ciphers, and,
// with a client CA, client certificates required and checked against it.
// Made anew on SIGHUP: connections keep the context they started with.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "base/status.h"

namespace runledger::http {

struct TlsFiles {
  std::string cert;       // PEM: the server's certificate chain, leaf first
  std::string key;        // PEM: its private key
  std::string client_ca;  // PEM: CAs that sign client certificates; empty: none asked for
  bool enabled() const { return !cert.empty(); }
};

// Reads the files into a context; a file that cannot be read, a key that
// does not match the certificate or a CA file without a certificate is an
// error naming the file.
Status make_tls_context(const TlsFiles& files, std::shared_ptr<boost::asio::ssl::context>* out);

}  // namespace runledger::http
