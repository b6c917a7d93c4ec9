// HTTPS on a real runledgerd (docs/operations.md "TLS"): --tls-cert and
// --tls-key serve TLS 1.2 and 1.3 only, with no weak cipher; plain HTTP on
// the port gets no reply; --tls-client-ca requires a client certificate its
// CAs signed; SIGHUP loads a new certificate while open connections go on;
// the CLI and the live stream work over it; a start that would send tokens
// in clear off loopback is refused unless --insecure-plaintext says so.
// Certificates are made for each test with the openssl command.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "tests/http/raw_connection.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

// A CA, a server certificate it signed for 127.0.0.1 and localhost (CN
// `server_cn`), and a client CA with a client certificate, under `dir`.
void make_certificates(const std::string& dir, const std::string& server_cn) {
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  const std::vector<std::string> steps = {
      "openssl req -x509 " + ec + " -days 2 -subj /CN=test-ca -keyout " + dir + "/ca.key -out " +
          dir + "/ca.pem",
      "openssl req " + ec + " -subj /CN=" + server_cn + " -keyout " + dir + "/server.key -out " +
          dir + "/server.csr",
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > " + dir + "/san.ext",
      "openssl x509 -req -in " + dir + "/server.csr -CA " + dir + "/ca.pem -CAkey " + dir +
          "/ca.key -CAcreateserial -days 2 -extfile " + dir + "/san.ext -out " + dir +
          "/server.pem",
      "openssl req -x509 " + ec + " -days 2 -subj /CN=client-ca -keyout " + dir +
          "/client-ca.key -out " + dir + "/client-ca.pem",
      "openssl req " + ec + " -subj /CN=worker-7 -keyout " + dir + "/client.key -out " + dir +
          "/client.csr",
      "openssl x509 -req -in " + dir + "/client.csr -CA " + dir + "/client-ca.pem -CAkey " + dir +
          "/client-ca.key -CAcreateserial -days 2 -out " + dir + "/client.pem",
  };
  for (const std::string& step : steps) {
    auto [code, out] = run_shell(step);
    ASSERT_EQ(code, 0) << step << "\n" << out;
  }
}

