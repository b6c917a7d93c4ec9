// The console's files over HTTP (docs/console.md, "Serving"): /ui/ and every
// deep link answer the page, assets are served by type with gzip, ETag/304
// and immutable caching, a missing asset is 404, every reply says the
// Content-Security-Policy and nosniff, no token is needed for the files,
// --no-ui turns it off and a --ui-dir without a page refuses to start.
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

constexpr char kPage[] =
    "<!doctype html><html><head><title>runledger</title>"
    "<script type=\"module\" src=\"/ui/assets/app-7QK2M4XA.js\"></script></head>"
    "<body><main id=\"app\"></main></body></html>\n";
const std::string kScript = "export const rows = [" + std::string(4000, '1') + "];\n";
constexpr char kStyle[] = "main { color: #222; }\n";
constexpr char kScriptPath[] = "/ui/assets/app-7QK2M4XA.js";

void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// A header's value in a raw response ("" when absent), name matched case-blind.
std::string raw_header(const std::string& response, const std::string& name) {
  const std::string lower = lowercase(response.substr(0, response.find("\r\n\r\n")));
  const std::string key = "\r\n" + lowercase(name) + ": ";
  const size_t at = lower.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  return response.substr(start, response.find("\r\n", start) - start);
}

std::string gunzip(const std::string& bytes) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return "";
  std::string out(1 << 20, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  out.resize(z.total_out);
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "";
}

void expect_console_headers(const ApiReply& r) {
  EXPECT_EQ(r.header("Content-Security-Policy"),
            "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  EXPECT_EQ(r.header("X-Content-Type-Options"), "nosniff");
}

class ConsoleTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    write_file(ui_.path() + "/index.html", kPage);
    write_file(ui_.path() + "/assets/app-7QK2M4XA.js", kScript);
    write_file(ui_.path() + "/assets/app-P3ZQ8B2C.css", kStyle);
    write_file(ui_.path() + "/assets/notes-5X7Y2Z1W.exe", "not a type the console serves");
    return {"--ui-dir", ui_.path()};
  }
  std::string raw_get(const std::string& path, const std::string& headers = "") {
    return round_trip(server().port(),
                      request_head("GET", path, headers + "Connection: close\r\n"));
  }
  TempDir ui_;
};

TEST_F(ConsoleTest, EveryPathOutsideAssetsAnswersThePage) {
  for (const std::string path : {"/ui/", "/ui", "/ui/jobs", "/ui/jobs/j-1?as_of=12",
                                 "/ui/targets/shop-a%2Forders", "/ui/events/42", "/ui/holds/h1"}) {
    ApiReply r = client().get(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, kPage) << path;
    EXPECT_EQ(r.header("Content-Type"), "text/html; charset=utf-8") << path;
    EXPECT_EQ(r.header("Cache-Control"), "no-cache") << path;
    EXPECT_FALSE(r.header("ETag").empty()) << path;
    expect_console_headers(r);
  }
}

TEST_F(ConsoleTest, AssetsAreServedByTypeAndCachedForever) {
  ApiReply js = client().get(kScriptPath);
  ApiReply css = client().get("/ui/assets/app-P3ZQ8B2C.css");

  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.body, kScript);
  EXPECT_EQ(js.header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.header("Cache-Control"), "public, max-age=31536000, immutable");
  expect_console_headers(js);
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.body, kStyle);
  EXPECT_EQ(css.header("Content-Type"), "text/css; charset=utf-8");
}

TEST_F(ConsoleTest, AMissingAssetIsNotFoundAndNeverThePage) {
  for (const std::string path :
       {"/ui/assets/app-00000000.js", "/ui/assets/", "/ui/assets/notes-5X7Y2Z1W.exe"}) {
    ApiReply r = client().get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.json.value("code", ""), "not_found") << path;
    expect_console_headers(r);
  }
}

TEST_F(ConsoleTest, APathLeavingTheFolderIsNotFound) {
  for (const std::string path : {"/ui/assets/../index.html", "/ui/assets/../../../etc/passwd",
                                 "/ui/assets/%2e%2e/index.html", "/ui/assets/./app-7QK2M4XA.js"}) {
    const std::string response = raw_get(path);
    EXPECT_EQ(status_of(response), 404) << path << "\n" << response;
    EXPECT_EQ(response.find("<!doctype"), std::string::npos) << path;
    EXPECT_EQ(response.find("root:"), std::string::npos) << path;
  }
}

TEST_F(ConsoleTest, AKnownETagIsAnsweredNotModifiedWithoutABody) {
  ApiReply first = client().get(kScriptPath);
  const std::string etag = first.header("ETag");
  ASSERT_FALSE(etag.empty());

  // A 304 has no body and says no length (RFC 9110 8.6); the test's client
  // reads a reply without a length to its close, so it asks for the close.
  ApiReply again = client().get(kScriptPath, {{"If-None-Match", etag}, {"Connection", "close"}});
  ApiReply weak = client().get(
      kScriptPath, {{"If-None-Match", "\"other\", W/" + etag}, {"Connection", "close"}});
  ApiReply other = client().get(kScriptPath, {{"If-None-Match", "\"other\""}});

  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.header("ETag"), etag);
  EXPECT_EQ(again.header("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(weak.status, 304);
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.body, kScript);
}

