#include "http/tls_context.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

namespace runledger::http {
namespace {

namespace ssl = boost::asio::ssl;

// TLS 1.2 suites with forward secrecy and authenticated encryption only
// (TLS 1.3's are all such, and OpenSSL's defaults for it are kept).
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

}  // namespace

Status make_tls_context(const TlsFiles& files, std::shared_ptr<ssl::context>* out) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  ERR_clear_error();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                  SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
  if (SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    return Status::Invalid("TLS: cannot set the ciphers: " + openssl_error());
  }
  if (SSL_CTX_use_certificate_chain_file(native, files.cert.c_str()) != 1) {
    return Status::Invalid("--tls-cert " + files.cert +
                           ": cannot read a PEM certificate chain: " + openssl_error());
  }
  // Read apart from its use, so that a key that is not the certificate's is
  // told from a file that holds no key.
  BIO* key_file = BIO_new_file(files.key.c_str(), "r");
  EVP_PKEY* key =
      key_file == nullptr ? nullptr : PEM_read_bio_PrivateKey(key_file, nullptr, nullptr, nullptr);
  if (key_file != nullptr) BIO_free(key_file);
  if (key == nullptr) {
    return Status::Invalid("--tls-key " + files.key +
                           ": cannot read a PEM private key: " + openssl_error());
  }
  const int used = SSL_CTX_use_PrivateKey(native, key);
  EVP_PKEY_free(key);
  ERR_clear_error();
  if (used != 1 || SSL_CTX_check_private_key(native) != 1) {
    return Status::Invalid("--tls-key " + files.key + " is not the key of --tls-cert " +
                           files.cert);
  }
  if (!files.client_ca.empty()) {
    if (SSL_CTX_load_verify_locations(native, files.client_ca.c_str(), nullptr) != 1) {
      return Status::Invalid("--tls-client-ca " + files.client_ca +
                             ": cannot read PEM certificates: " + openssl_error());
    }
    // The CAs named to the client, so that it picks a certificate they signed.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca.c_str());
    if (names == nullptr) {
      return Status::Invalid("--tls-client-ca " + files.client_ca + " holds no certificate");
    }
    SSL_CTX_set_client_CA_list(native, names);
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  *out = std::move(ctx);
  return Status::Ok();
}

}  // namespace runledger::http