// `openssl s_client` to the port with `options`; its exit code and output.
std::pair<int, std::string> s_client(int port, const std::string& options) {
  return run_shell("timeout 20 openssl s_client -connect 127.0.0.1:" + std::to_string(port) + " " +
                   options + " < /dev/null");
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(make_certificates(certs_.path(), "server-1")); }
  void TearDown() override {
    if (server_ && server_->running()) {
      EXPECT_EQ(server_->terminate(), 0) << server_->log();
    }
  }
  std::string cert(const std::string& name) const { return certs_.path() + "/" + name; }
  std::vector<std::string> tls_flags() const {
    return {"--tls-cert", cert("server.pem"), "--tls-key", cert("server.key")};
  }
  // Starts runledgerd with `flags` and waits until it answers over HTTPS.
  void start(std::vector<std::string> flags) {
    server_ = std::make_unique<ServerProcess>(data_.path(), flags);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
      ASSERT_FALSE(server_->wait_exit(std::chrono::milliseconds(0))) << server_->log();
      if (health(client()).status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "no answer over HTTPS\n" << server_->log();
  }
  std::unique_ptr<httplib::SSLClient> client(bool with_client_cert = false) {
    auto c = with_client_cert
                 ? std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port(),
                                                        cert("client.pem"), cert("client.key"))
                 : std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port());
    c->set_ca_cert_path(cert("ca.pem").c_str());
    c->enable_server_certificate_verification(true);
    c->set_connection_timeout(10);
    c->set_read_timeout(10);
    return c;
  }
  struct Got {
    int status = 0;
    std::string body;
  };
  static Got health(const std::unique_ptr<httplib::SSLClient>& c) {
    auto r = c->Get("/v1/health");
    if (!r) return {};
    return {r->status, r->body};
  }
  TempDir certs_;
  TempDir data_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(TlsTest, HttpsIsServedAndPlainHttpOnThePortGetsNoReply) {
  ASSERT_NO_FATAL_FAILURE(start(tls_flags()));
  auto c = client();
  auto enqueued = c->Post("/v1/jobs", R"({"kind":"k","target":"t"})", "application/json");
  ASSERT_TRUE(enqueued);
  EXPECT_EQ(enqueued->status, 201) << enqueued->body;

  const std::string plain = round_trip(server_->port(), request_head("GET", "/v1/health"));
  EXPECT_EQ(plain.find("HTTP/1.1 200"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("\"status\""), std::string::npos) << plain;
}

TEST_F(TlsTest, OnlyTls12And13AreSpokenAndNoWeakCipher) {
  ASSERT_NO_FATAL_FAILURE(start(tls_flags()));
  const int port = server_->port();
  const std::string trust = "-CAfile " + cert("ca.pem") + " -verify_return_error";

  auto [v13, out13] = s_client(port, "-tls1_3 " + trust);
  auto [v12, out12] = s_client(port, "-tls1_2 " + trust);
  EXPECT_EQ(v13, 0) << out13;
  EXPECT_NE(out13.find("TLSv1.3"), std::string::npos) << out13;
  EXPECT_EQ(v12, 0) << out12;
  EXPECT_NE(out12.find("ECDHE"), std::string::npos) << out12;
  // Older protocols (allowed on the client's side for the probe) and
  // suites without forward secrecy or AEAD find no match.
  for (const std::string probe :
       {"-tls1_1 -cipher ALL:@SECLEVEL=0", "-tls1 -cipher ALL:@SECLEVEL=0",
        "-tls1_2 -cipher AES128-SHA", "-tls1_2 -cipher ECDHE-RSA-AES128-SHA",
        "-tls1_2 -cipher ECDHE-ECDSA-AES128-SHA256", "-tls1_2 -cipher DHE-RSA-AES128-GCM-SHA256",
        "-tls1_2 -cipher NULL:@SECLEVEL=0"}) {
    auto [code, out] = s_client(port, probe);
    EXPECT_NE(code, 0) << probe << "\n" << out;
    EXPECT_EQ(out.find("BEGIN CERTIFICATE"), std::string::npos) << probe << "\n" << out;
  }
}

TEST_F(TlsTest, AClientCaRequiresAClientCertificateItSigned) {
  std::vector<std::string> flags = tls_flags();
  flags.insert(flags.end(), {"--tls-client-ca", cert("client-ca.pem")});
  server_ = std::make_unique<ServerProcess>(data_.path(), flags);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (health(client(true)).status != 200 && std::chrono::steady_clock::now() < until) {
    ASSERT_FALSE(server_->wait_exit(std::chrono::milliseconds(0))) << server_->log();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  EXPECT_EQ(health(client(true)).status, 200);
  EXPECT_EQ(health(client(false)).status, 0);
  // A certificate of the server's CA, not the client CA's, is refused too.
  auto other = std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port(),
                                                    cert("server.pem"), cert("server.key"));
  other->set_ca_cert_path(cert("ca.pem").c_str());
  other->enable_server_certificate_verification(true);
  EXPECT_EQ(health(other).status, 0);
}

TEST_F(TlsTest, SighupLoadsANewCertificateWhileAnOpenConnectionGoesOn) {
  ASSERT_NO_FATAL_FAILURE(start(tls_flags()));
  auto open = client();
  open->set_keep_alive(true);
  ASSERT_EQ(health(open).status, 200);
  EXPECT_NE(s_client(server_->port(), "-CAfile " + cert("ca.pem")).second.find("CN = server-1"),
            std::string::npos);

  TempDir fresh;
  ASSERT_NO_FATAL_FAILURE(make_certificates(fresh.path(), "server-2"));
  for (const std::string name : {"server.pem", "server.key", "ca.pem"}) {
    std::filesystem::copy_file(fresh.path() + "/" + name, cert(name),
                               std::filesystem::copy_options::overwrite_existing);
  }
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);

  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string seen;
  while (std::chrono::steady_clock::now() < until) {
    seen = s_client(server_->port(), "-CAfile " + cert("ca.pem")).second;
    if (seen.find("CN = server-2") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(seen.find("CN = server-2"), std::string::npos) << seen << server_->log();
  // The connection opened before the reload is served on it still.
  EXPECT_EQ(health(open).status, 200);
  EXPECT_TRUE(server_->running());
}

TEST_F(TlsTest, TheCliAndTheLiveStreamWorkOverHttps) {
  ASSERT_NO_FATAL_FAILURE(start(tls_flags()));
  const std::string url = "https://127.0.0.1:" + std::to_string(server_->port());
  auto [enq, enq_out] =
      run_shell(bin_path("runledger") + " job enqueue --server " + url + " --cacert " +
                cert("ca.pem") + " --kind k --target shop/orders --output json");
  EXPECT_EQ(enq, 0) << enq_out;
  auto [list, list_out] = run_shell(bin_path("runledger") + " job list --server " + url +
                                    " --cacert " + cert("ca.pem") + " --output json");
  EXPECT_EQ(list, 0) << list_out;
  EXPECT_NE(list_out.find("shop/orders"), std::string::npos) << list_out;
  // Without the CA the server's certificate is not trusted.
  auto [untrusted, untrusted_out] =
      run_shell(bin_path("runledger") + " job list --server " + url + " --output json");
  EXPECT_NE(untrusted, 0) << untrusted_out;

  auto [curl, stream] = run_shell("curl -sN --max-time 3 --cacert " + cert("ca.pem") + " '" + url +
                                  "/v1/events/live?after=0'");
  EXPECT_NE(stream.find("id: 1\ndata: "), std::string::npos) << curl << stream;
}

TEST(TlsStartTest, PlainHttpWithTokensOffLoopbackIsRefusedUnlessInsecurePlaintextIsGiven) {
  TempDir dir;
  { std::ofstream(dir.path() + "/tokens") << "ops operator operator-token-0123456789abcdef\n"; }
  std::filesystem::permissions(dir.path() + "/tokens", std::filesystem::perms::owner_read);
  auto [refused, why] = run_shell(bin_path("runledgerd") + " --listen 0.0.0.0:0 --data " +
                                  dir.path() + "/data --auth-tokens " + dir.path() + "/tokens");
  EXPECT_EQ(refused, 2) << why;
  EXPECT_NE(why.find("--insecure-plaintext"), std::string::npos) << why;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/data"));

  // Given the flag, it starts (and serves until the timeout stops it).
  auto [allowed, log] =
      run_shell("timeout 5 " + bin_path("runledgerd") + " --listen 0.0.0.0:0 --data " + dir.path() +
                "/data --auth-tokens " + dir.path() + "/tokens --insecure-plaintext");
  EXPECT_EQ(allowed, 124) << log;
  EXPECT_NE(log.find("listening on 0.0.0.0:"), std::string::npos) << log;
}

TEST(TlsStartTest, WrongTlsFilesStopTheStartBeforeTheDataFolder) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(make_certificates(dir.path(), "server-1"));
  const std::string d = dir.path();
  const std::string runledgerd =
      bin_path("runledgerd") + " --listen 127.0.0.1:0 --data " + d + "/data ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--tls-cert " + d + "/server.pem", "--tls-key"},
      {"--tls-key " + d + "/server.key", "--tls-cert"},
      {"--tls-cert " + d + "/server.pem --tls-key " + d + "/client.key", "not the key"},
      {"--tls-cert " + d + "/missing.pem --tls-key " + d + "/server.key", "missing.pem"},
      {"--tls-cert " + d + "/server.pem --tls-key " + d + "/server.key --tls-client-ca " + d +
           "/missing-ca.pem",
       "missing-ca.pem"},
  };
  for (const auto& [flags, names] : cases) {
    auto [code, out] = run_shell(runledgerd + flags);
    EXPECT_EQ(code, 2) << flags << "\n" << out;
    EXPECT_NE(out.find(names), std::string::npos) << flags << "\n" << out;
  }
  EXPECT_FALSE(std::filesystem::exists(d + "/data"));
}

}  // namespace
}  // namespace runledger::testing