TEST_F(ConsoleTest, GzipIsSentWhenTakenAndSavesBytes) {
  const std::string zipped = raw_get(kScriptPath, "Accept-Encoding: gzip, deflate, br\r\n");
  const std::string refused = raw_get(kScriptPath, "Accept-Encoding: gzip;q=0, identity\r\n");
  const std::string plain = raw_get(kScriptPath);

  ASSERT_EQ(status_of(zipped), 200) << zipped;
  EXPECT_EQ(raw_header(zipped, "Content-Encoding"), "gzip");
  EXPECT_EQ(raw_header(zipped, "Vary"), "Accept-Encoding");
  EXPECT_LT(body_of(zipped).size(), kScript.size());
  EXPECT_EQ(gunzip(body_of(zipped)), kScript);
  // The two forms are different representations: different tags.
  EXPECT_NE(raw_header(zipped, "ETag"), raw_header(plain, "ETag"));
  EXPECT_EQ(raw_header(refused, "Content-Encoding"), "");
  EXPECT_EQ(body_of(refused), kScript);
  EXPECT_EQ(body_of(plain), kScript);
}

TEST_F(ConsoleTest, HeadHasNoBodyAndOtherMethodsAreNotAllowed) {
  const std::string head =
      round_trip(server().port(), request_head("HEAD", "/ui/jobs", "Connection: close\r\n"));
  ApiReply post = client().post("/ui/jobs", nlohmann::json::object());

  EXPECT_EQ(status_of(head), 200) << head;
  EXPECT_EQ(raw_header(head, "Content-Length"), std::to_string(std::string(kPage).size()));
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("Allow"), "GET, HEAD");
}

TEST_F(ConsoleTest, AChangedFileInTheFolderIsServedWithoutARestart) {
  const std::string before = client().get("/ui/").header("ETag");
  write_file(ui_.path() + "/index.html", "<!doctype html><title>changed</title>\n");

  ApiReply after = client().get("/ui/", {{"If-None-Match", before}});

  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(after.body, "<!doctype html><title>changed</title>\n");
  EXPECT_NE(after.header("ETag"), before);
}

class ConsoleAuthTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    write_file(ui_.path() + "/index.html", kPage);
    write_file(tokens_.path() + "/tokens", "ana reader reader-token-0123456789abcdef\n");
    std::filesystem::permissions(
        tokens_.path() + "/tokens",
        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    return {"--ui-dir", ui_.path(), "--auth-tokens", tokens_.path() + "/tokens"};
  }
  TempDir ui_;
  TempDir tokens_;
};

// The page holds no data and asks for the token itself: it loads without
// one, while the API still wants one.
TEST_F(ConsoleAuthTest, ThePageNeedsNoTokenButTheApiStillDoes) {
  EXPECT_EQ(client().get("/ui/jobs/j-1").status, 200);
  EXPECT_EQ(client().get("/v1/jobs").status, 401);
}

class NoConsoleTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override { return {"--no-ui"}; }
};

TEST_F(NoConsoleTest, NoUiAnswersNotFoundOnEveryConsolePath) {
  for (const std::string path : {"/ui/", "/ui/jobs", kScriptPath}) {
    ApiReply r = client().get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.json.value("code", ""), "not_found") << path;
  }
  EXPECT_EQ(client().get("/v1/health").status, 200);
}

// By default the server answers the console built into it: the committed
// ui/dist, byte for byte.
TEST_F(ServerTest, TheBuiltInConsoleIsTheCommittedBuild) {
  const std::string dist = source_path("ui/dist");
  std::ifstream page_file(dist + "/index.html", std::ios::binary);
  ASSERT_TRUE(page_file) << "no " << dist << "/index.html";
  const std::string page((std::istreambuf_iterator<char>(page_file)),
                         std::istreambuf_iterator<char>());
  ApiReply r = client().get("/ui/jobs");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, page);
  expect_console_headers(r);
  for (const auto& entry : std::filesystem::directory_iterator(dist + "/assets")) {
    std::ifstream asset(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(asset)),
                            std::istreambuf_iterator<char>());
    ApiReply a = client().get("/ui/assets/" + entry.path().filename().string());
    EXPECT_EQ(a.status, 200) << entry.path();
    EXPECT_EQ(a.body, bytes) << entry.path();
  }
}

// What the console asks to learn whether it may show actions.
TEST_F(ServerTest, WhoamiWithoutAuthenticationIsTheAnonymousOperator) {
  ApiReply r = client().get("/v1/whoami");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json, nlohmann::json(
                        {{"name", "anonymous"}, {"role", "operator"}, {"authenticated", false}}));
}

TEST(ConsoleStartTest, AUiDirWithoutAPageRefusesToStart) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/ui/assets");
  ServerProcess server(dir.path() + "/data", {"--ui-dir", dir.path() + "/ui"});
  const std::optional<int> code = server.wait_exit(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2) << server.log();
  EXPECT_NE(server.log().find("index.html"), std::string::npos) << server.log();
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/data"));
}

}  // namespace
}  // namespace runledger::testing
